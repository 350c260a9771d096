import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import { CSRF_HEADER, CSRF_HEADER_VALUE } from '../shared/console';
import type { AppRouter } from '../shared/router';

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

/**
 * The console's tRPC client: same-origin `/trpc`. Queries and mutations carry the header the server requires on
 * every call (CSRF); subscriptions go over Server-Sent Events (the browser's EventSource, which sends the session
 * cookie of its own origin but can send no header: the server lets such a GET open a subscription and nothing
 * else, see console/server.ts). On a dropped stream the EventSource reconnects with the last event's id.
 */
export function createClient() {
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({ url: '/trpc' }),
        false: httpBatchLink({ url: '/trpc', maxURLLength: 4000, headers: () => ({ [CSRF_HEADER]: CSRF_HEADER_VALUE }) }),
      }),
    ],
  });
}
