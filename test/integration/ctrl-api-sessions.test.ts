// Legacy API sessions told to a stock router, on the wire (a scripted router; test/interop/stock-router-legacy.test.ts
// runs `ziti router run` with the Go SDK's legacy login): after the ClientHello every session as one full-state sync
// in chunks of 100 (OpenZiti's instant strategy: headers 1013/1014, a growing sync id, the last chunk marked), then
// each new session, each new session certificate (its fingerprints again) and each ended session; the router's
// RequestClientReSync gets a newer full sync, and its heartbeat's tokens of sessions that no longer exist are named
// back as removed. A burst of logins in the same tick, failures among them, reaches the router exactly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintSha1 } from '../../src/main/core/pki/index';
import { ProtoReader, ProtoWriter } from '../../src/main/ctrl/protobuf';
import { message, type Message } from '../../src/main/router/channel/wire';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { deviceSession, enrolledDevice, hostsAndClientsService, type Device } from '../support/edge';
import { certLogin, csr } from '../support/pki';
import { connectedRouter, enrolledRouter, type ScriptedRouter } from '../support/scriptedRouter';

const ADDED = 20200;
const UPDATED = 20201;
const REMOVED = 20202;
const HEARTBEAT = 20203;
const RESYNC = 20204;

interface Told {
  token: string;
  fingerprints: string[];
  id: string;
  identityId: string;
}
const sessionsIn = (m: Message, field: number): Told[] =>
  new ProtoReader(m.body).messages(field).map((s) => ({ token: s.str(1), fingerprints: s.strs(2), id: s.str(3), identityId: s.str(4) }));
const syncState = (m: Message) => JSON.parse(m.headers.get(1014)!.toString()) as { id: string; isLast: boolean; sequence: number };
const isFull = (m: Message) => m.contentType === ADDED && new ProtoReader(m.body).bool(1);

let app: TestApp;
let admin: ApiClient;
let device: Device;
let router: ScriptedRouter;

/** The full sync after message `from`: its chunks in order, once the last has come. */
async function fullSync(from: number): Promise<Message[]> {
  const last = await router.waitFor((m) => router.received.indexOf(m) >= from && isFull(m) && syncState(m).isLast);
  const id = syncState(last).id;
  return router.received.filter((m) => isFull(m) && syncState(m).id === id);
}

beforeAll(async () => {
  app = await startTestApp({ apiOidc: 'off' });
  admin = await app.adminClient();
  await hostsAndClientsService(admin, 'legacy');
  device = await enrolledDevice(app, admin, 'legacy-device', ['clients']);
});
afterAll(async () => {
  router?.channel.close();
  await admin?.close();
  await app?.stop();
});

describe('legacy API sessions over the control channel', () => {
  it('after the ClientHello: every session in one full sync with its certificate fingerprints', async () => {
    const { token } = await deviceSession(app, device);
    router = await connectedRouter(app, await enrolledRouter(app, admin, 'legacy-r1'));
    const [chunk, ...more] = await fullSync(0);
    expect(more).toHaveLength(0);
    expect(chunk!.headers.get(1013)!.toString()).toBe('instant');
    expect(syncState(chunk!)).toMatchObject({ isLast: true, sequence: 0 });
    const told = sessionsIn(chunk!, 2);
    expect(told.find((s) => s.token === token)).toMatchObject({ identityId: device.id, fingerprints: [fingerprintSha1(device.cert)] });
  });

  it('a new session, a session certificate and a logout reach the router as they happen', async () => {
    const from = router.received.length;
    const { client, token } = await deviceSession(app, device);
    const added = await router.waitFor((m) => router.received.indexOf(m) >= from && m.contentType === ADDED && !isFull(m));
    const [s] = sessionsIn(added, 2);
    expect(s).toMatchObject({ token, identityId: device.id, fingerprints: [fingerprintSha1(device.cert)] });

    const { csrPem } = await csr('EC-P256', 'legacy-ephemeral');
    const created = await client.post('/current-api-session/certificates', { csr: csrPem }, { api: 'client' });
    expect(created.status).toBe(201);
    const updated = await router.waitFor((m) => m.contentType === UPDATED);
    expect(updated.headers.get(1013)!.toString()).toBe('instant');
    expect(sessionsIn(updated, 1)).toEqual([
      { ...s, fingerprints: expect.arrayContaining([fingerprintSha1(device.cert), fingerprintSha1(created.body.data.certificate)]) },
    ]);

    expect((await client.del('/current-api-session', { api: 'client' })).status).toBe(200);
    const removed = await router.waitFor((m) => m.contentType === REMOVED);
    const r = new ProtoReader(removed.body);
    expect([r.strs(1), r.strs(2)]).toEqual([[token], [s!.id]]);
  });

  it('a heartbeat keeps live tokens and names back those of sessions that no longer exist', async () => {
    const { token } = await deviceSession(app, device);
    const from = router.received.length;
    router.channel.send(message(HEARTBEAT, [], new ProtoWriter().strings(1, [token, 'no-such-token']).finish()));
    const answer = await router.waitFor((m) => router.received.indexOf(m) >= from && m.contentType === REMOVED);
    expect(new ProtoReader(answer.body).strs(1)).toEqual(['no-such-token']);
  });

  it('logins in the same tick, failures among them: each success told once, a resync has them all in chunks of 100', async () => {
    const from = router.received.length;
    // password logins (every tenth with a wrong password; the login rate limit refuses some with 429) and the
    // device's certificate logins
    const logins = await Promise.all([
      ...Array.from({ length: 60 }, (_, i) =>
        app
          .client()
          .post('/authenticate?method=password', { username: ADMIN_USER, password: i % 10 === 0 ? 'wrong' : ADMIN_PASSWORD }, { api: 'client' }),
      ),
      ...Array.from({ length: 90 }, () => certLogin(app.client(), device.cert, device.key).then((r) => r.resp)),
    ]);
    const tokens = logins.filter((r) => r.status === 200).map((r) => r.body.data.token as string);
    expect(logins.filter((r) => r.status === 401)).toHaveLength(6);
    expect(logins.filter((r) => r.status !== 200 && r.status !== 401 && r.status !== 429)).toHaveLength(0);
    expect(tokens.length).toBeGreaterThanOrEqual(20);
    const toldTokens = () =>
      router.received
        .slice(from)
        .filter((m) => m.contentType === ADDED && !isFull(m))
        .flatMap((m) => sessionsIn(m, 2).map((s) => s.token));
    await expect.poll(() => toldTokens().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(tokens.length);
    expect(toldTokens().sort()).toEqual([...tokens].sort());

    // more than one chunk's worth
    while (tokens.length <= 100) tokens.push((await deviceSession(app, device)).token);
    const before = syncState((await fullSync(0)).at(-1)!).id;
    const at = router.received.length;
    router.channel.send(message(RESYNC, [], new ProtoWriter().bytes(1, 'test').finish()));
    const chunks = await fullSync(at);
    expect(chunks.map((c) => syncState(c).sequence)).toEqual(chunks.map((_, i) => i));
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks.slice(0, -1).every((c) => sessionsIn(c, 2).length === 100)).toBe(true);
    expect(syncState(chunks[0]!).id > before).toBe(true);
    const all = chunks.flatMap((c) => sessionsIn(c, 2).map((s) => s.token));
    expect(all).toEqual(expect.arrayContaining(tokens));
    expect(new Set(all).size).toBe(all.length);
  });
});
