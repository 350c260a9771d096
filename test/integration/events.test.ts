// Event loggers (config `events`, as OpenZiti's controller config writes them): OpenZiti's event shapes, one JSON
// object per line in real files, read from the outbox — no event for a rolled-back change, every committed change
// with its event, a restart going on where it stopped; a full disk never holds up the API; bad configs stop
// start-up with one line naming the field. Runs on both stores (on PostgreSQL, two nodes see every event once each).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startApp } from '../../src/main/app';
import { ConfigError } from '../../src/main/config';
import { joinedTestApp, startTestApp, tempDir, type TestApp } from '../support/app';
import { Network } from './policies-network';
import { once } from 'node:events';
import { circuitEventsOf } from '../../src/main/core/dataPlane/index';
import type { EdgeConn } from '../../src/main/sdk';
import { edgeClient, eventually, openRouter, sdkIdentity, serviceBetween, serviceSession } from '../support/overlay';
import { certLogin, clientCert, externalCa } from '../support/pki';

const ALL = ['entityChange', 'apiSession', 'session', 'circuit', 'router', 'terminator', 'authentication'].map((type) => ({ type }));

function configFile(dir: string, events: unknown): string {
  const file = join(dir, 'weft.yml');
  writeFileSync(file, stringify({ events }));
  return file;
}

