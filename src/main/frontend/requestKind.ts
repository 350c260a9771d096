import type { IncomingHttpHeaders } from 'node:http';

/** q-value the Accept header gives a media type (exact, type/* or * / *), 0 if not acceptable. */
function acceptQuality(accept: string, type: string): number {
  const [major] = type.split('/');
  let best = -1;
  let bestSpecificity = -1;
  for (const part of accept.split(',')) {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    const r = range.trim();
    const specificity = r === type ? 2 : r === `${major}/*` ? 1 : r === '*/*' ? 0 : -1;
    if (specificity < 0 || specificity < bestSpecificity) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    best = Number.isFinite(q) ? q : 0;
    bestSpecificity = specificity;
  }
  return Math.max(best, 0);
}

/**
 * True for requests a login redirect would not help: scripts (XHR/fetch) and API clients.
 * They get 401 JSON; top-level navigations get the provider redirect.
 */
export function isApiRequest(headers: IncomingHttpHeaders): boolean {
  if (String(headers['x-requested-with'] ?? '').toLowerCase() === 'xmlhttprequest') return true;
  const accept = String(headers.accept ?? '');
  const html = accept ? acceptQuality(accept, 'text/html') : 1;
  const json = accept ? acceptQuality(accept, 'application/json') : 0;
  const explicitHtml = /text\/html|application\/xhtml\+xml/i.test(accept);
  if (accept && json > html) return true;
  if (accept && json > 0 && !explicitHtml && /application\/json/i.test(accept)) return true;
  const mode = String(headers['sec-fetch-mode'] ?? '').toLowerCase();
  if (mode && mode !== 'navigate' && !explicitHtml) return true;
  return false;
}
