// A scripted stock router for control channel tests: an edge router enrolled through the API with its own key
// (POST /enroll/erott), a TLS connection made as a router makes it (its client certificate, ALPN ziti-ctrl), and
// OpenZiti's channel framing (the project's own Channel as the dialing side) with every message it got kept.
import { connect, type TLSSocket } from 'node:tls';
import { expect } from 'vitest';
import { Channel } from '../../src/main/router/channel/channel';
import { ChannelType, getU64, Header, message, str, u64, type Message } from '../../src/main/router/channel/wire';
import { ProtoReader, ProtoWriter } from '../../src/main/ctrl/protobuf';
import { encodeU32BytesMap } from '../../src/main/ctrl/edgeMessages';
import { fingerprintSha1 } from '../../src/main/core/pki/index';
import type { TestApp } from './app';
import { deviceSession, serviceSession, type Device } from './edge';
import type { ApiClient } from './client';
import { csr, csrWithSans } from './pki';

export const ROUTER_VERSION = 'v1.7.2|test|2025-01-01 00:00:00|linux|amd64';

export interface Enrolled {
  id: string;
  keyPem: string;
  certPem: string;
  /** the server certificate chain (localhost, 127.0.0.1) and its key, for a link listener */
  server: { keyPem: string; certPem: string };
}

/** An edge router created through the Management API and enrolled (POST /enroll/erott) with its own key. */
export async function enrolledRouter(app: TestApp, admin: ApiClient, name: string, roleAttributes: string[] = []): Promise<Enrolled> {
  const id = (await admin.post('/edge-routers', { name, isTunnelerEnabled: false, roleAttributes })).body.data.id as string;
  return { id, ...(await enroll(app, admin, id)) };
}

export async function enroll(app: TestApp, admin: ApiClient, id: string): Promise<Omit<Enrolled, 'id'>> {
  const token = (await admin.get(`/edge-routers/${id}`)).body.data.enrollmentToken as string;
  const client = await csr('EC-P256', id);
  const server = await csrWithSans(id, ['localhost'], ['127.0.0.1']);
  const r = await app.client().post('/enroll/erott', { token, certCsr: client.csrPem, serverCertCsr: server.csrPem }, { api: 'client' });
  expect(r.status).toBe(200);
  return { keyPem: client.keyPem, certPem: r.body.data.cert as string, server: { keyPem: server.keyPem, certPem: r.body.data.serverCert as string } };
}

export async function isOnline(admin: ApiClient, id: string): Promise<boolean> {
  return (await admin.get(`/edge-routers/${id}`)).body.data.isOnline as boolean;
}

