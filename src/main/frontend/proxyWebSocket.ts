import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { backendUrl } from './proxyHttp';

const SAFE_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FRAMING = new Set(['connection', 'transfer-encoding', 'keep-alive', 'content-length', 'upgrade']);

/** Writes a complete HTTP/1.1 response on a raw socket (upgrade requests have no ServerResponse). */
export function writeSocketResponse(socket: Duplex, status: number, headers: Record<string, string>, body = ''): void {
  if (socket.destroyed) return;
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`];
  const all = { ...headers, 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' };
  for (const [k, v] of Object.entries(all)) lines.push(`${k}: ${v}`);
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

function headerBlock(rawHeaders: string[], extra: Array<[string, string]>): string {
  const lines: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) lines.push(`${rawHeaders[i]}: ${rawHeaders[i + 1]}`);
  for (const [k, v] of extra) lines.push(`${k}: ${v}`);
  return lines.join('\r\n');
}

/**
 * Completes a client's upgrade (WebSocket) by repeating it to the backend and splicing the two
 * sockets together. A backend that refuses the upgrade has its response relayed as is.
 */
export function proxyUpgrade(
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  opts: {
    target: URL;
    path: string;
    headers: string[];
    setCookies: string[];
    onUpstreamSocket: (s: Duplex) => void;
    /** the connection to send the upgrade on (an overlay conn) instead of a TCP/TLS connection to the target */
    createConnection?: () => Duplex;
  },
): Promise<void> {
  return new Promise((resolve) => {
    const url = backendUrl(opts.target, opts.path);
    const secure = url.protocol === 'https:' || url.protocol === 'wss:';
    const request = (secure ? https : http).request({
      protocol: secure ? 'https:' : 'http:',
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      method: req.method,
      headers: ['Host', url.host, ...opts.headers],
      timeout: 30_000,
      // no agent: a connection of its own (http uses createConnection only when there is no agent at all)
      ...(opts.createConnection
        ? { createConnection: opts.createConnection as unknown as http.RequestOptions['createConnection'] }
        : { agent: false }),
    });
    let answered = false;
    const fail = () => {
      if (answered) client.destroy();
      else writeSocketResponse(client, 502, { 'Content-Type': 'text/plain; charset=utf-8' }, 'The shared service is not reachable right now.\n');
      resolve();
    };
    client.on('error', () => request.destroy());
    request.on('timeout', () => request.destroy(new Error('backend upgrade timed out')));
    request.on('error', fail);
    request.on('upgrade', (upRes, upstream, upHead) => {
      answered = true;
      opts.onUpstreamSocket(upstream);
      // The handshake timeout must not carry over to the (possibly long idle) tunnel.
      (upstream as Socket).setTimeout(0);
      if (client.destroyed) {
        upstream.destroy();
        return resolve();
      }
      const status = upRes.statusCode ?? 101;
      const extra = opts.setCookies.map((c): [string, string] => ['Set-Cookie', c]);
      client.write(`HTTP/1.1 ${status} ${upRes.statusMessage || STATUS_CODES[status] || ''}\r\n${headerBlock(upRes.rawHeaders, extra)}\r\n\r\n`);
      if (upHead.length) client.write(upHead);
      if (head.length) upstream.write(head);
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.pipe(client);
      client.pipe(upstream);
      resolve();
    });
    request.on('response', (upRes) => {
      answered = true;
      // The backend answered without upgrading: relay its status, headers (minus framing) and body.
      const raw: string[] = [];
      for (let i = 0; i + 1 < upRes.rawHeaders.length; i += 2) {
        const name = upRes.rawHeaders[i].toLowerCase();
        if (FRAMING.has(name) || !SAFE_TOKEN.test(upRes.rawHeaders[i])) continue;
        raw.push(upRes.rawHeaders[i], upRes.rawHeaders[i + 1]);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      upRes.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= 1 << 20) chunks.push(c);
      });
      upRes.on('error', fail);
      upRes.on('end', () => {
        const body = Buffer.concat(chunks);
        const status = upRes.statusCode ?? 502;
        const headers = headerBlock(raw, [
          ['Content-Length', String(body.length)],
          ['Connection', 'close'],
        ]);
        if (!client.destroyed) {
          client.write(`HTTP/1.1 ${status} ${upRes.statusMessage || STATUS_CODES[status] || ''}\r\n${headers}\r\n\r\n`);
          client.end(body);
        }
        resolve();
      });
    });
    request.end();
  });
}
