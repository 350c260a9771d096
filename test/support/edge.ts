// Low-level edge-protocol clients for router tests: an enrolled identity, its API and service sessions, and a raw
// channel to the router (so tests can also send what no SDK would).
import { connect as netConnect, type Socket } from 'node:net';
import { connect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { Channel } from '../../src/main/router/channel/channel';
import { ChannelType, EdgeType, encode, Header, message, str, u32, type Message } from '../../src/main/router/channel/wire';
import type { TestApp } from './app';
import type { ApiClient } from './client';
import { certLogin, csr } from './pki';

export interface Device {
  id: string;
  name: string;
  cert: string;
  key: string;
}

/**
 * A service that identities with `#hosts` may Bind and those with `#clients` may Dial, on every edge router (an
 * edge router policy and a service edge router policy for all); returns the service's id.
 */
export async function hostsAndClientsService(admin: ApiClient, name: string): Promise<string> {
  const serviceId = await admin.create('/services', { name, encryptionRequired: false });
  for (const [policy, type, role] of [
    ['bind', 'Bind', '#hosts'],
    ['dial', 'Dial', '#clients'],
  ] as const) {
    await admin.create('/service-policies', { name: policy, type, semantic: 'AnyOf', identityRoles: [role], serviceRoles: [`@${serviceId}`] });
  }
  await admin.create('/edge-router-policies', { name: 'erp', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
  await admin.create('/service-edge-router-policies', { name: 'serp', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] });
  return serviceId;
}

/** An identity enrolled by OTT (with role attributes). */
export async function enrolledDevice(app: TestApp, admin: ApiClient, name: string, roleAttributes: string[] = []): Promise<Device> {
  const id = await admin.create('/identities', { name, type: 'Device', isAdmin: false, roleAttributes, enrollment: { ott: true } });
  const token = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott.token;
  const { csrPem, keyPem } = await csr('EC-P256', name);
  const r = await app.client().post('/enroll/ott', { token, clientCsr: csrPem }, { api: 'client' });
  if (r.status !== 200) throw new Error(`enroll ${name}: ${r.status} ${r.text}`);
  return { id, name, cert: r.body.data.cert, key: keyPem };
}

/** A certificate login; returns the API client and its API session token. */
export async function deviceSession(app: TestApp, device: Device): Promise<{ client: ApiClient; token: string }> {
  const { resp, client } = await certLogin(app.client(), device.cert, device.key);
  if (resp.status !== 200) throw new Error(`cert login ${device.name}: ${resp.status} ${resp.text}`);
  return { client, token: resp.body.data.token };
}

/** POST /sessions; returns the session id and token. */
export async function serviceSession(client: ApiClient, serviceId: string, type: 'Dial' | 'Bind'): Promise<{ id: string; token: string }> {
  const r = await client.post('/sessions', { serviceId, type }, { api: 'client' });
  if (r.status !== 201) throw new Error(`session: ${r.status} ${r.text}`);
  const s = await client.get(`/sessions/${r.body.data.id}`, { api: 'client' });
  return { id: r.body.data.id, token: s.body.data.token };
}

/** A raw channel to the router: every message it receives is kept for waitFor. */
export class RawEdge {
  readonly received: Message[] = [];
  readonly data: Array<{ connId: number; body: Buffer; flags: number }> = [];
  closed?: Error | true;
  /** messages that came with neither headers nor a body (OpenZiti's router sends SDKs none: the C SDK spins on one) */
  emptyFrames = 0;
  private waiters: Array<() => void> = [];

  private constructor(
    readonly socket: TLSSocket,
    readonly channel: Channel,
    /** the TCP connection under the TLS one (to reset it: `tcp.resetAndDestroy()`) */
    readonly tcp: Socket,
  ) {}

  static async connect(url: string, ca: string, cert?: { cert: string; key: string }, tls: ConnectionOptions = {}): Promise<RawEdge> {
    const [, host, port] = /^tls:(?:\/\/)?(.+):(\d+)$/.exec(url)!;
    const tcp = netConnect({ host, port: Number(port) });
    const socket = await new Promise<TLSSocket>((resolve, reject) => {
      const s = connect({ socket: tcp, ca, ...(cert ?? {}), servername: undefined, ...tls }, () => resolve(s));
      s.once('error', reject);
    });
    let self!: RawEdge;
    const channel = new Channel(socket, 64 << 20, {
      onData: (frame) => {
        const m = decodeData(frame);
        self.data.push(m);
        self.wake();
      },
      onMessage: (m) => {
        if (!m.headers.size && !m.body.length) self.emptyFrames++;
        if (m.contentType === ChannelType.Ping || m.contentType === ChannelType.Latency) channel.result(m, true);
        self.received.push(m);
        self.wake();
      },
      onClose: (reason) => {
        self.closed = reason ?? true;
        self.wake();
      },
    });
    self = new RawEdge(socket, channel, tcp);
    return self;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }

  /** Resolves once `check` holds (re-checked on every message or close); fails after timeoutMs. */
  async until<T>(check: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = check();
      if (v) return v;
      if (Date.now() > deadline) throw new Error('timed out waiting on the edge channel');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, deadline - Date.now());
        this.waiters.push(() => (clearTimeout(t), resolve()));
      });
    }
  }

  /** Sends a hello with this API session token; resolves with the router's Result. */
  async hello(token: string): Promise<Message> {
    const hello = message(ChannelType.Hello, [[Header.SessionToken, str(token)]], 'test');
    hello.sequence = -1;
    this.channel.send(hello);
    const result = () => this.received.find((m) => m.contentType === ChannelType.Result && m.headers.get(Header.ReplyFor)?.readInt32LE(0) === -1);
    await this.until(() => result() ?? this.closed);
    const r = result();
    if (!r) throw new Error('the router closed the connection without answering the hello');
    return r;
  }

  request(contentType: number, connId: number, body: string | Buffer, headers: Array<[number, Buffer]> = []): Promise<Message> {
    return this.channel.request(message(contentType, [[Header.ConnId, u32(connId)], ...headers], body), 15_000);
  }

  bind(connId: number, token: string): Promise<Message> {
    return this.request(EdgeType.Bind, connId, token, [[Header.RouterProvidedConnId, Buffer.from([1])]]);
  }

  dial(connId: number, token: string): Promise<Message> {
    return this.request(EdgeType.Connect, connId, token);
  }

  send(connId: number, body: string | Buffer, flags = 0): void {
    const headers: Array<[number, Buffer]> = [[Header.ConnId, u32(connId)]];
    if (flags) headers.push([Header.Flags, u32(flags)]);
    this.channel.write(encode(message(EdgeType.Data, headers, body)));
  }

  /** Answers an incoming Dial (as a hosting SDK): DialSuccess with the router-provided conn id. */
  accept(dial: Message): number {
    const newId = dial.headers.get(Header.RouterProvidedConnId)!.readUInt32LE(0);
    this.channel.reply(dial, message(EdgeType.DialSuccess, [[Header.ConnId, dial.headers.get(Header.ConnId)!]], u32(newId)));
    return newId;
  }

  close(): void {
    this.channel.close();
  }
}

function decodeData(frame: Buffer): { connId: number; body: Buffer; flags: number } {
  const headersLength = frame.readUInt32LE(12);
  let connId = -1;
  let flags = 0;
  for (let off = 20; off < 20 + headersLength;) {
    const k = frame.readInt32LE(off);
    const len = frame.readUInt32LE(off + 4);
    if (k === Header.ConnId) connId = frame.readUInt32LE(off + 8);
    if (k === Header.Flags) flags = frame.readUInt32LE(off + 8);
    off += 8 + len;
  }
  return { connId, body: Buffer.from(frame.subarray(20 + headersLength)), flags };
}
