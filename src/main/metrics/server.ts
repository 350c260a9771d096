import { createServer, type Server } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { listenOn } from '../listen';
import { splitHostPort } from '../config';
import type { WeftMetrics } from './metrics';

export const DEFAULT_METRICS_ADDRESS = '127.0.0.1:1282';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * `GET /metrics` in Prometheus' text format on a listener of its own (plain HTTP: loopback by default; elsewhere only
 * with a bearer token, checked in constant time). Nothing else is served.
 */
export async function startMetricsServer(opts: {
  metrics: WeftMetrics;
  address?: string;
  bearerToken?: string;
  log: Logger;
}): Promise<MetricsServer> {
  const { host, port } = splitHostPort(opts.address ?? DEFAULT_METRICS_ADDRESS);
  const expected = opts.bearerToken && Buffer.from(`Bearer ${opts.bearerToken}`);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at /metrics\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end();
    if (expected) {
      const given = Buffer.from(req.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return void res.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'text/plain' }).end('Unauthorized\n');
      }
    }
    opts.metrics.text().then(
      (text) =>
        res.writeHead(200, { 'content-type': opts.metrics.contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => {
        opts.log.error({ err }, 'metrics: scrape failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  const bound = await listenOn(
    server,
    host,
    port,
    opts.address
      ? undefined
      : { onFallback: () => opts.log.warn({ address: DEFAULT_METRICS_ADDRESS }, 'metrics: the default address is in use; taking a free port') },
  );
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${bound}/metrics`,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
