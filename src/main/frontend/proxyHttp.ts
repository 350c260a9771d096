import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
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

// A request target made only of these (non-empty segments not starting with ".", no "%2e", "%" only before two hex
// digits, a non-empty query) comes out of URL parsing unchanged, so the common case needs no URL objects.
const PLAIN_TARGET = /^\/(?:[\w\-~!$&()*+,;=:@%][\w\-~!$&()*+,;=:@%.]*(?:\/[\w\-~!$&()*+,;=:@%][\w\-~!$&()*+,;=:@%.]*)*\/?)?(?:\?[\w\-~!$&()*+,;=:@%./?]+)?$/;
const ODD_PERCENT = /%(?![0-9A-Fa-f]{2})|%2e/i;

/** Origin and path (with query) of the backend request; the same answer as backendUrl, faster for plain targets. */
export function backendRequestTarget(target: URL, requestPath: string): { origin: string; path: string } {
  if (PLAIN_TARGET.test(requestPath) && !ODD_PERCENT.test(requestPath)) {
    const q = requestPath.indexOf('?');
    const search = q < 0 ? target.search : requestPath.slice(q);
    return { origin: target.origin, path: `${target.pathname.replace(/\/+$/, '')}${q < 0 ? requestPath : requestPath.slice(0, q)}${search}` };
  }
  const url = backendUrl(target, requestPath);
  return { origin: url.origin, path: `${url.pathname}${url.search}` };
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
  const backend = backendRequestTarget(opts.target, opts.path);
  // undici accepts an EventEmitter as its abort signal; it is much cheaper than an AbortController per request.
  const abort = new EventEmitter();
  res.once('close', () => {
    if (!res.writableFinished) abort.emit('abort');
  });
  let upstream: Dispatcher.ResponseData;
  try {
    upstream = await opts.dispatcher.request({
      origin: backend.origin,
      path: backend.path,
      method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: opts.headers,
      body: hasBody(req) ? req : null,
      signal: abort,
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
  await pipeBody(upstream.body, res);
}

/**
 * Streams the backend's body into the response with backpressure, like stream.pipeline, without its per-call
 * AbortController and error object. Rejects when the backend fails mid-body; a client leaving early ends the
 * backend body and resolves.
 */
function pipeBody(body: Readable, res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => {
      res.off('close', onClose);
      res.destroy();
      reject(err);
    };
    const onClose = () => {
      body.off('error', onError);
      if (!res.writableFinished) body.destroy();
      resolve();
    };
    body.once('error', onError);
    res.once('close', onClose);
    body.pipe(res);
  });
}
