import { createServer } from 'node:https';
import { readFileSync } from 'node:fs';

/**
 * The floor: a bare node:https server with the controller's own certificate that answers every path with
 * pre-recorded bytes. Whatever Weft adds on top of this is Weft's own cost.
 * argv: <responses.json> where the file maps path -> {status, contentType, body} and holds {key, cert}.
 */
const spec = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as {
  key: string;
  cert: string;
  responses: Record<string, { status: number; contentType: string; body: string }>;
};
const server = createServer({ key: spec.key, cert: spec.cert }, (req, res) => {
  const r = spec.responses[req.url ?? ''] ?? { status: 404, contentType: 'text/plain', body: 'not recorded' };
  const body = Buffer.from(r.body);
  res.writeHead(r.status, { 'content-type': r.contentType, 'content-length': body.length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ origin: `https://127.0.0.1:${(server.address() as { port: number }).port}` }) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
