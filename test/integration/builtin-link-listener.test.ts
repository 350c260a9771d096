// The built-in router's link listener on the wire (scripted routers; test/interop/stock-router-builtin-link.test.ts
// runs a real `ziti router run`): stock routers hear where it accepts links (a PeerStateChange naming it as a v1.7.2
// router), a dialing router's hello is answered as a stock listener answers an ungrouped one, and everything else is
// refused without harm: another router's certificate, a hello for another router, a split link, no hello first,
// bytes that are no frame. On a link: heartbeats answered, malformed or unknown payloads dropped, the link kept.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtoReader } from '../../src/main/ctrl/protobuf';
import { ChannelType, Header, message, str, u32, u64, type Message } from '../../src/main/router/channel/wire';
import { encodePayload, XgressType } from '../../src/main/router/link/xgressWire';
import { startTestApp, tempDir, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { connectedRouter, dial, enrolledRouter, ScriptedRouter, type Enrolled } from '../support/scriptedRouter';

let app: TestApp;
let admin: ApiClient;
let a: Enrolled;
let b: Enrolled;
let ctrlA: ScriptedRouter;

/** A link connection to the built-in router as a stock router's dialer makes it. */
async function linkTo(cert: Enrolled | undefined): Promise<ScriptedRouter> {
  return new ScriptedRouter(await dial(app, cert, ['ziti-link'], app.router!.linkAddress));
}

/** A stock dialer's multi-underlay hello (headers of router/xlink_transport/dialer.go). */
function linkHello(linkId: string, from: string, to: string, extra: Array<[number, Buffer]> = []): Message {
  return message(
    ChannelType.Hello,
    [
      [0, str('group-1')],
      [2, str(from)],
      [3, str('v1.7.2')],
      [4, Buffer.alloc(0)],
      [5, u32(1)],
      [6, str(to)],
      [7, str('link.default')],
      [9, Buffer.from([1])],
      [11, Buffer.from([1])],
      ...extra,
    ],
    linkId,
  );
}

const refusedWith = async (r: ScriptedRouter, hello: Message): Promise<string> => {
  const answer = await r.channel.hello(hello, 5_000);
  expect(answer.headers.get(Header.ResultSuccess)?.[0]).toBe(0);
  await r.closed;
  return answer.body.toString();
};

beforeAll(async () => {
  const dir = tempDir('weft-link-listener-');
  writeFileSync(join(dir, 'weft.yml'), 'router:\n  link_listener: tls:127.0.0.1:0\n');
  app = await startTestApp({ configFile: join(dir, 'weft.yml') });
  admin = await app.adminClient();
  a = await enrolledRouter(app, admin, 'link-peer-a');
  b = await enrolledRouter(app, admin, 'link-peer-b');
  ctrlA = await connectedRouter(app, a);
});
afterAll(async () => {
  ctrlA?.channel.close();
  await admin?.close();
  await app?.stop();
});

describe("the built-in router's link listener", () => {
  it('stock routers hear where the built-in router accepts links, and the fabric API lists it', async () => {
    const change = await ctrlA.waitFor((m) => m.contentType === 1050);
    const peers = new ProtoReader(change.body).messages(1).map((c) => ({
      id: c.str(1),
      version: c.str(2),
      state: c.uint(3),
      listeners: c.messages(4).map((l) => ({ address: l.str(1), protocol: l.str(2), groups: l.strs(4) })),
    }));
    expect(peers).toEqual([
      { id: app.router!.id, version: 'v1.7.2', state: 0, listeners: [{ address: app.router!.linkAddress, protocol: 'tls', groups: ['default'] }] },
    ]);
    const router = (await admin.get(`/fabric/v1/routers/${app.router!.id}`, { api: 'root' })).body.data;
    expect(router.listenerAddresses).toEqual([{ address: app.router!.linkAddress, protocol: 'tls' }]);
  });

  it('accepts a router’s link with its enrolled certificate: ungrouped, the link up, heartbeats answered', async () => {
    const r = await linkTo(a);
    const answer = await r.channel.hello(linkHello('L-1', a.id, app.router!.id), 5_000);
    expect(answer.headers.get(Header.ResultSuccess)?.[0]).toBe(1);
    expect(answer.headers.get(Header.Id)?.toString()).toBe(app.router!.id);
    expect(answer.headers.get(Header.ConnectionId)?.toString()).toBe('group-1');
    // no IsGrouped: the dialer keeps to this one connection
    expect(answer.headers.has(Header.IsGrouped)).toBe(false);
    await expect.poll(() => app.router!.links.linkIds()).toEqual(['L-1']);

    // malformed, unknown and stray messages are dropped, the link stays and answers its heartbeat
    r.channel.send(message(XgressType.Payload, [[2257, Buffer.from([1, 2])]], 'no circuit id'));
    r.channel.send(encodePayload({ circuitId: 'nope', sequence: 0, flags: 4, rtt: 0, headers: new Map(), data: Buffer.alloc(0) }));
    r.channel.send(message(4242, [], 'what is this'));
    r.answerHeartbeats = false;
    r.channel.send(message(ChannelType.Heartbeat, [[Header.Heartbeat, u64(42n)]]));
    const beat = await r.waitFor((m) => m.headers.has(Header.HeartbeatResponse));
    expect(beat.headers.get(Header.HeartbeatResponse)!.readBigUInt64LE(0)).toBe(42n);
    r.channel.close();
    await expect.poll(() => app.router!.links.linkIds()).toEqual([]);
  });

  it('refuses another router’s certificate, a hello for another router, an unknown router, a split link', async () => {
    expect(await refusedWith(await linkTo(b), linkHello('L-2', a.id, app.router!.id))).toBe(
      `incorrect fingerprint/unenrolled router, routerId: ${a.id}`,
    );
    expect(await refusedWith(await linkTo(a), linkHello('L-3', a.id, b.id))).toBe('dialed router id does not match this router');
    expect(await refusedWith(await linkTo(a), linkHello('L-4', 'nobody', app.router!.id))).toBe('unknown/unenrolled router, routerId: nobody');
    expect(await refusedWith(await linkTo(a), linkHello('L-5', a.id, app.router!.id, [[1, Buffer.from([1])]]))).toBe('split links are not supported');
    expect(app.router!.links.linkIds()).toEqual([]);
  });

  it('closes a connection that sends no hello first, or bytes that are no frame, and keeps listening', async () => {
    const noHello = await linkTo(a);
    noHello.channel.send(message(ChannelType.Heartbeat, [[Header.Heartbeat, u64(1n)]]));
    await noHello.closed;
    const garbage = await dial(app, a, ['ziti-link'], app.router!.linkAddress);
    garbage.write(Buffer.alloc(64, 0xab));
    await new Promise((r) => garbage.once('close', r));
    const ok = await linkTo(a);
    expect((await ok.channel.hello(linkHello('L-6', a.id, app.router!.id), 5_000)).headers.get(Header.ResultSuccess)?.[0]).toBe(1);
    ok.channel.close();
  });
});
