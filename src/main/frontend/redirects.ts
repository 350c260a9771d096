const SHARE_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Share token for a Host header value ("<token>.<share_domain>[:port]"), or undefined. */
export function shareTokenFromHost(hostHeader: string | undefined, shareDomain: string): string | undefined {
  if (!hostHeader) return undefined;
  const host = hostHeader.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  const suffix = `.${shareDomain.toLowerCase()}`;
  if (!host.endsWith(suffix)) return undefined;
  const label = host.slice(0, -suffix.length);
  return SHARE_LABEL.test(label) ? label : undefined;
}

/** The host name of a Host header value: lowercase, without port or trailing dot. */
export function hostName(hostHeader: string | undefined): string {
  return String(hostHeader ?? '')
    .toLowerCase()
    .replace(/:\d+$/, '')
    .replace(/\.$/, '');
}

/** Parses an absolute http(s) URL from untrusted input, refusing the usual browser-normalisation tricks. */
export function parseStrictHttpUrl(raw: string): URL | undefined {
  // Browsers treat "\" like "/" and drop tabs/newlines, which turns harmless-looking text into
  // another host; such input is refused outright.
  if (!/^https?:\/\/[^\\/\s]/i.test(raw) || /[\\\s\u0000-\u001f\u007f]/.test(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return undefined;
  return url;
}

/** The original URL stored in a login state must be on the very share the state names. */
export function isUrlOfShare(raw: string, shareDomain: string, token: string): boolean {
  const url = parseStrictHttpUrl(raw);
  return url !== undefined && shareTokenFromHost(url.host, shareDomain) === token;
}

/** A URL at one of the share's hosts: `<token>.<share domain>` or one of its custom domains. */
export function isUrlOfShareHost(raw: string, shareDomain: string, share: { token: string; domains?: string[] }): boolean {
  const url = parseStrictHttpUrl(raw);
  if (!url) return false;
  return shareTokenFromHost(url.host, shareDomain) === share.token || (share.domains ?? []).includes(hostName(url.host));
}

/** Logout may only send the browser to a share or back to the frontend's own endpoint (under its path). */
export function isAllowedLogoutRedirect(raw: string, shareDomain: string, endpointUrl: string): boolean {
  const url = parseStrictHttpUrl(raw);
  if (!url) return false;
  if (shareTokenFromHost(url.host, shareDomain) !== undefined) return true;
  const endpoint = new URL(endpointUrl);
  const base = endpoint.pathname.replace(/\/+$/, '');
  return url.origin === endpoint.origin && (url.pathname === base || url.pathname.startsWith(`${base}/`));
}
