/**
 * Where OpenZiti's controller sends a request path for older clients: the C SDK's legacy login and identities enrolled
 * with a bare `ztAPI` (https://host:port) use the Client API without its base. A path outside `/edge`, `/fabric`,
 * `/.well-known` and `/oidc` (the OIDC provider's, which owns every path starting so) is the Client API's, and
 * `/edge/v1` is its old name; `/` and `/version` keep their own routes.
 */
export function clientApiUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (path === '/edge/v1' || path.startsWith('/edge/v1/')) return CLIENT_BASE + url.slice('/edge/v1'.length);
  if (path.startsWith('/edge') || path.startsWith('/fabric') || path.startsWith('/.well-known') || path.startsWith('/oidc')) return url;
  if (path === '/' || path === '/version') return url;
  return CLIENT_BASE + url;
}

const CLIENT_BASE = '/edge/client/v1';