const lines = (file: string): any[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
const caughtUp = (app: TestApp) => Promise.all(app.eventLoggers.map((l) => l.follower.caughtUp()));

describe('event loggers', () => {
  let net: Network;
  let dir: string;
  let allFile: string;
  let legacyFile: string;

  beforeAll(async () => {
    dir = tempDir('weft-events-');
    allFile = join(dir, 'events.json');
    legacyFile = join(dir, 'legacy.json');
    net = await Network.start({
      configFile: configFile(dir, {
        jsonLogger: { subscriptions: ALL, handler: { type: 'file', format: 'json', path: allFile } },
        legacy: {
          subscriptions: [
            { type: 'edge.apiSessions', include: 'created' },
            { type: 'entityChange', include: ['services'] },
          ],
          handler: { type: 'file', format: 'JSON', path: legacyFile, maxsizemb: 1, maxbackups: 2 },
        },
      }),
    });
  });
  afterAll(async () => {
    await net.stop();
  });

  it('writes OpenZiti-shaped events, one JSON object per line, with the fields in OpenZiti order', async () => {
    const admin = net.admin;
    const id = await admin.create('/services', { name: 'ev-svc', roleAttributes: ['ev'], encryptionRequired: true });
    expect((await admin.patch(`/services/${id}`, { roleAttributes: ['ev', 'more'] })).status).toBe(200);
    expect((await admin.del(`/services/${id}`)).status).toBe(200);
    const bad = await net.app.client().post('/authenticate?method=password', { username: 'nobody', password: 'wrong-password' });
    expect(bad.status).toBe(401);
    await caughtUp(net.app);

    const events = lines(allFile);
    const text = readFileSync(allFile, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const changes = events.filter((e) => e.namespace === 'entityChange' && (e.finalState?.id === id || e.initialState?.id === id));
    expect(changes.map((e) => e.eventType)).toEqual(['created', 'updated', 'deleted']);
    const [created, updated, deleted] = changes;
    expect(Object.keys(created)).toEqual([
      'namespace',
      'event_src_id',
      'timestamp',
      'eventId',
      'eventType',
      'metadata',
      'entityType',
      'isParentEvent',
      'initialState',
      'finalState',
    ]);
    expect(created).toMatchObject({ entityType: 'services', isParentEvent: false, initialState: null });
    expect(created.metadata).toEqual({ author: { type: 'identity', id: expect.any(String), name: expect.any(String) } });
    expect(created.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z$/);
    expect(created.finalState).toMatchObject({ id, name: 'ev-svc', roleAttributes: ['ev'], encryptionRequired: true });
    expect(updated.initialState.roleAttributes).toEqual(['ev']);
    expect(updated.finalState.roleAttributes).toEqual(['ev', 'more']);
    expect(deleted.finalState).toBeNull();
    // each change is followed by its commit
    const i = events.indexOf(created);
    expect(events[i + 1]).toEqual({
      namespace: 'entityChange',
      event_src_id: created.event_src_id,
      timestamp: created.timestamp,
      eventId: created.eventId,
      eventType: 'committed',
    });
    // the admin's login and the failed one
    const logins = events.filter((e) => e.namespace === 'authentication');
    expect(logins.at(-1)).toEqual({
      namespace: 'authentication',
      event_src_id: expect.any(String),
      timestamp: expect.any(String),
      event_type: 'fail',
      type: 'password',
      authenticator_id: '',
      external_jwt_signer_id: '',
      identity_id: '',
      auth_policy_id: '',
      remote_address: '127.0.0.1',
      success: false,
      reason: 'no identity with this username',
      improper_client_cert_chain: false,
    });
    const ok = logins.find((e) => e.event_type === 'success')!;
    expect(ok).toMatchObject({ type: 'password', success: true, identity_id: expect.any(String), authenticator_id: expect.any(String) });
    const session = events.find((e) => e.namespace === 'apiSession' && e.identity_id === ok.identity_id)!;
    expect(Object.keys(session)).toEqual([
      'namespace',
      'event_src_id',
      'timestamp',
      'event_type',
      'id',
      'type',
      'token',
      'identity_id',
      'ip_address',
    ]);
    expect(session).toMatchObject({ event_type: 'created', type: 'legacy', ip_address: '127.0.0.1' });
    expect(session.token).toMatch(/.+/);
  });

  it('sessions, terminators and the router going offline are events too, whoever writes the row', async () => {
    const router = await net.openRouting('ev-router');
    const me = await net.identity('ev-me', ['ev-me']);
    const svc = await net.service('ev-dial', ['ev-dial']);
    await net.servicePolicy('ev-dial-p', 'Dial', ['#ev-me'], ['#ev-dial']);
    const c = await net.login(me);
    const made = (await c.post('/sessions', { serviceId: svc, type: 'Dial' }, { api: 'client' })).body.data;
    expect((await c.del(`/sessions/${made.id}`, { api: 'client' })).status).toBe(200);
    const term = await net.admin.create('/terminators', { service: svc, router, binding: 'transport', address: 'tcp:127.0.0.1:1' });
    expect((await net.admin.del(`/terminators/${term}`)).status).toBe(200);
    // an identity deleted: its API sessions go by cascade, each with its event
    expect((await net.admin.del(`/identities/${me}`)).status).toBe(200);
    await caughtUp(net.app);
    const events = lines(allFile);
    const sessions = events.filter((e) => e.namespace === 'session' && e.id === made.id);
    expect(sessions.map((e) => e.event_type)).toEqual(['created', 'deleted']);
    expect(Object.keys(sessions[0])).toEqual([
      'namespace',
      'event_src_id',
      'timestamp',
      'event_type',
      'session_type',
      'provider',
      'id',
      'token',
      'api_session_id',
      'identity_id',
      'service_id',
    ]);
    expect(sessions[0]).toMatchObject({ session_type: 'Dial', provider: 'legacy', identity_id: me, service_id: svc });
    // and as entity changes, with the API's field names
    const sessionChanges = events.filter(
      (e) => e.namespace === 'entityChange' && e.entityType === 'sessions' && (e.finalState ?? e.initialState)?.id === made.id,
    );
    expect(sessionChanges.map((e) => e.eventType)).toEqual(['created', 'deleted']);
    expect(sessionChanges[0].finalState).toMatchObject({ id: made.id, type: 'Dial', serviceId: svc, identityId: me, tags: {} });
    expect(sessionChanges[1]).toMatchObject({ initialState: { id: made.id }, finalState: null });
    const termChanges = events.filter(
      (e) => e.namespace === 'entityChange' && e.entityType === 'terminators' && (e.finalState ?? e.initialState)?.id === term,
    );
    expect(termChanges.map((e) => e.eventType)).toEqual(['created', 'deleted']);
    expect(termChanges[0].finalState).toMatchObject({ serviceId: svc, routerId: router, binding: 'transport', address: 'tcp:127.0.0.1:1', cost: 0 });
    expect(JSON.stringify(termChanges)).not.toContain('identitySecret');
    const terms = events.filter((e) => e.namespace === 'terminator' && e.terminator_id === term);
    expect(terms.map((e) => e.event_type)).toEqual(['created', 'deleted']);
    expect(terms[0]).toMatchObject({ service_id: svc, router_id: router, precedence: 'default', static_cost: 0, dynamic_cost: 0 });
    expect(terms[0].total_terminators).toBe(1);
    expect(terms[1].total_terminators).toBe(0);
    expect(events.filter((e) => e.namespace === 'router' && e.router_id === router)).toEqual([
      {
        namespace: 'router',
        timestamp: expect.any(String),
        event_src_id: expect.any(String),
        event_type: 'router-online',
        router_id: router,
        router_online: true,
      },
    ]);
    expect(Object.keys(events.find((e) => e.namespace === 'router')!)).toEqual([
      'namespace',
      'timestamp',
      'event_src_id',
      'event_type',
      'router_id',
      'router_online',
    ]);
    const ended = events.filter((e) => e.namespace === 'apiSession' && e.identity_id === me);
    expect(ended.map((e) => e.event_type)).toEqual(['created', 'deleted']);
  });

  it('circuits through the built-in router: created and deleted, and a dial with no terminator failed', async () => {
    const app = net.app;
    await openRouter(app, net.admin);
    const [host, dialer] = await Promise.all([sdkIdentity(app, net.admin, 'ev-host'), sdkIdentity(app, net.admin, 'ev-dialer')]);
    const svc = await serviceBetween(net.admin, 'ev-echo', host, dialer);
    const dialing = edgeClient(app, dialer);
    const hosting = edgeClient(app, host);
    let circuitId: string;
    try {
      // nobody hosts it yet: the dial fails
      const refused = await dialing.dial(await serviceSession(dialer, svc, 'Dial')).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(refused).toBeInstanceOf(Error);
      const listener = hosting.listen(await serviceSession(host, svc, 'Bind'));
      listener.on('connection', (conn: EdgeConn) => {
        conn.on('error', () => undefined);
        conn.pipe(conn);
      });
      await once(listener, 'bound');
      const conn = await dialing.dial(await serviceSession(dialer, svc, 'Dial'));
      conn.on('error', () => undefined);
      circuitId = conn.info.circuitId!;
      conn.end('ping');
      await once(conn.resume(), 'end');
      await eventually(() => app.router!.status().circuits.length === 0, 'the circuit to end');
    } finally {
      dialing.close();
      hosting.close();
      await host.client.close();
      await dialer.client.close();
    }
    await circuitEventsOf(app.core).idle();
    await caughtUp(app);
    const circuits = lines(allFile).filter((e) => e.namespace === 'circuit' && e.service_id === svc);
    expect(circuits.map((e) => e.event_type)).toEqual(['failed', 'created', 'deleted']);
    const [failed, created, deleted] = circuits;
    expect(failed).toMatchObject({
      version: 2,
      terminator_id: '',
      failure_cause: 'NO_TERMINATORS',
      tags: { clientId: dialer.id, hostId: '', serviceId: svc },
    });
    expect(Object.keys(created)).toEqual([
      'namespace',
      'event_src_id',
      'timestamp',
      'version',
      'event_type',
      'circuit_id',
      'client_id',
      'service_id',
      'terminator_id',
      'instance_id',
      'creation_timespan',
      'path',
      'link_count',
      'path_cost',
      'tags',
    ]);
    expect(created).toMatchObject({
      circuit_id: circuitId!,
      path: { nodes: [app.router!.id], links: null, ingress_id: '', egress_id: '' },
      link_count: 0,
      path_cost: 0,
      tags: { clientId: dialer.id, hostId: host.id, serviceId: svc },
    });
    expect(Number.isInteger(created.creation_timespan)).toBe(true);
    expect(deleted).toMatchObject({ circuit_id: circuitId!, client_id: created.client_id, terminator_id: created.terminator_id });
    expect(deleted.duration).toBeGreaterThan(0);
    expect(deleted).not.toHaveProperty('creation_timespan');
  });

  it('failed certificate and external JWT logins are authentication events too', async () => {
    const stranger = await clientCert(await externalCa('Stranger CA'), { commonName: 'stranger' });
    expect((await certLogin(net.app.client(), stranger.certPem, stranger.keyPem)).resp.status).toBe(401);
    const jwt = await net.app.client().post('/authenticate?method=ext-jwt', {}, { headers: { authorization: 'Bearer not-a-jwt' } });
    expect(jwt.status).toBe(401);
    await caughtUp(net.app);
    const fails = lines(allFile).filter((e) => e.namespace === 'authentication' && e.event_type === 'fail');
    expect(fails.find((e) => e.type === 'cert')).toMatchObject({
      reason: 'certificate does not chain to a trusted CA',
      success: false,
      remote_address: '127.0.0.1',
    });
    expect(fails.find((e) => e.type === 'ext-jwt')).toMatchObject({ reason: 'not a JWT', success: false });
  });

  it('writes started in the same tick, failures among them: each committed write has one event, a refused one none', async () => {
    // 24 creates in one tick, every third a duplicate name (refused), plus deletes of half the first round
    const names = Array.from({ length: 24 }, (_, i) => `ev-burst-${i % 3 === 2 ? i - 1 : i}`);
    const made = await Promise.all(names.map((name) => net.admin.post('/services', { name, encryptionRequired: true })));
    const ids = made.filter((r) => r.status === 201).map((r) => r.body.data.id as string);
    expect(made.filter((r) => r.status !== 201).length).toBeGreaterThan(0);
    const gone = await Promise.all(ids.slice(0, 8).map((id) => net.admin.del(`/services/${id}`)));
    expect(gone.every((r) => r.status === 200)).toBe(true);
    await caughtUp(net.app);
    const changes = lines(allFile).filter((e) => e.namespace === 'entityChange' && e.entityType === 'services');
    const of = (id: string, type: string) => changes.filter((e) => e.eventType === type && (e.finalState ?? e.initialState).id === id);
    for (const id of ids) expect(of(id, 'created')).toHaveLength(1);
    for (const id of ids.slice(0, 8)) expect(of(id, 'deleted')).toHaveLength(1);
    const burst = changes.filter((e) => e.eventType === 'created' && String(e.finalState.name).startsWith('ev-burst-'));
    expect(burst).toHaveLength(ids.length);
    // in outbox order, one commit after each change
    const seqs = burst.map((e) => Number(e.eventId));
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
  });

  it("a subscription by OpenZiti's old name keeps its namespace; include filters", async () => {
    await net.admin.create('/services', { name: 'ev-legacy-svc', encryptionRequired: true });
    await caughtUp(net.app);
    const events = lines(legacyFile);
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(events.map((e) => e.namespace))).toEqual(new Set(['edge.apiSessions', 'entityChange']));
    expect(events.filter((e) => e.namespace === 'edge.apiSessions').every((e) => e.event_type === 'created')).toBe(true);
    expect(events.filter((e) => e.namespace === 'entityChange' && e.eventType !== 'committed').every((e) => e.entityType === 'services')).toBe(true);
    // every commit follows a change this logger kept
    const ids = new Set(events.filter((e) => e.eventType && e.eventType !== 'committed').map((e) => e.eventId));
    expect(events.filter((e) => e.eventType === 'committed').every((e) => ids.has(e.eventId))).toBe(true);
  });

  it('a write that rolls back leaves no event; a restart goes on where the logger stopped (nothing twice, nothing lost)', async () => {
    // the identity is inserted, then its enrollment fails in the same transaction (no such CA)
    const r = await net.admin.post('/identities', { name: 'ev-rolled-back', type: 'Device', isAdmin: false, enrollment: { ottca: 'no-such-ca' } });
    expect(r.status).toBeGreaterThanOrEqual(400);
    await caughtUp(net.app);
    expect(readFileSync(allFile, 'utf8')).not.toContain('ev-rolled-back');

    const before = lines(allFile).length;
    const dataDir = net.app.dataDir;
    const configFilePath = join(dir, 'weft.yml');
    await net.app.stop({ keepData: true });
    // changes the loggers never saw while stopped: made by a node with no loggers on the same data
    const quiet = await startTestApp({ dataDir, routerListener: 'off', ctrlListener: 'off' });
    const admin = await quiet.adminClient();
    const whileDown = await admin.create('/services', { name: 'ev-while-down', encryptionRequired: true });
    await quiet.stop({ keepData: true });
    const back = await startTestApp({ dataDir, configFile: configFilePath });
    net = Object.assign(net, { app: back, admin: await back.adminClient() });
    await caughtUp(back);
    const after = lines(allFile);
    const missed = after.slice(before).filter((e) => e.finalState?.id === whileDown);
    expect(missed).toHaveLength(1);
    const seqs = after.filter((e) => e.eventType && e.eventType !== 'committed').map((e) => e.eventId);
    expect(new Set(seqs).size).toBe(seqs.length);
  });
});

describe('a sink that cannot take events', () => {
  let app: TestApp;
  beforeAll(async () => {
    const dir = tempDir('weft-events-full-');
    app = await startTestApp({
      configFile: configFile(dir, {
        full: { subscriptions: [{ type: 'entityChange' }], handler: { type: 'file', format: 'json', path: '/dev/full' } },
      }),
      routerListener: 'off',
    });
  });
  afterAll(async () => {
    await app.stop();
  });

  it('a full disk never holds up API writes: events are dropped and counted, the API goes on', async () => {
    const admin = await app.adminClient();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await admin.create('/services', { name: `full-${i}`, encryptionRequired: true }));
    await caughtUp(app);
    const [logger] = app.eventLoggers;
    expect(logger!.follower.dropped).toBeGreaterThan(0);
    expect((await admin.get(`/services/${ids[4]}`)).status).toBe(200);
    expect(logger!.follower.position).toBeGreaterThan(0);
  });
});

