// Links between stock routers on the wire (scripted routers; test/interop/stock-router-links.test.ts runs two real
// `ziti router run`): each router hears where the others accept links (PeerStateChanges carrying their hello's
// Listeners header) and that one went (Unhealthy); VerifyRouter answers for the dialer's certificate; a reported link
// makes a 2-hop circuit whose Routes are OpenZiti's (ingress → link, link → egress with the terminator); a link fault
// is passed to the other end and reroutes the circuit over what is left (a transit router, no new egress dial);
// a router gone ends the circuits through it. Many dials in the same tick with forged ones among them: exactly the
// valid ones are routed over the link.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtoReader, ProtoWriter } from '../../src/main/ctrl/protobuf';
import { ChannelType, Header, message, type Message } from '../../src/main/router/channel/wire';
import { fingerprintSha1 } from '../../src/main/core/pki/index';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { enrolledDevice, hostsAndClientsService, type Device } from '../support/edge';
import {
  connectedRouter,
  createCircuit,
  createTerminator,
  enrolledRouter,
  routeResult,
  sdkCredentials,
  type Enrolled,
  type ScriptedRouter,
} from '../support/scriptedRouter';

let app: TestApp;
let admin: ApiClient;
let serviceId: string;
let host: Device;
let client: Device;
const routers: Record<string, { enrolled: Enrolled; ch: ScriptedRouter }> = {};

/** ctrl_pb.Listeners with one link listener, as a router's hello carries it (header 10). */
const listenersHeader = (address: string): [number, Buffer] => [
  10,
  new ProtoWriter().message(1, new ProtoWriter().bytes(1, address).bytes(2, 'tls').strings(4, ['default'])).finish(),
];
const routerLinks = (id: string, dest: string, iteration = 1) =>
  message(
    1035,
    [],
    new ProtoWriter().message(1, new ProtoWriter().bytes(1, id).bytes(2, dest).bytes(3, 'tls').bytes(5, `tls:${dest}:1`).uint(6, iteration)).finish(),
  );
const fault = (subject: number, id: string, iteration = 1) =>
  message(1004, [], new ProtoWriter().uint(1, subject).bytes(2, id).uint(3, iteration).finish());
const peerChanges = (m: Message) =>
  new ProtoReader(m.body).messages(1).map((c) => ({
    id: c.str(1),
    state: c.uint(3),
    listeners: c.messages(4).map((l) => ({ address: l.str(1), protocol: l.str(2), groups: l.strs(4) })),
  }));
const forwards = (route: Message) => new ProtoReader(route.body).messages(4).map((f) => [f.str(1), f.str(2), f.uint(3)]);
const routesOf = (r: ScriptedRouter, circuitId: string) =>
  r.received.filter((m) => m.contentType === 1005 && new ProtoReader(m.body).str(1) === circuitId);
const fabricCircuit = async (id: string) => (await admin.get(`/fabric/v1/circuits/${id}`, { api: 'root' })).body.data;

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.adminClient();
  serviceId = await hostsAndClientsService(admin, 'link-echo');
  host = await enrolledDevice(app, admin, 'link-host', ['hosts']);
  client = await enrolledDevice(app, admin, 'link-client', ['clients']);
  for (const name of ['a', 'b', 'c']) {
    const enrolled = await enrolledRouter(app, admin, `link-${name}`);
    const ch = await connectedRouter(app, enrolled, 3022, [listenersHeader(`tls:127.0.0.1:1008${name.charCodeAt(0) - 97}`)]);
    ch.answers.set(1005, routeResult);
    routers[name] = { enrolled, ch };
  }
});
afterAll(async () => {
  for (const r of Object.values(routers)) r.ch.channel.close();
  await admin?.close();
  await app?.stop();
});

const A = () => routers.a!;
const B = () => routers.b!;
const C = () => routers.c!;

