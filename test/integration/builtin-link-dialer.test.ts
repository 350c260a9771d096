// The built-in router dialing stock routers' link listeners, on the wire (scripted routers with a TLS link listener;
// test/interop/stock-router-builtin-link.test.ts runs a real `ziti router run`): without a link listener of its own,
// it dials every healthy router that announces one, with its enrolled client certificate and ALPN ziti-link, and a
// v1.7.2 hello that is never grouped; the listener's VerifyRouter for it passes; the controller lists the link as the
// built-in router's. A refused hello, an answer that is no frame and a link closed by the listener are each dialed
// again with the same link id and the next iteration (the controller faults a closed link to the other router); the
// process keeps serving throughout. Linked, a dial at the built-in router takes the better terminator: its own over an
// equal one across the link (the link's cost), one across the link whose precedence is better over its own.
import { once } from 'node:events';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtoReader, ProtoWriter } from '../../src/main/ctrl/protobuf';
import { fingerprintSha1 } from '../../src/main/core/pki/index';
import { ChannelType, getStr, getU32, Header, message, str, type Message } from '../../src/main/router/channel/wire';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { edgeClient, openRouter, sdkIdentity, serviceBetween, serviceSession } from '../support/overlay';
import {
  connectedRouter,
  createTerminator,
  enrolledRouter,
  routeResult,
  ScriptedRouter,
  sdkCredentials,
  type Enrolled,
} from '../support/scriptedRouter';

let app: TestApp;
let admin: ApiClient;

/** How a scripted listener answers a link hello. */
type Answer = 'accept' | 'refuse' | 'garbage';

/** A scripted stock router's link listener: every connection it accepted, its hello, and the client certificate. */
class ScriptedLinkListener {
  readonly links: Array<{ router: ScriptedRouter; peerCert: Buffer; alpn: string | false | null; hello: Message }> = [];
  private readonly sockets = new Set<TLSSocket>();
  answer: Answer = 'accept';
  /** TLS connections made to it */
  connections = 0;
  private readonly server: Server;
  private waiters: Array<() => void> = [];

  constructor(private readonly r: Enrolled) {
    this.server = createServer(
      {
        key: r.server.keyPem,
        cert: r.server.certPem,
        ca: app.core.pki.caBundlePem,
        requestCert: true,
        rejectUnauthorized: true,
        ALPNProtocols: ['ziti-link'],
      },
      (socket: TLSSocket) => this.accepted(socket),
    );
  }

  listen(): Promise<number> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => resolve((this.server.address() as { port: number }).port)));
  }

  private accepted(socket: TLSSocket): void {
    this.sockets.add(socket);
    this.connections++;
    if (this.answer === 'garbage') return void socket.end('this is no channel frame at all');
    const router = new ScriptedRouter(socket);
    router.answers.set(ChannelType.Hello, (hello) => {
      this.links.push({ router, peerCert: socket.getPeerCertificate().raw, alpn: socket.alpnProtocol, hello });
      this.wake();
      const ok = this.answer === 'accept';
      return message(
        ChannelType.Result,
        [
          [Header.ResultSuccess, Buffer.from([ok ? 1 : 0])],
          [8, str(this.r.id)],
        ],
        ok ? '' : 'refused by the test',
      );
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }

  async hello(n: number): Promise<(typeof this.links)[number]> {
    while (this.links.length < n) await new Promise<void>((r) => this.waiters.push(r));
    return this.links[n - 1]!;
  }

  close(): Promise<void> {
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    for (const socket of this.sockets) socket.destroy();
    return closed;
  }
}

/** ctrl_pb.Listeners with one link listener, as a router's hello carries it (header 10). */
const listenersHeader = (port: number): [number, Buffer] => [
  10,
  new ProtoWriter().message(1, new ProtoWriter().bytes(1, `tls:127.0.0.1:${port}`).bytes(2, 'tls').strings(4, ['default'])).finish(),
];
const verifyRouter = (routerId: string, fingerprints: string[]) =>
  message(1036, [], new ProtoWriter().bytes(1, routerId).strings(2, fingerprints).finish());
const fabricLinks = async () => (await admin.get('/fabric/v1/links', { api: 'root' })).body.data as any[];

/** A scripted router with a link listener, connected to the control channel (which announces the listener). */
async function routerWithListener(name: string, answer: Answer = 'accept') {
  const enrolled = await enrolledRouter(app, admin, name);
  const listener = new ScriptedLinkListener(enrolled);
  listener.answer = answer;
  const ctrl = await connectedRouter(app, enrolled, 3022, [listenersHeader(await listener.listen())]);
  return { enrolled, listener, ctrl };
}

const opened: Array<Awaited<ReturnType<typeof routerWithListener>>> = [];

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.adminClient();
});
afterAll(async () => {
  for (const o of opened) {
    o.ctrl.channel.close();
    await o.listener.close();
  }
  await admin?.close();
  await app?.stop();
});

