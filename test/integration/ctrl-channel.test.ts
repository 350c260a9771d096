// The control channel stock OpenZiti routers dial, driven by a scripted router speaking OpenZiti's channel framing
// (the project's own Channel as the dialing side): mTLS with the enrolled certificate, ALPN ziti-ctrl, the hello and
// its result, heartbeats both ways, the edge router record online while connected, and the refusals.
import { rmSync, writeFileSync } from 'node:fs';
import { connect, type TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelType, getU64, Header, MAGIC, message, PREFIX_BYTES, str, u64, type Message } from '../../src/main/router/channel/wire';
import { CtrlHeader } from '../../src/main/ctrl/routerChannel';
import { controllerId } from '../../src/main/core/ops/index';
import { startTestApp, tempDir, type TestApp } from '../support/app';
import { rawSql } from '../support/rawDb';
import type { ApiClient } from '../support/client';
import {
  dial as dialCtrl,
  enrolledRouter as enrolledCtrlRouter,
  isOnline as routerOnline,
  ROUTER_VERSION as VERSION,
  ScriptedRouter,
  type Enrolled,
} from '../support/scriptedRouter';
import { csr, csrWithSans } from '../support/pki';

let app: TestApp;
let admin: ApiClient;
/** this controller's id (the Id header of the hello's result) */
let selfId: string;

