import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import { CSRF_HEADER, CSRF_HEADER_VALUE } from '../shared/console';
import type { AppRouter } from '../shared/router';

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

/** The console's tRPC client: same-origin `/trpc`, with the header the server requires on every call (CSRF). */
export function createClient() {
  return createTRPCClient<AppRouter>({
    links: [httpBatchLink({ url: '/trpc', maxURLLength: 4000, headers: () => ({ [CSRF_HEADER]: CSRF_HEADER_VALUE }) })],
  });
}
