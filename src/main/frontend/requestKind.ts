import type { IncomingHttpHeaders } from 'node:http';

/** Highest q-value the Accept header gives any of `types`, listed by name (wildcards do not count); 0 if none. */
function listedQuality(accept: string, types: string[]): number {
  let best = 0;
  for (const part of accept.split(',')) {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    if (!types.includes(range.trim())) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (Number.isFinite(q)) best = Math.max(best, q);
  }
  return best;
}

/**
 * True for requests a login redirect would not help: anything but a top-level navigation (scripts, API
 * clients). They get 401 JSON; navigations get the provider redirect.
 *
 * Browsers say what a request is in Sec-Fetch-Mode, but send it only to https (and localhost) origins. Where it
 * is absent, a navigation is recognised by its Accept header, which names text/html (fetch() and XHR accept
 * any type unless told otherwise), not below application/json.
 */
export function isApiRequest(headers: IncomingHttpHeaders): boolean {
  if (String(headers['x-requested-with'] ?? '').toLowerCase() === 'xmlhttprequest') return true;
  const mode = String(headers['sec-fetch-mode'] ?? '').toLowerCase();
  if (mode) return mode !== 'navigate';
  const accept = String(headers.accept ?? '');
  const html = listedQuality(accept, ['text/html', 'application/xhtml+xml']);
  return html === 0 || listedQuality(accept, ['application/json']) > html;
}
