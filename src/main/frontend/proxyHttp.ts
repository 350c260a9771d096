import type { IncomingMessage, ServerResponse } from 'node:http';
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
const PLAIN_TARGET =
  /^\/(?:[\w\-~!$&()*+,;=:@%][\w\-~!$&()*+,;=:@%.]*(?:\/[\w\-~!$&()*+,;=:@%][\w\-~!$&()*+,;=:@%.]*)*\/?)?(?:\?[\w\-~!$&()*+,;=:@%./?]+)?$/;
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

export interface ProxyHttpOptions {
  dispatcher: Dispatcher;
  target: URL;
  path: string;
  headers: string[];
  setCookies: string[];
}

/**
 * Streams the request to the backend and the response back; 502 page when the backend fails before answering.
 * Resolves when the response is closed (done or abandoned by the client); rejects on a backend failure.
 */
export function proxyHttp(req: IncomingMessage, res: ServerResponse, opts: ProxyHttpOptions): Promise<void> {
  const backend = backendRequestTarget(opts.target, opts.path);
  return new Promise<void>((resolve, reject) => {
    const handler = new ResponseRelay(res, opts.setCookies, reject);
    res.once('close', () => {
      if (!res.writableFinished) handler.clientGone();
      resolve();
    });
    opts.dispatcher.dispatch(
      {
        origin: backend.origin,
        path: backend.path,
        method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
        headers: opts.headers,
        body: hasBody(req) ? req : null,
        headersTimeout: 300_000,
        bodyTimeout: 0, // streaming responses (SSE, long downloads) may idle
      },
      handler,
    );
  });
}

/**
 * Relays one backend response into a ServerResponse through undici's dispatch handler interface: no body stream,
 * pipe or promise per chunk, with backpressure (the backend is paused while the client's socket is full).
 */
class ResponseRelay implements Dispatcher.DispatchHandler {
  private controller?: Dispatcher.DispatchController;
  private gone = false;
  private waitingForDrain = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly setCookies: string[],
    private readonly fail: (err: Error) => void,
  ) {}

  clientGone(): void {
    this.gone = true;
    this.controller?.abort(new Error('the client closed the connection'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.gone) controller.abort(new Error('the client closed the connection'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    upstreamHeaders: Record<string, string | string[] | undefined>,
  ): void {
    const headers = forwardResponseHeaders(upstreamHeaders);
    if (this.setCookies.length) {
      const existing = headers['set-cookie'];
      headers['set-cookie'] = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), ...this.setCookies];
    }
    this.res.writeHead(statusCode, headers);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.res.write(chunk) || this.waitingForDrain) return;
    this.waitingForDrain = true;
    controller.pause();
    this.res.once('drain', () => {
      this.waitingForDrain = false;
      controller.resume();
    });
  }

  onResponseEnd(): void {
    this.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.gone) return; // our own abort: nobody is waiting for an answer
    if (!this.res.headersSent && !this.res.destroyed) {
      sendPage(this.res, 502, 'Bad gateway', ['The shared service is not reachable right now. Try again in a moment.']);
    } else {
      this.res.destroy();
    }
    this.fail(err);
  }
}
