import { useSyncExternalStore, type AnchorHTMLAttributes, type ReactNode } from 'react';

/**
 * Hash routing (`#/identities/abc`): the same bundle works from the console server and inside Electron, deep
 * links survive reloads, and in-page navigation never leaves the console origin.
 */
function subscribe(onChange: () => void) {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

const currentPath = () => decodeURI(window.location.hash.replace(/^#/, '')) || '/';

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
