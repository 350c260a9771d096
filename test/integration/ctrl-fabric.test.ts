// What a stock router asks of Weft after the hello, on the wire (a scripted router; test/interop/stock-router-
// dataplane.test.ts runs the real `ziti router run`): the ServerHello and the ClientHello's listeners, the data model
// a subscription gets (and again after a change), terminators and circuits for an SDK's real credentials (the Route
// sent to the router, its result, the answer), and the refusals: a forged token, another router's terminator, a
// malformed body. Many requests in the same tick, some failing, leave exactly the terminators that succeeded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtoReader, ProtoWriter } from '../../src/main/ctrl/protobuf';
import { ChannelType, Header, message, type Message } from '../../src/main/router/channel/wire';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { enrolledDevice, hostsAndClientsService, type Device } from '../support/edge';
import { circuitEventsOf } from '../../src/main/core/dataPlane/index';
import { connectedRouter, createCircuit, createTerminator, enrolledRouter, sdkCredentials, u32le, type Enrolled } from '../support/scriptedRouter';

let app: TestApp;
let admin: ApiClient;
let serviceId: string;
let host: Device;
let client: Device;

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.adminClient();
  serviceId = await hostsAndClientsService(admin, 'wire-echo');
  host = await enrolledDevice(app, admin, 'wire-host', ['hosts']);
  client = await enrolledDevice(app, admin, 'wire-client', ['clients']);
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

/** A router connected, its ServerHello answered with an edge listener on `port`. */
const connected = (r: Enrolled, port = 3022) => connectedRouter(app, r, port);
const credentials = (device: Device, type: 'Dial' | 'Bind') => sdkCredentials(app, device, serviceId, type);

const terminatorsOfService = async () =>
  (await admin.get(`/services/${serviceId}/terminators?limit=500`)).body.data as Array<{ id: string; routerId: string; hostId: string }>;

