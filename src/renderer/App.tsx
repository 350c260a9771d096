import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { Layout } from './components/Layout';
import { ErrorBox, Page, Spinner } from './components/Status';
import { LoginPage, SecondFactorPage, SIGNED_OUT_KEY } from './pages/LoginPage';
import { useConsoleResources } from './lib/describe';
import { genericPage, PAGES } from './pages/registry';
import { Link, useSegments } from './router';
import { useTRPC } from './trpc';

/** Sign-in gate, then the page the hash names inside the layout. */
export function App() {
  const trpc = useTRPC();
  const me = useQuery(trpc.session.me.queryOptions(undefined, { staleTime: 60_000 }));
  const segments = useSegments();
  const signedIn = !!me.data && !me.data.partial;
  // the server's console types: pages for those without a spec of their own are generated
  const names = useConsoleResources(signedIn);
  const wasSignedIn = useRef(false);
  useEffect(() => {
    if (me.data) wasSignedIn.current = true;
  }, [me.data]);

  if (me.isPending) {
    return (
      <main className="login" id="main">
        <Spinner label="Loading the console…" />
      </main>
    );
  }
  if (me.error) {
    return (
      <main className="login" id="main">
        <ErrorBox error={me.error} retry={() => me.refetch()} title="The console is not reachable:" />
      </main>
    );
  }
  if (!me.data) return <LoginPage sessionEnded={wasSignedIn.current && !sessionStorage.getItem(SIGNED_OUT_KEY)} />;
  if (me.data.partial) return <SecondFactorPage me={me.data} />;
  const page = PAGES.find((p) => p.id === (segments[0] ?? 'dashboard'));
  const generated = page ? undefined : genericPage(segments, names.data ?? []);
  return (
    <Layout me={me.data} pages={PAGES} more={names.data ?? []}>
      {page ? (
        page.render(segments.slice(1))
      ) : generated ? (
        generated
      ) : names.isPending ? (
        <Spinner />
      ) : (
        <Page title="Not found">
          <p>
            There is no such page. <Link to="/">Go to the dashboard</Link>.
          </p>
        </Page>
      )}
    </Layout>
  );
}
