import { createServer, type IncomingMessage } from 'node:http';
import { Agent, type Dispatcher } from 'undici';

/**
 * The comparison point of the frontend bench: the least a Node reverse proxy does — node:http in, undici out,
 * hop-by-hop headers dropped, bodies streamed with pipe() (as Weft does) — with no share lookup, no session and
 * no logging. argv: <backend origin>
 */
const backend = process.argv[2]!;
const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

function requestHeaders(req: IncomingMessage): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (!HOP_BY_HOP.has(req.rawHeaders[i]!.toLowerCase())) out.push(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  }
  return out;
}

const server = createServer(async (req, res) => {
  try {
    const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
    const upstream = await dispatcher.request({
      origin: backend,
      path: req.url ?? '/',
      method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: requestHeaders(req),
      body: hasBody ? req : null,
    });
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(upstream.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
    res.writeHead(upstream.statusCode, headers);
    upstream.body.once('error', () => res.destroy());
    res.once('close', () => upstream.body.destroy());
    upstream.body.pipe(res);
  } catch {
    if (!res.headersSent) res.writeHead(502).end();
    else res.destroy();
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` }) + '\n');
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