beforeAll(async () => {
  const dir = tempDir();
  const configFile = join(dir, 'weft.yml');
  // fast heartbeats: a silent router is dropped within a second or so
  writeFileSync(configFile, 'ctrl:\n  heartbeat_interval: 50ms\n  unresponsive_timeout: 300ms\n');
  app = await startTestApp({ configFile });
  admin = await app.adminClient();
  selfId = await controllerId(app.core);
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

async function enrolledRouter(name: string): Promise<Enrolled> {
  return enrolledCtrlRouter(app, admin, name);
}

const dial = (cert?: { keyPem: string; certPem: string }, alpn?: string[]) => dialCtrl(app, cert, alpn);
const isOnline = (id: string) => routerOnline(admin, id);

async function connectRouter(r: Enrolled, helloAs = r.id): Promise<{ router: ScriptedRouter; result: Message }> {
  const router = new ScriptedRouter(await dial(r));
  const result = await router.hello(helloAs);
  return { router, result };
}

const success = (m: Message) => m.contentType === ChannelType.Result && m.headers.get(Header.ResultSuccess)?.[0] === 1;

describe('control channel', () => {
  it('accepts an enrolled router: the result carries the controller headers; the router is online while connected', async () => {
    const r = await enrolledRouter('ctrl-a');
    expect(await isOnline(r.id)).toBe(false);
    const { router, result } = await connectRouter(r);
    expect(router.socket.alpnProtocol).toBe('ziti-ctrl');
    expect(success(result)).toBe(true);
    expect(result.sequence).not.toBe(0);
    expect(result.headers.get(Header.ReplyFor)!.readInt32LE(0)).toBe(-1);
    expect(result.headers.get(Header.HelloVersion)!.toString().split('|')).toHaveLength(5);
    // OpenZiti v1.7.2's default: create terminator v2, single router link source, create circuit v2, router data model
    expect(result.headers.get(CtrlHeader.Capabilities)).toEqual(Buffer.from([0x1e]));
    expect(result.headers.get(Header.Id)!.toString()).toBe(selfId);
    expect(result.headers.get(Header.ConnectionId)!.length).toBeGreaterThan(0);
    expect(await isOnline(r.id)).toBe(true);

    // heartbeats: the controller's arrive (header 5, nanoseconds) and ours are answered (header 6, the same value)
    const theirs = await router.waitFor((m) => getU64(m.headers, Header.Heartbeat) !== undefined);
    expect(Number(getU64(theirs.headers, Header.Heartbeat)! / 1_000_000n)).toBeGreaterThan(Date.now() - 60_000);
    router.channel.send(message(ChannelType.Heartbeat, [[Header.Heartbeat, u64(123456789n)]]));
    await router.waitFor((m) => getU64(m.headers, Header.HeartbeatResponse) === 123456789n);
    // a ping is answered; a content type the controller does not serve (metrics) is ignored, the channel stays up
    router.channel.send(message(1007, [], Buffer.from([8, 1])));
    const pong = await router.channel.request(message(ChannelType.Ping), 5_000);
    expect(success(pong)).toBe(true);
    // answered heartbeats keep it connected past several unresponsive timeouts (counted on the controller's side)
    const ch = app.ctrl!.channelOf(r.id)!;
    const answered = ch.heartbeats.answered;
    await router.waitFor(() => ch.heartbeats.answered >= answered + 15);
    expect(router.channel.closed).toBe(false);
    expect(ch.ignored.get(1007)).toBe(1);

    router.channel.close();
    await router.closed;
    await app.ctrl!.channelOf(r.id)?.settled();
    await expect.poll(() => isOnline(r.id)).toBe(false);
  });

  it('/controllers names the control channel as this controller’s ctrlAddress (what router JWTs carry in ctrls)', async () => {
    const ctrls = (await admin.get('/controllers')).body.data as Array<{ id: string; ctrlAddress: string }>;
    expect(ctrls.find((c) => c.id === selfId)?.ctrlAddress).toBe(app.urls.ctrl);
  });

  it('drops a router that answers no heartbeat, and marks it offline', async () => {
    const r = await enrolledRouter('ctrl-silent');
    const { router } = await connectRouter(r);
    router.answerHeartbeats = false;
    await router.closed;
    await expect.poll(() => isOnline(r.id)).toBe(false);
  });

  it('refuses another router certificate, an unknown router, a half-enrolled router and a disabled one', async () => {
    const a = await enrolledRouter('ctrl-b');
    const b = await enrolledRouter('ctrl-c');
    // a's certificate, b's id: the leaf's fingerprint is not b's
    const stolen = await connectRouter(a, b.id);
    expect(success(stolen.result)).toBe(false);
    expect(stolen.result.body.toString()).toContain('incorrect fingerprint');
    await stolen.router.closed;
    const unknown = await connectRouter(a, 'no-such-router');
    expect(unknown.result.body.toString()).toContain('unknown/unenrolled router');
    // created, never enrolled
    const half = (await admin.post('/edge-routers', { name: 'ctrl-half', isTunnelerEnabled: false })).body.data.id as string;
    const halfResult = await connectRouter(a, half);
    expect(halfResult.result.body.toString()).toContain('router enrollment incomplete');
    await admin.patch(`/edge-routers/${b.id}`, { disabled: true });
    const disabled = await connectRouter(b);
    expect(success(disabled.result)).toBe(false);
    expect(disabled.result.body.toString()).toContain('router disabled');
    for (const id of [a.id, b.id, half]) expect(await isOnline(id)).toBe(false);
  });

  it('closes the channel of a router that is disabled or re-enrolled while connected', async () => {
    const r = await enrolledRouter('ctrl-d');
    const first = await connectRouter(r);
    expect(await isOnline(r.id)).toBe(true);
    await admin.patch(`/edge-routers/${r.id}`, { disabled: true });
    await first.router.closed;
    await expect.poll(() => isOnline(r.id)).toBe(false);
    await admin.patch(`/edge-routers/${r.id}`, { disabled: false });
    const second = await connectRouter(r);
    expect(success(second.result)).toBe(true);
    expect(await isOnline(r.id)).toBe(true);
    await admin.post(`/edge-routers/${r.id}/re-enroll`, {});
    await second.router.closed;
    await expect.poll(() => isOnline(r.id)).toBe(false);
  });

  it('a router that connects again replaces its old channel and stays online', async () => {
    const r = await enrolledRouter('ctrl-e');
    const first = await connectRouter(r);
    const second = await connectRouter(r);
    expect(success(second.result)).toBe(true);
    await first.router.closed;
    await app.ctrl!.channelOf(r.id)?.settled();
    expect(app.ctrl!.channelOf(r.id)).toBeDefined();
    expect(await isOnline(r.id)).toBe(true);
    second.router.channel.close();
    await second.router.closed;
    await expect.poll(() => isOnline(r.id)).toBe(false);
  });

  it('refuses a hello without a version header, and a first frame that is not a hello', async () => {
    const r = await enrolledRouter('ctrl-f');
    const noVersion = new ScriptedRouter(await dial(r));
    const result = await noVersion.hello(r.id, []);
    expect(success(result)).toBe(false);
    expect(result.body.toString()).toContain('no version info header');
    const notHello = new ScriptedRouter(await dial(r));
    notHello.channel.send(message(ChannelType.Ping));
    await notHello.closed;
    expect(await isOnline(r.id)).toBe(false);
  });

  it('bounds what comes before the hello: a frame declaring more than a hello may hold is refused from its prefix', async () => {
    const r = await enrolledRouter('ctrl-g');
    const socket = await dial(r);
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    // the prefix of a hello declaring 1 MiB of headers: nothing of it is sent, the connection ends on the prefix
    const prefix = Buffer.alloc(PREFIX_BYTES);
    prefix.writeUInt32LE(MAGIC, 0);
    prefix.writeInt32LE(ChannelType.Hello, 4);
    prefix.writeInt32LE(-1, 8);
    prefix.writeUInt32LE(1 << 20, 12);
    prefix.writeUInt32LE(0, 16);
    socket.write(prefix);
    await closed;
    // a hello body over the limit (OpenZiti's 4192 bytes) is refused too
    const big = new ScriptedRouter(await dial(r));
    big.channel.send({ ...message(ChannelType.Hello, [[Header.HelloVersion, str(VERSION)]], 'x'.repeat(5000)), sequence: -1 });
    await big.closed;
    expect(await isOnline(r.id)).toBe(false);
  });

  it('stopping Weft closes the routers’ channels and leaves them offline', async () => {
    const other = await startTestApp();
    let closed = false;
    try {
      const otherAdmin = await other.adminClient();
      const id = (await otherAdmin.post('/edge-routers', { name: 'ctrl-stop', isTunnelerEnabled: false })).body.data.id as string;
      const token = (await otherAdmin.get(`/edge-routers/${id}`)).body.data.enrollmentToken as string;
      const client = await csr('EC-P256', id);
      const server = await csrWithSans(id, ['localhost'], ['127.0.0.1']);
      const certPem = (await other.client().post('/enroll/erott', { token, certCsr: client.csrPem, serverCertCsr: server.csrPem }, { api: 'client' }))
        .body.data.cert as string;
      await otherAdmin.close();
      const { port } = /:(?<port>\d+)$/.exec(other.urls.ctrl!)!.groups!;
      const socket = await new Promise<TLSSocket>((resolve, reject) => {
        const s = connect({
          host: '127.0.0.1',
          port: Number(port),
          ca: other.core.pki.caBundlePem,
          key: client.keyPem,
          cert: certPem,
          ALPNProtocols: ['ziti-ctrl'],
        });
        s.once('secureConnect', () => resolve(s));
        s.once('error', reject);
      });
      const router = new ScriptedRouter(socket);
      expect(success(await router.hello(id))).toBe(true);
      expect(await rawSql(other, 'SELECT is_online FROM edge_routers WHERE id = ?', id)).toEqual([{ is_online: 1 }]);
      await other.close();
      closed = true;
      await router.closed;
      expect(await rawSql(other, 'SELECT is_online FROM edge_routers WHERE id = ?', id)).toEqual([{ is_online: 0 }]);
    } finally {
      if (!closed) await other.close();
      rmSync(other.dataDir, { recursive: true, force: true });
    }
  });

  it('a TLS client asking for another application protocol is refused in the handshake', async () => {
    const r = await enrolledRouter('ctrl-h');
    await expect(dial(r, ['h2'])).rejects.toThrow(/no application protocol|alert/i);
  });
});