describe('a stock router after the hello', () => {
  it('gets a ServerHello; its ClientHello listener becomes the supported protocol SDKs are offered', async () => {
    const r = await enrolledRouter(app, admin, 'wire-r1');
    const router = await connected(r, 4123);
    const hello = router.received.find((m) => m.contentType === 20000)!;
    expect(hello.headers.get(1024)).toEqual(Buffer.from([1]));
    const data = new ProtoReader(hello.body).messages(2).map((e) => [e.str(1), e.str(2)]);
    expect(Object.fromEntries(data)).toEqual({ instant: 'true', routerModel: 'true' });
    await expect
      .poll(async () => (await admin.get(`/edge-routers/${r.id}`)).body.data.supportedProtocols)
      .toEqual({ tls: 'tls://router.example:4123' });
    router.channel.close();
  });

  it('a data model subscription gets the whole model, and a change its change set', async () => {
    const r = await enrolledRouter(app, admin, 'wire-r2');
    const router = await connected(r);
    router.channel.send(message(20505, [], new ProtoWriter().uint(2, 300).finish()));
    const first = await router.waitFor((m) => m.contentType === 20500);
    const state = new ProtoReader(first.body);
    const events = state.messages(1);
    const identities = events.map((e) => e.message(10)?.str(1)).filter(Boolean);
    expect(identities).toEqual(expect.arrayContaining([host.id, client.id]));
    // the signing key: its kid is the SHA-1 of the certificate, as the tokens' kid
    const keys = events.map((e) => e.message(14)).filter((k) => k !== undefined);
    expect(keys.map((k) => k.str(2))).toContain(app.core.jwt.kid);
    // the Dial policy names the client and the service
    const changes = events.map((e) => e.message(16)).filter((c) => c !== undefined);
    expect(changes.some((c) => c.uint(3) === 2 && c.strs(2).includes(client.id))).toBe(true);
    expect(changes.some((c) => c.uint(3) === 1 && c.strs(2).includes(serviceId))).toBe(true);

    const named = await admin.create('/identities', { name: 'wire-later', type: 'Device', isAdmin: false });
    const next = await router.waitFor(
      (m) => m.contentType === 20501 && new ProtoReader(m.body).messages(3).some((e) => e.message(10)?.str(1) === named),
    );
    expect(new ProtoReader(next.body).bigint(1)).toBeGreaterThan(state.bigint(2));
    router.channel.close();
  });

  it('a Bind with real credentials becomes a terminator; a Dial becomes a circuit routed on the router', async () => {
    const r = await enrolledRouter(app, admin, 'wire-r3');
    const router = await connected(r);
    const hostKey = Buffer.alloc(32, 7);
    const reply = await router.channel.request(createTerminator('wire-t1', await credentials(host, 'Bind'), new Map([[1003, hostKey]])), 10_000);
    expect(reply.contentType).toBe(20217);
    expect(new ProtoReader(reply.body).uint(2)).toBe(0);
    expect((await terminatorsOfService()).find((t) => t.id === 'wire-t1')).toMatchObject({ routerId: r.id, hostId: host.id });

    // the router answers the Route as OpenZiti's does: a RouteResult, success, the attempt
    let routed: Message | undefined;
    router.answers.set(1005, (m) => {
      routed = m;
      return message(
        1022,
        [
          [1101, u32le(0)],
          [1102, Buffer.from([1])],
        ],
        new ProtoReader(m.body).str(1),
      );
    });
    const answer = await router.channel.request(createCircuit(await credentials(client, 'Dial')), 10_000);
    expect(answer.contentType).toBe(20219);
    const route = new ProtoReader(routed!.body);
    const circuitId = answer.headers.get(11)!.toString();
    expect(route.str(1)).toBe(circuitId);
    // egress: the terminator's address; forwards between the ingress (the answer's address) and the egress
    expect(route.message(3)!.str(3)).toBe('wire-t1');
    const ingress = answer.headers.get(12)!.toString();
    expect(route.messages(4).map((f) => [f.str(1), f.uint(3)])).toEqual([
      [ingress, 1],
      [route.message(3)!.str(2), 0],
    ]);
    // the host's public key from its Bind reaches the dialer (end-to-end encryption)
    expect(answer.headers.get(10)!.includes(hostKey)).toBe(true);
    expect(app.ctrl!.fabric.circuitsOf(r.id).map((c) => c.id)).toEqual([circuitId]);

    // the Dial session deleted: the circuit is unrouted at once
    const sessions = (await admin.get(`/sessions?filter=${encodeURIComponent(`identityId = "${client.id}" and type = "Dial"`)}`)).body.data as Array<{
      id: string;
    }>;
    for (const s of sessions) await admin.del(`/sessions/${s.id}`);
    const unroute = await router.waitFor((m) => m.contentType === 1006);
    expect(new ProtoReader(unroute.body).str(1)).toBe(circuitId);
    expect(app.ctrl!.fabric.circuitsOf(r.id)).toEqual([]);
    // OpenZiti's circuit events, as for the built-in router's circuits
    await circuitEventsOf(app.core).idle();
    const events = await app.core.store.allSql<{ op: string; after_row: string }>(
      `SELECT op, after_row FROM outbox WHERE entity = 'event:circuit' AND entity_id = ? ORDER BY seq`,
      circuitId,
    );
    expect(events.map((e) => (JSON.parse(e.after_row) as { event_type: string }).event_type)).toEqual(['created', 'deleted']);
    expect(JSON.parse(events[0]!.after_row)).toMatchObject({
      terminator_id: 'wire-t1',
      path: { nodes: [r.id] },
      tags: { clientId: client.id, hostId: host.id },
    });
    router.channel.close();
    // the router gone: its SDKs' terminators go with it
    await expect.poll(async () => (await terminatorsOfService()).some((t) => t.id === 'wire-t1')).toBe(false);
  });

  it('refuses forged tokens, another router’s terminator and malformed bodies, and stays up', async () => {
    const r = await enrolledRouter(app, admin, 'wire-r4');
    const other = await enrolledRouter(app, admin, 'wire-r5');
    const router = await connected(r);
    const otherRouter = await connected(other);
    const bind = await credentials(host, 'Bind');
    expect(new ProtoReader((await otherRouter.channel.request(createTerminator('wire-owned', bind), 10_000)).body).uint(2)).toBe(0);

    const forged = await router.channel.request(createTerminator('wire-forged', { ...bind, apiSessionToken: 'not-a-session' }), 10_000);
    expect(new ProtoReader(forged.body).uint(2)).toBe(4);
    expect(new ProtoReader(forged.body).str(3)).toBe('invalid or expired API session');
    const wrongCert = await router.channel.request(createTerminator('wire-forged', { ...bind, fingerprint: 'ab'.repeat(20) }), 10_000);
    expect(new ProtoReader(wrongCert.body).str(3)).toBe('invalid client certificate for the API session');
    // the id of a terminator of another router
    const taken = await router.channel.request(createTerminator('wire-owned', bind), 10_000);
    expect(new ProtoReader(taken.body).str(3)).toMatch(/another router/);
    const removal = await router.channel.request(message(20211, [], new ProtoWriter().bytes(3, 'wire-owned').finish()), 10_000);
    expect(removal.contentType).toBe(20002);
    expect(removal.body.toString()).toMatch(/came from router/);
    expect((await terminatorsOfService()).some((t) => t.id === 'wire-owned')).toBe(true);

    const refusedCircuit = await router.channel.request(createCircuit({ ...(await credentials(client, 'Dial')), sessionToken: 'forged' }), 10_000);
    expect(refusedCircuit.contentType).toBe(ChannelType.Result);
    expect(refusedCircuit.headers.get(Header.ResultSuccess)?.[0]).toBe(0);
    expect(refusedCircuit.body.toString()).toBe('invalid session token');
    // the circuit's Bind session is not a Dial session
    const wrongType = await router.channel.request(createCircuit(bind), 10_000);
    expect(wrongType.body.toString()).toMatch(/invalid session type/);

    // malformed bodies and headers: answered or ignored, the channel stays up
    router.channel.send(message(20216, [], Buffer.from([0x0a, 0xff, 0xff])));
    router.channel.send(message(20505, [], Buffer.from([0xff])));
    const badSlice = await router.channel.request(message(20218, [[12, Buffer.from([200, 0, 0, 0])]]), 10_000);
    expect(badSlice.body.toString()).toMatch(/invalid create circuit request/);
    const pong = await router.channel.request(message(ChannelType.Ping), 5_000);
    expect(pong.headers.get(Header.ResultSuccess)?.[0]).toBe(1);
    router.channel.close();
    otherRouter.channel.close();
  });

  it('twenty terminator requests in the same tick, some forged: exactly the valid ones exist', async () => {
    const r = await enrolledRouter(app, admin, 'wire-r6');
    const router = await connected(r);
    const bind = await credentials(host, 'Bind');
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        router.channel.request(createTerminator(`wire-many-${i}`, i % 3 === 0 ? { ...bind, sessionToken: 'forged' } : bind), 10_000),
      ),
    );
    const ok = replies.map((m, i) => [i, new ProtoReader(m.body).uint(2)] as const);
    expect(ok.filter(([, result]) => result === 0).map(([i]) => i)).toEqual(Array.from({ length: 20 }, (_, i) => i).filter((i) => i % 3 !== 0));
    const ids = (await terminatorsOfService())
      .filter((t) => t.routerId === r.id)
      .map((t) => t.id)
      .sort();
    expect(ids).toEqual(
      Array.from({ length: 20 }, (_, i) => i)
        .filter((i) => i % 3 !== 0)
        .map((i) => `wire-many-${i}`)
        .sort(),
    );
    router.channel.close();
  });
});