describe('the built-in router dials stock routers’ link listeners', () => {
  it('dials with its client certificate and a v1.7.2 hello; VerifyRouter passes; the link is the built-in router’s', async () => {
    const s = await routerWithListener('dialed-s');
    opened.push(s);
    const { hello, peerCert, alpn } = await s.listener.hello(1);
    const builtin = app.router!.id;
    expect(alpn).toBe('ziti-link');
    const linkId = hello.body.toString('utf8');
    expect(linkId).toMatch(/^[A-Za-z0-9]{22}$/);
    expect(getStr(hello.headers, 2)).toBe(builtin);
    expect(getStr(hello.headers, 3)).toBe('v1.7.2'); // the dialed router's version, as a stock dialer sends it
    expect(getStr(hello.headers, 4)).toBe('');
    expect(getU32(hello.headers, 5)).toBe(1);
    expect(getStr(hello.headers, 6)).toBe(s.enrolled.id);
    expect(getStr(hello.headers, 0)).toMatch(/^[0-9a-f-]{36}$/);
    for (const grouped of [1, 7, 9, 10, 11]) expect(hello.headers.has(grouped)).toBe(false);

    // what the stock listener asks next: its controller verifies the dialer's certificate (the built-in router's
    // enrolled client certificate passes; another does not)
    const verified = await s.ctrl.channel.request(verifyRouter(builtin, [fingerprintSha1(peerCert)]), 5_000);
    expect(verified.headers.get(Header.ResultSuccess)?.[0]).toBe(1);
    const other = await s.ctrl.channel.request(verifyRouter(builtin, [fingerprintSha1(s.enrolled.certPem)]), 5_000);
    expect(other.headers.get(Header.ResultSuccess)?.[0]).toBe(0);
    await expect
      .poll(async () => (await fabricLinks()).map((l) => [l.id, l.sourceRouter.id, l.destRouter.id, l.iteration]))
      .toEqual([[linkId, builtin, s.enrolled.id, 1]]);

    // heartbeats on the link are answered (the link is served like an accepted one)
    const link = s.listener.links[0]!.router;
    link.channel.send(message(ChannelType.Heartbeat, [[Header.Heartbeat, Buffer.alloc(8, 1)]]));
    await link.waitFor((m) => m.headers.has(Header.HeartbeatResponse));

    // the listener closes the link (as after a failed VerifyRouter): the controller drops it and tells the router
    // (a LinkFault for that iteration); the built-in router dials again, same link id, next iteration
    link.channel.close();
    const fault = await s.ctrl.waitFor((m) => m.contentType === 1004);
    const f = new ProtoReader(fault.body);
    expect([f.uint(1), f.str(2), f.uint(3)]).toEqual([2, linkId, 1]);
    const again = await s.listener.hello(2);
    expect(again.hello.body.toString('utf8')).toBe(linkId);
    expect(getU32(again.hello.headers, 5)).toBe(2);
    await expect.poll(async () => (await fabricLinks()).map((l) => [l.id, l.iteration])).toEqual([[linkId, 2]]);
  });

  it('a refused hello and an answer that is no frame: no link, dialed again; the process keeps serving', async () => {
    const refusing = await routerWithListener('refusing-t', 'refuse');
    const garbled = await routerWithListener('garbled-u', 'garbage');
    opened.push(refusing, garbled);
    const first = await refusing.listener.hello(1);
    const second = await refusing.listener.hello(2);
    expect(second.hello.body.toString('utf8')).toBe(first.hello.body.toString('utf8'));
    expect(getU32(second.hello.headers, 5)).toBe(2);
    // the answer that was no frame: that dial failed and another followed
    await expect.poll(() => garbled.listener.connections, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    const links = await fabricLinks();
    expect(links.some((l) => [refusing.enrolled.id, garbled.enrolled.id].includes(l.destRouter.id))).toBe(false);
    // still serving: the API answers, the first router's link is up
    expect((await admin.get('/version', { api: 'root' })).status).toBe(200);
    expect(links.filter((l) => l.sourceRouter.id === app.router!.id)).toHaveLength(1);

    // the refusing router starts accepting: the next dial links
    refusing.listener.answer = 'accept';
    await expect.poll(async () => (await fabricLinks()).some((l) => l.destRouter.id === refusing.enrolled.id), { timeout: 15_000 }).toBe(true);
  });

  it('a dial at the built-in router takes its own terminator unless one across a link is better', async () => {
    const s = opened[0]!; // linked since the first test
    s.ctrl.answers.set(1005, routeResult);
    await openRouter(app, admin);
    for (const [kind, roles] of [
      ['/edge-router-policies', { identityRoles: ['#all'] }],
      ['/service-edge-router-policies', { serviceRoles: ['#all'] }],
    ] as const)
      await admin.create(kind, { name: `all-at-${kind.length}`, semantic: 'AnyOf', edgeRouterRoles: [`@${s.enrolled.id}`], ...roles });
    const [host, dialer] = await Promise.all([sdkIdentity(app, admin, 'pref-host'), sdkIdentity(app, admin, 'pref-dialer')]);
    const serviceId = await serviceBetween(admin, 'pref-echo', host, dialer);
    const hostClient = edgeClient(app, host);
    const dialClient = edgeClient(app, dialer);
    try {
      const listener = hostClient.listen(await serviceSession(host, serviceId, 'Bind'));
      const accepted: unknown[] = [];
      listener.on('connection', (c: { destroy(): void }) => accepted.push(c));
      await once(listener, 'bound');
      const terminatorAtS = async (address: string, precedence: number) => {
        const c = await sdkCredentials(app, host, serviceId, 'Bind');
        const made = await s.ctrl.channel.request(
          precedence ? withPrecedence(createTerminator(address, c), precedence) : createTerminator(address, c),
          10_000,
        );
        expect(new ProtoReader(made.body).uint(2)).toBe(0);
      };
      const routesToS = () => s.ctrl.received.filter((m) => m.contentType === 1005).length;
      const routedBefore = routesToS();

      // an equal terminator across the link costs the link's hop more: the built-in router's own is taken
      await terminatorAtS('pref-default', 0);
      const first = await dialClient.dial(await serviceSession(dialer, serviceId, 'Dial'));
      await expect.poll(() => accepted.length).toBe(1);
      expect(routesToS()).toBe(routedBefore);
      first.destroy();

      // a required one across the link beats its own default one: the controller routes the dial to router S
      await terminatorAtS('pref-required', 1);
      const second = await dialClient.dial(await serviceSession(dialer, serviceId, 'Dial'));
      await expect.poll(routesToS).toBe(routedBefore + 1);
      expect(accepted).toHaveLength(1);
      second.destroy();
    } finally {
      hostClient.close();
      dialClient.close();
    }
  });
});

/** A CreateTerminatorV2 with a precedence (field 6: default 0, required 1, failed 2). */
function withPrecedence(m: Message, precedence: number): Message {
  return { ...m, body: Buffer.concat([m.body, new ProtoWriter().uint(6, precedence).finish()]) };
}