/** A TLS connection to the control channel (or another tls:host:port) as a router makes it (its client certificate, ALPN ziti-ctrl). */
export function dial(app: TestApp, cert?: { keyPem: string; certPem: string }, alpn = ['ziti-ctrl'], address = app.urls.ctrl!): Promise<TLSSocket> {
  const { port } = /:(?<port>\d+)$/.exec(address)!.groups!;
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: '127.0.0.1',
      port: Number(port),
      ca: app.core.pki.caBundlePem,
      key: cert?.keyPem,
      cert: cert?.certPem,
      ALPNProtocols: alpn,
    });
    socket.once('secureConnect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** A scripted router: the channel, every message it got, and a way to wait for one. */
export class ScriptedRouter {
  readonly received: Message[] = [];
  readonly channel: Channel;
  readonly closed: Promise<void>;
  private waiters: Array<() => void> = [];
  /** answer the controller's heartbeats (header 5) as OpenZiti's heartbeater does */
  answerHeartbeats = true;
  /** answers the controller's requests of a content type (a Route, the ServerHello) as the test scripts them */
  readonly answers = new Map<number, (m: Message) => Message | undefined>();

  constructor(readonly socket: TLSSocket) {
    let done!: () => void;
    this.closed = new Promise((r) => (done = r));
    this.channel = new Channel(socket, 1 << 24, {
      onData: () => undefined,
      onMessage: (m) => {
        this.received.push(m);
        const beat = getU64(m.headers, Header.Heartbeat);
        if (beat !== undefined && this.answerHeartbeats) this.channel.send(message(ChannelType.Heartbeat, [[Header.HeartbeatResponse, u64(beat)]]));
        const answer = this.answers.get(m.contentType)?.(m);
        if (answer) this.channel.reply(m, answer);
        this.wake();
      },
      onClose: () => {
        done();
        this.wake();
      },
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }

  async waitFor(pred: (m: Message) => boolean): Promise<Message> {
    for (;;) {
      const hit = this.received.find(pred);
      if (hit) return hit;
      if (this.channel.closed) throw new Error('the channel closed first');
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  hello(routerId: string, headers: Array<[number, Buffer]> = [[Header.HelloVersion, str(ROUTER_VERSION)]]): Promise<Message> {
    return this.channel.hello(message(ChannelType.Hello, headers, routerId), 5_000);
  }
}

// ---- what a router sends for its SDKs (edge_ctrl.proto), and how it answers the controller ----

const clientHello = (port: number) =>
  new ProtoWriter()
    .bytes(1, 'v1.7.2')
    .message(
      10,
      new ProtoWriter()
        .message(10, new ProtoWriter().bytes(10, `tls:0.0.0.0:${port}`).bytes(20, 'tls').bytes(30, '0.0.0.0').uint(40, port))
        .message(20, new ProtoWriter().bytes(10, `tls:router.example:${port}`).bytes(20, 'tls').bytes(30, 'router.example').uint(40, port)),
    )
    .finish();

/** A router connected (extra hello headers: its link listeners), its ServerHello answered with an edge listener on `port`. */
export async function connectedRouter(app: TestApp, r: Enrolled, port = 3022, headers: Array<[number, Buffer]> = []): Promise<ScriptedRouter> {
  const router = new ScriptedRouter(await dial(app, r));
  router.answers.set(20000, () => message(20001, [[1024, Buffer.from([1])]], clientHello(port)));
  const result = await router.hello(r.id, [[Header.HelloVersion, str(ROUTER_VERSION)], ...headers]);
  expect(result.headers.get(Header.ResultSuccess)?.[0]).toBe(1);
  await router.waitFor((m) => m.contentType === 20000);
  return router;
}

export interface SdkCredentials {
  apiSessionToken: string;
  sessionToken: string;
  fingerprint: string;
}

/** What an SDK's Bind or Dial makes the router send: its real API session token, session token and certificate's fingerprint. */
export async function sdkCredentials(app: TestApp, device: Device, serviceId: string, type: 'Dial' | 'Bind'): Promise<SdkCredentials> {
  const { client: api, token } = await deviceSession(app, device);
  const session = await serviceSession(api, serviceId, type);
  await api.close();
  return { apiSessionToken: token, sessionToken: session.token, fingerprint: fingerprintSha1(device.cert) };
}

export const createTerminator = (address: string, c: SdkCredentials, peerData?: Map<number, Buffer>) =>
  message(
    20216,
    [],
    new ProtoWriter()
      .bytes(1, address)
      .bytes(2, c.sessionToken)
      .strings(3, [c.fingerprint])
      .u32BytesMap(4, peerData)
      .bytes(9, c.apiSessionToken)
      .finish(),
  );

export const u32le = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
/** The channel's string slice header encoding (count, then length-prefixed strings, little-endian). */
const stringSlice = (values: string[]) => Buffer.concat([u32le(values.length), ...values.flatMap((v) => [u32le(v.length), Buffer.from(v)])]);

/** A CreateCircuitV2Request (`peerData`: the dialer's, e.g. its public key 1003 for an encryption-required service). */
export const createCircuit = (c: SdkCredentials, peerData?: Map<number, Buffer>) =>
  message(20218, [
    [11, Buffer.from(c.sessionToken)],
    [14, Buffer.from(c.apiSessionToken)],
    [12, stringSlice([c.fingerprint])],
    ...(peerData ? [[10, encodeU32BytesMap(peerData)] as [number, Buffer]] : []),
  ]);

/** A successful RouteResult for a Route, as OpenZiti's router answers (its attempt, success). */
export const routeResult = (route: Message) =>
  message(
    1022,
    [
      [1101, u32le(new ProtoReader(route.body).uint(2))],
      [1102, Buffer.from([1])],
    ],
    new ProtoReader(route.body).str(1),
  );
