import { createServer } from 'node:http';

/** The backend of the frontend bench: a bare node:http server answering every request with the same small JSON. */
const body = Buffer.from(JSON.stringify({ ok: true, message: 'hello from the backend', padding: 'x'.repeat(200) }));
const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` }) + '\n');
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
