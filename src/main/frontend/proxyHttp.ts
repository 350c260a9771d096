import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Dispatcher } from 'undici';
import { forwardResponseHeaders } from './forwardHeaders';
import { sendPage } from './pages';

/**
 * Backend URL for a request: the target's path with the request's path and query appended.
 * Dot segments (also %2e-encoded) are resolved first, so a request cannot climb above the
 * target's base path.
 */
export function backendUrl(target: URL, requestPath: string): URL {
  const relative = new URL(requestPath.replace(/^[/\\]+/, '/'), 'http://placeholder.invalid');
  const url = new URL(target.origin);
  url.pathname = `${target.pathname.replace(/\/+$/, '')}${relative.pathname}`;
  url.search = relative.search || target.search;
  return url;
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
}

/** Streams the request to the backend and the response back; 502 page when the backend fails. */
export async function proxyHttp(
  req: IncomingMessage,
  res: ServerResponse,
  opts: { dispatcher: Dispatcher; target: URL; path: string; headers: string[]; setCookies: string[] },
): Promise<void> {
  const url = backendUrl(opts.target, opts.path);
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  let upstream: Dispatcher.ResponseData;
  try {
    upstream = await opts.dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: opts.headers,
      body: hasBody(req) ? req : null,
      signal: abort.signal,
      headersTimeout: 300_000,
      bodyTimeout: 0, // streaming responses (SSE, long downloads) may idle
    });
  } catch (err) {
    if (!res.headersSent && !res.destroyed) {
      sendPage(res, 502, 'Bad gateway', ['The shared service is not reachable right now. Try again in a moment.']);
    }
    throw err;
  }
  const headers = forwardResponseHeaders(upstream.headers);
  if (opts.setCookies.length) {
    const existing = headers['set-cookie'];
    headers['set-cookie'] = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), ...opts.setCookies];
  }
  res.writeHead(upstream.statusCode, headers);
  await pipeline(upstream.body, res);
}