describe('bad event configs stop start-up with one line naming the field, and write nothing', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    [
      'an unknown handler type',
      { x: { subscriptions: [{ type: 'apiSession' }], handler: { type: 'amqp', format: 'json' } } },
      /^.*events\.x\.handler\.type: invalid handler type amqp/,
    ],
    [
      'a format other than json',
      { x: { subscriptions: [{ type: 'apiSession' }], handler: { type: 'stdout', format: 'plain' } } },
      /events\.x\.handler\.format: invalid 'format' plain/,
    ],
    [
      'a file handler without a path',
      { x: { subscriptions: [{ type: 'apiSession' }], handler: { type: 'file', format: 'json' } } },
      /events\.x\.handler\.path: missing required 'path'/,
    ],
    [
      'an unknown event type',
      { x: { subscriptions: [{ type: 'apiSessions' }], handler: { type: 'stdout', format: 'json' } } },
      /events\.x\.subscriptions\.0\.type: unknown event type apiSessions/,
    ],
    [
      'a bad include',
      { x: { subscriptions: [{ type: 'apiSession', include: ['refreshed'] }], handler: { type: 'stdout', format: 'json' } } },
      /events\.x\.subscriptions\.0\.include: invalid include refreshed for apiSession/,
    ],
    [
      'no subscriptions',
      { x: { subscriptions: [], handler: { type: 'stdout', format: 'json' } } },
      /events\.x\.subscriptions: at least one subscription/,
    ],
    [
      'an unwritable path',
      { x: { subscriptions: [{ type: 'apiSession' }], handler: { type: 'file', format: 'json', path: '/dev/null/events.json' } } },
      /^events\.x\.handler\.path: cannot write to log file path: \/dev\/null\/events\.json/,
    ],
  ];
  for (const [what, events, message] of cases) {
    it(what, async () => {
      const dir = tempDir('weft-events-bad-');
      const dataDir = join(dir, 'data');
      const err = await startApp({ configFile: configFile(dir, events), dataDir, apiAddress: '127.0.0.1:0' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message.split('\n')).toHaveLength(1);
      expect((err as Error).message).toMatch(message);
      expect(existsSync(dataDir)).toBe(false);
    });
  }
});

