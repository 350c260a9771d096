import type { ServerResponse } from 'node:http';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

export interface PageLink {
  href: string;
  label: string;
}

/** A small self-contained HTML page; every dynamic part is escaped here. */
export function renderPage(title: string, paragraphs: string[], links: PageLink[] = []): string {
  const body = paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n');
  const nav = links.map((l) => `<p><a href="${escapeHtml(l.href)}">${escapeHtml(l.label)}</a></p>`).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}</style>
</head><body><h1>${escapeHtml(title)}</h1>
${body}
${nav}
</body></html>
`;
}

const SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

export function sendPage(
  res: ServerResponse,
  status: number,
  title: string,
  paragraphs: string[],
  options: { links?: PageLink[]; setCookies?: string[] } = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const html = renderPage(title, paragraphs, options.links);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(html),
    ...(options.setCookies?.length ? { 'Set-Cookie': options.setCookies } : {}),
  });
  res.end(res.req.method === 'HEAD' ? undefined : html);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string | string[]> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...extraHeaders,
  });
  res.end(res.req.method === 'HEAD' ? undefined : json);
}

export function sendRedirect(res: ServerResponse, location: string, setCookies: string[] = []): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(302, {
    Location: location,
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'Content-Length': 0,
    ...(setCookies.length ? { 'Set-Cookie': setCookies } : {}),
  });
  res.end();
}
