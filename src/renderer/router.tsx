import { useMemo, useSyncExternalStore, type AnchorHTMLAttributes, type ReactNode } from 'react';

/**
 * Hash routing (`#/identities/abc`): the same bundle works from the console server and inside Electron, deep
 * links survive reloads, and in-page navigation never leaves the console origin.
 */
function subscribe(onChange: () => void) {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

// the path of `#/identities?filter=…` is `/identities`; its query is a page's own state (see useHashQuery)
const currentPath = () => decodeURI(window.location.hash.replace(/^#/, '').replace(/\?.*$/, '')) || '/';

export function useLocationPath(): string {
  return useSyncExternalStore(subscribe, currentPath);
}

/** Path segments, e.g. ["identities", "abc"]. */
export function useSegments(): string[] {
  return useLocationPath().split('/').filter(Boolean).map(decodeURIComponent);
}

export function navigate(path: string): void {
  window.location.hash = path;
}

export const href = (path: string) => `#${path}`;

export function Link({ to, children, ...rest }: { to: string; children: ReactNode } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  return (
    <a href={href(to)} {...rest}>
      {children}
    </a>
  );
}

const currentQuery = () => window.location.hash.match(/\?(.*)$/)?.[1] ?? '';

/** The query of the hash (`#/identities?sort=name` → `sort=name`): a page's state that reloads and Back restore. */
export function useHashQuery(): URLSearchParams {
  const query = useSyncExternalStore(subscribe, currentQuery);
  return useMemo(() => new URLSearchParams(query), [query]);
}

/** Sets the hash query of the current page as a new history entry (Back returns to the previous state). */
export function setHashQuery(params: URLSearchParams): void {
  const query = params.toString();
  if (query === currentQuery()) return;
  window.location.hash = `${window.location.hash.replace(/^#/, '').replace(/\?.*$/, '') || '/'}${query ? `?${query}` : ''}`;
}