describe('several nodes on one PostgreSQL database', () => {
  it.runIf(process.env.WEFT_TEST_STORE === 'postgres')("every node's logger writes every node's events, each once", async () => {
    const dirA = tempDir('weft-events-a-');
    const dirB = tempDir('weft-events-b-');
    const logger = (file: string) => ({
      all: { subscriptions: [{ type: 'entityChange', include: ['services'] }], handler: { type: 'file', format: 'json', path: file } },
    });
    const a = await startTestApp({ configFile: configFile(dirA, logger(join(dirA, 'a.json'))) });
    const b = await joinedTestApp(a, { configFile: configFile(dirB, logger(join(dirB, 'b.json'))) });
    try {
      const fromA = await (await a.adminClient()).create('/services', { name: 'made-on-a', encryptionRequired: true });
      const fromB = await (await b.adminClient()).create('/services', { name: 'made-on-b', encryptionRequired: true });
      await Promise.all([caughtUp(a), caughtUp(b)]);
      for (const file of [join(dirA, 'a.json'), join(dirB, 'b.json')]) {
        const made = lines(file).filter((e) => e.eventType === 'created');
        expect(made.filter((e) => e.finalState.id === fromA)).toHaveLength(1);
        expect(made.filter((e) => e.finalState.id === fromB)).toHaveLength(1);
      }
      const src = (file: string, id: string) => lines(file).find((e) => e.finalState?.id === id).event_src_id;
      expect(src(join(dirB, 'b.json'), fromA)).toBe(src(join(dirA, 'a.json'), fromA));
      expect(src(join(dirA, 'a.json'), fromA)).not.toBe(src(join(dirA, 'a.json'), fromB));
    } finally {
      await b.stop();
      await a.stop();
    }
  });
});
