import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { isUnauthorized } from './lib/errors';
import { applyTheme, storedTheme } from './lib/theme';
import { createClient, TRPCProvider } from './trpc';
import './styles.css';

// An UNAUTHORIZED answer may mean the session expired: re-ask who is signed in (the sign-in page follows if nobody).
const onError = (error: unknown) => {
  if (isUnauthorized(error)) void queryClient.invalidateQueries({ queryKey: [['session', 'me']] });
};
const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: {
    queries: {
      refetchOnWindowFocus: false,
      retry: (count, error) =>
        count < 2 && !/^(BAD_REQUEST|UNAUTHORIZED|FORBIDDEN|NOT_FOUND|CONFLICT)$/.test(String((error as { data?: { code?: string } }).data?.code)),
    },
  },
});
const trpcClient = createClient();
applyTheme(storedTheme());

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        <App />
      </TRPCProvider>
    </QueryClientProvider>
  </StrictMode>,
);