describe('links between stock routers', () => {
  it('each router hears where the others accept links', async () => {
    // a came first: it hears of b, then of c; c hears of both at once, and of the built-in router (it accepts no
    // links: without a link listener of its own it dials theirs)
    await A().ch.waitFor((m) => m.contentType === 1050 && peerChanges(m)[0]!.id === C().enrolled.id);
    const toC = await C().ch.waitFor((m) => m.contentType === 1050);
    expect(peerChanges(toC).sort((x, y) => x.id.localeCompare(y.id))).toEqual(
      [
        { id: A().enrolled.id, state: 0, listeners: [{ address: 'tls:127.0.0.1:10080', protocol: 'tls', groups: ['default'] }] },
        { id: B().enrolled.id, state: 0, listeners: [{ address: 'tls:127.0.0.1:10081', protocol: 'tls', groups: ['default'] }] },
        { id: app.router!.id, state: 0, listeners: [] },
      ].sort((x, y) => x.id.localeCompare(y.id)),
    );
    const routerB = (await admin.get(`/fabric/v1/routers/${B().enrolled.id}`, { api: 'root' })).body.data;
    expect(routerB.listenerAddresses).toEqual([{ address: 'tls:127.0.0.1:10081', protocol: 'tls' }]);
  });

  it('VerifyRouter: the dialing router’s enrolled certificate passes, another’s or an unknown router fails', async () => {
    const verify = (routerId: string, fingerprints: string[]) =>
      A().ch.channel.request(message(1036, [], new ProtoWriter().bytes(1, routerId).strings(2, fingerprints).finish()), 5_000);
    const ok = await verify(B().enrolled.id, ['00'.repeat(20), fingerprintSha1(B().enrolled.certPem)]);
    expect(ok.contentType).toBe(ChannelType.Result);
    expect(ok.headers.get(Header.ResultSuccess)?.[0]).toBe(1);
    const wrong = await verify(B().enrolled.id, [fingerprintSha1(C().enrolled.certPem)]);
    expect(wrong.headers.get(Header.ResultSuccess)?.[0]).toBe(0);
    expect(wrong.body.toString()).toBe(`could not verify fingerprint for router ${B().enrolled.id}`);
    expect((await verify('nope', [])).headers.get(Header.ResultSuccess)?.[0]).toBe(0);
  });

  it('a dial at A to a host at B is routed over the link; a link fault reroutes it through C; C gone ends it', async () => {
    const bind = await sdkCredentials(app, host, serviceId, 'Bind');
    const made = await B().ch.channel.request(createTerminator('link-t1', bind), 10_000);
    expect(new ProtoReader(made.body).uint(2)).toBe(0);
    // no link yet: no path from A to B
    const noPath = await A().ch.channel.request(createCircuit(await sdkCredentials(app, client, serviceId, 'Dial')), 10_000);
    expect(noPath.body.toString()).toBe('service link-echo has no terminators reachable from this router');

    A().ch.channel.send(routerLinks('L-ab', B().enrolled.id));
    // malformed and odd reports change nothing: a link to itself, an unreadable body
    A().ch.channel.send(routerLinks('L-self', A().enrolled.id));
    A().ch.channel.send(message(1035, [], Buffer.from([0x0a, 0xff])));
    await expect.poll(async () => (await admin.get('/fabric/v1/links', { api: 'root' })).body.data.map((l: any) => l.id)).toEqual(['L-ab']);

    const answer = await A().ch.channel.request(createCircuit(await sdkCredentials(app, client, serviceId, 'Dial')), 10_000);
    expect(answer.contentType).toBe(20219);
    const circuitId = answer.headers.get(11)!.toString();
    const ingress = answer.headers.get(12)!.toString();
    const [atA] = routesOf(A().ch, circuitId);
    const [atB] = routesOf(B().ch, circuitId);
    // OpenZiti's CreateRouteMessages: the ingress forwards to the link and back to the start; the egress dials the terminator
    expect(new ProtoReader(atA!.body).message(3)).toBeUndefined();
    expect(forwards(atA!)).toEqual([
      [ingress, 'L-ab', 2],
      ['L-ab', ingress, 0],
    ]);
    const egress = new ProtoReader(atB!.body).message(3)!;
    expect(egress.str(3)).toBe('link-t1');
    expect(forwards(atB!)).toEqual([
      [egress.str(2), 'L-ab', 2],
      ['L-ab', egress.str(2), 1],
    ]);
    expect((await fabricCircuit(circuitId)).path).toMatchObject({
      nodes: [{ id: A().enrolled.id }, { id: B().enrolled.id }],
      links: [{ id: 'L-ab' }],
    });

    // C links to both; A's link to B fails: B is told, the circuit moves to A → C → B without a new dial at B
    C().ch.channel.send(routerLinks('L-ca', A().enrolled.id));
    C().ch.channel.send(routerLinks('L-cb', B().enrolled.id));
    await expect.poll(async () => (await admin.get('/fabric/v1/links', { api: 'root' })).body.data.length).toBe(3);
    A().ch.channel.send(fault(2, 'L-ab'));
    const told = await B().ch.waitFor((m) => m.contentType === 1004);
    expect(new ProtoReader(told.body).str(2)).toBe('L-ab');
    const [viaC] = await Promise.all([C().ch.waitFor((m) => m.contentType === 1005 && new ProtoReader(m.body).str(1) === circuitId)]);
    expect(new ProtoReader(viaC.body).uint(2)).toBe(99969996);
    expect(forwards(viaC)).toEqual([
      ['L-ca', 'L-cb', 2],
      ['L-cb', 'L-ca', 2],
    ]);
    await expect.poll(() => routesOf(B().ch, circuitId).length).toBe(2);
    const rerouteB = routesOf(B().ch, circuitId)[1]!;
    expect(new ProtoReader(rerouteB.body).message(3)).toBeUndefined();
    expect(forwards(rerouteB)).toEqual([
      [egress.str(2), 'L-cb', 2],
      ['L-cb', egress.str(2), 1],
    ]);
    expect(forwards(routesOf(A().ch, circuitId)[1]!)).toEqual([
      [ingress, 'L-ca', 2],
      ['L-ca', ingress, 0],
    ]);
    await expect
      .poll(async () => (await fabricCircuit(circuitId)).path.nodes.map((n: any) => n.id))
      .toEqual([A().enrolled.id, C().enrolled.id, B().enrolled.id]);

    // C goes: the circuit through it ends, A and B unroute it, and hear C is unhealthy
    C().ch.channel.close();
    for (const r of [A(), B()]) {
      const un = await r.ch.waitFor((m) => m.contentType === 1006 && new ProtoReader(m.body).str(1) === circuitId);
      expect(un).toBeDefined();
      await r.ch.waitFor((m) => m.contentType === 1050 && peerChanges(m).some((c) => c.id === C().enrolled.id && c.state === 1));
    }
    expect(app.ctrl!.fabric.circuits.has(circuitId)).toBe(false);
    expect((await admin.get('/fabric/v1/links', { api: 'root' })).body.data).toEqual([]);
  });

  it('twelve dials over a link in the same tick, every third forged: exactly the valid ones are routed on both routers', async () => {
    A().ch.channel.send(routerLinks('L-ab2', B().enrolled.id, 2));
    await expect.poll(async () => (await admin.get('/fabric/v1/links', { api: 'root' })).body.data.length).toBe(1);
    const dial = await sdkCredentials(app, client, serviceId, 'Dial');
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => A().ch.channel.request(createCircuit(i % 3 === 0 ? { ...dial, sessionToken: 'forged' } : dial), 10_000)),
    );
    const routed = answers.filter((m) => m.contentType === 20219).map((m) => m.headers.get(11)!.toString());
    expect(answers.map((m) => m.contentType === 20219)).toEqual(Array.from({ length: 12 }, (_, i) => i % 3 !== 0));
    for (const id of routed) {
      expect(routesOf(A().ch, id)).toHaveLength(1);
      expect(routesOf(B().ch, id)).toHaveLength(1);
    }
    expect(
      [...app.ctrl!.fabric.circuits.values()]
        .filter((c) => c.links.includes('L-ab2'))
        .map((c) => c.id)
        .sort(),
    ).toEqual(routed.sort());
    // a link fault with no other path left: they end, unrouted on both routers
    B().ch.channel.send(fault(2, 'L-ab2', 2));
    for (const id of routed) await A().ch.waitFor((m) => m.contentType === 1006 && new ProtoReader(m.body).str(1) === id);
    expect([...app.ctrl!.fabric.circuits.values()].filter((c) => routed.includes(c.id))).toEqual([]);
  });
});
