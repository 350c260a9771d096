// Weft's SDK against a scripted router on loopback TLS: the exact messages it sends and answers, as OpenZiti's
// routers expect them (hello with sequence -1 and header 1002, Result for pings and latency probes with header 128
// reflected, Bind headers, DialSuccess = ReplyFor + bind conn id + u32le(new conn id), Data/FIN, StateClosed).
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRootCa, createServerCertificate } from '../../src/main/core/pki';
import { Channel } from '../../src/main/router/channel/channel';
import {
  bool,
  ChannelType,
  decode,
  EdgeType,
  encode,
  getBool,
  getStr,
  getU32,
  Header,
  i32,
  message,
  str,
  u32,
  type Message,
} from '../../src/main/router/channel/wire';
import { EdgeClient, RouterLink, type EdgeConn } from '../../src/main/sdk';
import { clientCert } from '../support/pki';

interface Scripted {
  channel: Channel;
  received: Message[];
  data: Array<{ connId: number; flags: number; body: string }>;
  next(type: number): Promise<Message>;
}

let server: Server;
let url: string;
let ca: string;
let identity: { cert: string; key: string };
const peers: Scripted[] = [];
let onPeer: (p: Scripted) => void = () => undefined;

beforeAll(async () => {
  const root = await createRootCa({ commonName: 'Scripted Router CA' });
  const serverCert = await createServerCertificate({ commonName: 'router', issuer: root, ipAddresses: ['127.0.0.1'] });
  const client = await clientCert(root, { commonName: 'sdk-identity' });
  ca = root.certPem;
  identity = { cert: client.certPem, key: client.keyPem };
  server = createServer({ key: serverCert.keyPem, cert: serverCert.certPem, requestCert: true, rejectUnauthorized: false }, (socket: TLSSocket) => {
    const waiting: Array<() => void> = [];
    const wake = () => waiting.splice(0).forEach((w) => w());
    const peer: Scripted = {
      received: [],
      data: [],
      channel: new Channel(socket, 1 << 24, {
        onData: (frame) => {
          const m = decode(frame);
          peer.data.push({ connId: getU32(m.headers, Header.ConnId)!, flags: getU32(m.headers, Header.Flags) ?? 0, body: m.body.toString() });
          wake();
        },
        onMessage: (m) => {
          peer.received.push(m);
          wake();
        },
        onClose: () => wake(),
      }),
      async next(type) {
        for (;;) {
          const i = peer.received.findIndex((m) => m.contentType === type);
          if (i >= 0) return peer.received.splice(i, 1)[0]!;
          if (peer.channel.closed) throw new Error(`closed while waiting for message type ${type}`);
          await new Promise<void>((r) => waiting.push(r));
        }
      },
    };
    peers.push(peer);
    onPeer(peer);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `tls:127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const p of peers) p.channel.close();
  await new Promise<void>((r) => server.close(() => r()));
});

/** The next connection's hello, answered with a successful Result (and the given headers). */
async function accept(
  headers: Array<[number, Buffer]> = [
    [Header.Id, str('scripted')],
    [Header.SupportsBindSuccess, bool(true)],
  ],
): Promise<{ peer: Scripted; hello: Message }> {
  const peer = await new Promise<Scripted>((resolve) => (onPeer = resolve));
  const hello = await peer.next(ChannelType.Hello);
  peer.channel.result(hello, true, '', headers);
  return { peer, hello };
}

describe('the SDK on the wire', () => {
  it('hello: sequence -1, the API session in header 1002, the certificate CN as body; refused → the reason', async () => {
    const opening = RouterLink.open({ url, ca, ...identity, apiSessionToken: 'api-token', timeoutMs: 5000 });
    const peer = await new Promise<Scripted>((resolve) => (onPeer = resolve));
    const hello = await peer.next(ChannelType.Hello);
    expect(hello.sequence).toBe(-1);
    expect(getStr(hello.headers, Header.SessionToken)).toBe('api-token');
    expect(hello.body.toString()).toBe('sdk-identity');
    peer.channel.result(hello, true, '', [[Header.Id, str('scripted')]]);
    const link = await opening;
    expect(link.routerId).toBe('scripted');
    link.close();

    const failing = RouterLink.open({ url, ca, ...identity, apiSessionToken: 'nope', timeoutMs: 5000 }).catch((e: Error) => e);
    const other = await new Promise<Scripted>((resolve) => (onPeer = resolve));
    other.channel.result(await other.next(ChannelType.Hello), false, 'invalid or expired API session');
    expect(await failing).toMatchObject({ name: 'HelloRefusedError', reason: 'invalid or expired API session' });
  });

  it('pings and latency probes get a Result replying to them, with header 128 reflected', async () => {
    const opening = RouterLink.open({ url, ca, ...identity, apiSessionToken: 't', timeoutMs: 5000 });
    const { peer } = await accept();
    const link = await opening;
    const probe = message(ChannelType.Latency, [[Header.LatencyProbeTime, Buffer.from('0102030405060708', 'hex')]]);
    const latency = await peer.channel.request(probe, 5000);
    expect(latency.contentType).toBe(ChannelType.Result);
    expect(getBool(latency.headers, Header.ResultSuccess)).toBe(true);
    expect(latency.headers.get(Header.LatencyProbeTime)?.toString('hex')).toBe('0102030405060708');
    const ping = await peer.channel.request(message(ChannelType.Ping), 5000);
    expect([ping.contentType, getBool(ping.headers, Header.ResultSuccess)]).toEqual([ChannelType.Result, true]);
    link.close();
  });

  it('bind, an incoming dial answered with DialSuccess, data both ways with FIN, StateClosed, unbind', async () => {
    const client = new EdgeClient({ routerUrl: url, ca, ...identity, apiSession: () => 'api' });
    const listener = client.listen({ token: 'bind-token' });
    const { peer } = await accept();
    const bind = await peer.next(EdgeType.Bind);
    expect(bind.body.toString()).toBe('bind-token');
    const bindConnId = getU32(bind.headers, Header.ConnId)!;
    expect(bindConnId).toBeGreaterThan(0);
    expect(bindConnId).toBeLessThan(0x80000000);
    for (const h of [Header.RouterProvidedConnId, Header.SupportsInspect, Header.SupportsBindSuccess])
      expect(bind.headers.get(h)).toEqual(Buffer.from([1]));
    expect(getStr(bind.headers, Header.ListenerId)).toBe(listener.listenerId);
    peer.channel.reply(
      bind,
      message(EdgeType.StateConnected, [
        [Header.ConnId, u32(bindConnId)],
        [Header.RouterProvidedConnId, bool(true)],
      ]),
    );
    expect(listener.bound).toBe(false); // the router said it sends BindSuccess: not established before it
    peer.channel.send(message(EdgeType.BindSuccess, [[Header.ConnId, u32(bindConnId)]]));
    await once(listener, 'bound');

    // a Dial with the wrong token is refused; the right one accepted with the router's conn id
    const wrong = await peer.channel.request(
      message(
        EdgeType.Dial,
        [
          [Header.ConnId, u32(bindConnId)],
          [Header.RouterProvidedConnId, u32(0x80000001)],
        ],
        'other',
      ),
      5000,
    );
    expect([wrong.contentType, wrong.body.toString()]).toEqual([EdgeType.DialFailed, 'invalid token']);
    const accepted = once(listener, 'connection');
    const dial = message(
      EdgeType.Dial,
      [
        [Header.ConnId, u32(bindConnId)],
        [Header.RouterProvidedConnId, u32(0x80000002)],
        [Header.CallerId, str('caller')],
        [Header.CircuitId, str('c1')],
      ],
      'bind-token',
    );
    const answer = await peer.channel.request(dial, 5000);
    expect(answer.contentType).toBe(EdgeType.DialSuccess);
    expect(answer.headers.get(Header.ReplyFor)).toEqual(i32(dial.sequence));
    expect(getU32(answer.headers, Header.ConnId)).toBe(bindConnId);
    expect(answer.body).toEqual(u32(0x80000002));
    const [conn] = (await accepted) as [EdgeConn];
    expect(conn.info).toMatchObject({ kind: 'accept', callerId: 'caller', circuitId: 'c1' });

    // data in, with FIN: read to the end; data out, then our FIN
    const got: string[] = [];
    conn.on('data', (c: Buffer) => got.push(c.toString()));
    peer.channel.write(encode(message(EdgeType.Data, [[Header.ConnId, u32(0x80000002)]], 'ping')));
    peer.channel.write(
      encode(
        message(EdgeType.Data, [
          [Header.ConnId, u32(0x80000002)],
          [Header.Flags, u32(1)],
        ]),
      ),
    );
    await once(conn, 'end');
    expect(got.join('')).toBe('ping');
    conn.end('pong');
    await until(() => peer.data.length >= 2);
    expect(peer.data).toEqual([
      { connId: 0x80000002, flags: 0, body: 'pong' },
      { connId: 0x80000002, flags: 1, body: '' },
    ]);
    // both sides done: the conn closes and tells the router
    const closed = await peer.next(EdgeType.StateClosed);
    expect(getU32(closed.headers, Header.ConnId)).toBe(0x80000002);

    listener.close();
    const unbind = await peer.next(EdgeType.Unbind);
    expect([getU32(unbind.headers, Header.ConnId), unbind.body.toString()]).toEqual([bindConnId, 'bind-token']);
    client.close();
  });

  it("dial: Connect with a new conn id and the session token; a StateClosed reply is the refusal; a host key is refused; the router's StateClosed is EOF", async () => {
    const client = new EdgeClient({ routerUrl: url, ca, ...identity, apiSession: () => 'api' });
    const first = client.dial({ token: 'dial-token' }).catch((e: Error) => e);
    const { peer } = await accept();
    const connect = await peer.next(EdgeType.Connect);
    expect(connect.body.toString()).toBe('dial-token');
    const connId = getU32(connect.headers, Header.ConnId)!;
    expect(getStr(connect.headers, Header.ConnectionMarker)).toMatch(/^[\w-]{8}$/);
    peer.channel.reply(connect, message(EdgeType.StateClosed, [[Header.ConnId, u32(connId)]], 'service x has no terminators'));
    expect(await first).toMatchObject({ name: 'EdgeRefusedError', reason: 'service x has no terminators' });
    // as OpenZiti's SDKs do after a failed Connect, the id is given up with a StateClosed
    expect(getU32((await peer.next(EdgeType.StateClosed)).headers, Header.ConnId)).toBe(connId);

    const encrypted = client.dial({ token: 'dial-token' }).catch((e: Error) => e);
    const second = await peer.next(EdgeType.Connect);
    peer.channel.reply(
      second,
      message(EdgeType.StateConnected, [
        [Header.ConnId, second.headers.get(Header.ConnId)!],
        [Header.PublicKey, Buffer.alloc(32, 7)],
      ]),
    );
    expect(String(((await encrypted) as Error).message)).toMatch(/end-to-end encryption/);
    const dropped = await peer.next(EdgeType.StateClosed);
    expect(getU32(dropped.headers, Header.ConnId)).toBe(getU32(second.headers, Header.ConnId));

    const ok = client.dial({ token: 'dial-token' });
    const third = await peer.next(EdgeType.Connect);
    const id = getU32(third.headers, Header.ConnId)!;
    peer.channel.reply(
      third,
      message(EdgeType.StateConnected, [
        [Header.ConnId, u32(id)],
        [Header.CircuitId, str('circuit-3')],
      ]),
    );
    const conn = await ok;
    expect(conn.info.circuitId).toBe('circuit-3');
    // the router's StateClosed: what was sent before it is still read, then EOF
    const got: string[] = [];
    conn.on('data', (c: Buffer) => got.push(c.toString()));
    peer.channel.write(encode(message(EdgeType.Data, [[Header.ConnId, u32(id)]], 'last words')));
    peer.channel.send(message(EdgeType.StateClosed, [[Header.ConnId, u32(id)]], 'peer closed'));
    await once(conn, 'end');
    expect(got.join('')).toBe('last words');
    client.close();
  });
});

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
