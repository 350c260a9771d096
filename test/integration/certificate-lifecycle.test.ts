/**
 * Certificate lifecycle over three simulated years (README, "Certificate lifecycle").
 *
 * Weft runs with an injected clock (test/support/clock.ts) that the test moves forward in steps of 50 days, shorter
 * than the last third of any one-year certificate, so every renewal point is crossed and nothing can expire between
 * two steps. After each step the test runs the certificate check the timer would run (`app.certificates.check()`) and
 * then checks, at that simulated date: every renewal that was due happened (new serial, later notAfter), the admin
 * logs in, a long-lived identity extends its certificate when Weft flags it (as an SDK does) and logs in with it, a
 * new identity enrolls, and a dial through the built-in router reaches a service bound by the long-lived identity;
 * after each server renewal a trust JWT from the first day still verifies with the newly presented certificate's key.
 *
 * Real TLS, honestly checked at the simulated date: certificates issued at a simulated date start in the real
 * future, so Node's own check (which uses the real clock) would refuse them. Every TLS connection of this test (API
 * requests through undici, the router's edge channels, a control channel handshake) therefore does a real handshake
 * with `rejectUnauthorized: false` and then verifies the presented chain itself, at the simulated date, up to the
 * root CA captured at the first start (`verifyChain` with `at`), plus that the leaf names 127.0.0.1 — a connection
 * whose chain does not verify is destroyed and the request fails.
 */
import { X509Certificate } from 'node:crypto';
import { connect as tlsConnect, type PeerCertificate, type TLSSocket } from 'node:tls';
import pino from 'pino';
import { compactVerify, decodeProtectedHeader, importX509 } from 'jose';
import { buildConnector } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateInventory } from '../../src/main/core/ops/index';
import { parseCertificate, renewsAt, toPem, verifyChain } from '../../src/main/core/pki/index';
import { EdgeType, Header } from '../../src/main/router/channel/wire';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, tempDir, type TestApp } from '../support/app';
import { ManualClock } from '../support/clock';
import { ApiClient, type ConnectWith } from '../support/client';
import { deviceSession, enrolledDevice, hostsAndClientsService, RawEdge, serviceSession, type Device } from '../support/edge';
import { csr } from '../support/pki';

const DAY = 86_400_000;
const STEP_DAYS = 50;
const YEARS = 3;

const clock = new ManualClock();
const logLines: Array<Record<string, unknown>> = [];
const logger = pino({ level: 'info' }, { write: (l: string) => void logLines.push(JSON.parse(l) as Record<string, unknown>) });
let app: TestApp;
let rootPem: string;
/** the leaf certificate each listener (by port) presented last */
const presented = new Map<number, string>();

/** The peer's chain (leaf first) as PEM. */
function peerChain(socket: TLSSocket): string[] {
  const out: string[] = [];
  let c: PeerCertificate & { issuerCertificate?: PeerCertificate } = socket.getPeerCertificate(true);
  while (c?.raw) {
    out.push(toPem(c.raw, 'CERTIFICATE'));
    if (!c.issuerCertificate || c.issuerCertificate === c || c.issuerCertificate.fingerprint256 === c.fingerprint256) break;
    c = c.issuerCertificate;
  }
  return out;
}

/** What is wrong with the presented chain at the simulated date, or undefined. Records the leaf by port. */
function checkAtSimulatedDate(socket: TLSSocket): string | undefined {
  const [leaf, ...rest] = peerChain(socket);
  if (!leaf) return 'no certificate presented';
  const verified = verifyChain(leaf, { roots: [rootPem], intermediates: rest, at: clock.now() });
  if (!verified.ok) return `chain does not verify at ${clock.now().toISOString()}: ${verified.reason}`;
  if (new X509Certificate(leaf).checkIP('127.0.0.1') === undefined) return 'the certificate does not name 127.0.0.1';
  presented.set(socket.remotePort!, leaf);
  return undefined;
}

const simulatedDateConnect: ConnectWith = (tls) => {
  // no session resumption: every connection shows its certificate
  const base = buildConnector({ ...tls, rejectUnauthorized: false, maxCachedSessions: 0 });
  return (opts, callback) =>
    base(opts, (err, socket) => {
      if (err) return callback(err, null);
      const problem = checkAtSimulatedDate(socket as TLSSocket);
      if (problem) {
        socket!.destroy();
        return callback(new Error(problem), null);
      }
      callback(null, socket!);
    });
};

const client = () => new ApiClient(app.urls.api, rootPem, undefined, simulatedDateConnect);

async function edge(device: Device): Promise<RawEdge> {
  const e = await RawEdge.connect(app.urls.router!, rootPem, { cert: device.cert, key: device.key }, { rejectUnauthorized: false });
  const problem = checkAtSimulatedDate(e.socket);
  if (problem) throw new Error(`router: ${problem}`);
  return e;
}

/** A TLS handshake with the control channel (as a stock router dials it), checked at the simulated date. */
async function ctrlHandshake(): Promise<string> {
  const [, host, port] = /^tls:(.+):(\d+)$/.exec(app.urls.ctrl!)!;
  const socket = await new Promise<TLSSocket>((resolve, reject) => {
    const s = tlsConnect({ host, port: Number(port), rejectUnauthorized: false, ALPNProtocols: ['ziti-ctrl'] }, () => resolve(s));
    s.once('error', reject);
  });
  try {
    const problem = checkAtSimulatedDate(socket);
    if (problem) throw new Error(`control channel: ${problem}`);
    return presented.get(Number(port))!;
  } finally {
    socket.destroy();
  }
}

async function enroll(name: string, roleAttributes: string[]): Promise<Device> {
  const admin = client();
  await admin.login(ADMIN_USER, ADMIN_PASSWORD);
  const id = await admin.create('/identities', { name, type: 'Device', isAdmin: false, roleAttributes, enrollment: { ott: true } });
  const token = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott.token;
  await admin.close();
  const { csrPem, keyPem } = await csr('EC-P256', name);
  const r = await client().post('/enroll/ott', { token, clientCsr: csrPem }, { api: 'client' });
  if (r.status !== 200) throw new Error(`enroll ${name}: ${r.status} ${r.text}`);
  return { id, name, cert: r.body.data.cert, key: keyPem };
}

/** A certificate login; when Weft flagged the certificate for extension, extends it first (as an SDK does). */
async function certLogin(device: Device): Promise<{ api: ApiClient; token: string; extended: boolean }> {
  let api = client().withCert(device.cert, device.key);
  let r = await api.post('/authenticate?method=cert', {}, { api: 'client' });
  if (r.status !== 200) throw new Error(`cert login ${device.name}: ${r.status} ${r.text}`);
  api.token = r.body.data.token;
  const session = (await api.get('/current-api-session', { api: 'client' })).body.data;
  if (!session.isCertExtendRequested) return { api, token: api.token!, extended: false };
  const auths = (await api.get('/current-identity/authenticators', { api: 'client' })).body.data as Array<{ id: string; method: string }>;
  const auth = auths.find((a) => a.method === 'cert')!;
  const { csrPem, keyPem } = await csr('EC-P256', device.name);
  const ext = await api.post(`/current-identity/authenticators/${auth.id}/extend`, { clientCertCsr: csrPem }, { api: 'client' });
  if (ext.status !== 200) throw new Error(`extend: ${ext.status} ${ext.text}`);
  const verify = await api.post(
    `/current-identity/authenticators/${auth.id}/extend-verify`,
    { clientCert: ext.body.data.clientCert },
    { api: 'client' },
  );
  if (verify.status !== 200) throw new Error(`extend-verify: ${verify.status} ${verify.text}`);
  await api.close();
  device.cert = ext.body.data.clientCert;
  device.key = keyPem;
  api = client().withCert(device.cert, device.key);
  r = await api.post('/authenticate?method=cert', {}, { api: 'client' });
  if (r.status !== 200) throw new Error(`cert login after extension ${device.name}: ${r.status} ${r.text}`);
  api.token = r.body.data.token;
  return { api, token: api.token!, extended: true };
}

/** Host binds, a client dials through the built-in router, a byte goes across. */
async function dialThroughRouter(host: Device, dialer: Device, serviceId: string): Promise<void> {
  const h = await certLogin(host);
  const c = await certLogin(dialer);
  const he = await edge(host);
  const ce = await edge(dialer);
  try {
    expect((await he.hello(h.token)).headers.get(Header.ResultSuccess)?.[0]).toBe(1);
    expect((await ce.hello(c.token)).headers.get(Header.ResultSuccess)?.[0]).toBe(1);
    const bind = await serviceSession(h.api, serviceId, 'Bind');
    expect((await he.bind(7, bind.token)).contentType).toBe(EdgeType.StateConnected);
    const dial = await serviceSession(c.api, serviceId, 'Dial');
    const connected = ce.dial(3, dial.token);
    const incoming = await he.until(() => he.received.find((m) => m.contentType === EdgeType.Dial));
    const hostConnId = he.accept(incoming);
    expect((await connected).contentType).toBe(EdgeType.StateConnected);
    ce.send(3, 'ping');
    const got = await he.until(() => he.data.find((d) => d.connId === hostConnId && d.body.length));
    expect(got.body.toString()).toBe('ping');
  } finally {
    he.close();
    ce.close();
    await h.api.close();
    await c.api.close();
  }
}

const info = (pem: string) => parseCertificate(pem);
const routerLeaf = () => presented.get(Number(/:(\d+)$/.exec(app.urls.router!)![1]))!;

describe('certificate lifecycle', () => {
  beforeAll(async () => {
    app = await startTestApp({ clock, logger });
    rootPem = app.core.pki.root.certPem;
    await app.certificates.check(); // the one started with the app is done
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('three simulated years: every renewal happens; logins, extensions, enrollments and dials keep working', async () => {
    const admin = client();
    await admin.login(ADMIN_USER, ADMIN_PASSWORD);
    const serviceId = await hostsAndClientsService(admin, 'lifecycle-echo');
    await admin.close();
    const host = await enroll('lifecycle-host', ['hosts']);
    await dialThroughRouter(host, await enroll('client-0', ['clients']), serviceId);

    // an enrollment-time trust JWT from the first day, as an SDK may hold it: it must keep verifying with the key of
    // whatever certificate the API presents later (how SDKs check enrollment JWTs)
    const firstDayJwt = (await client().get('/network-jwts', { api: 'client' })).body.data[0].token as string;
    const firstServer = app.core.pki.server.certPem;
    const serverKey = new X509Certificate(firstServer).publicKey;
    const apiPort = Number(new URL(app.urls.api).port);
    let server = firstServer;
    let router = routerLeaf();
    let serverRenewals = 0;
    let routerRenewals = 0;
    let extensions = 0;
    const end = clock.now().getTime() + YEARS * 365 * DAY;
    for (let step = 1; clock.now().getTime() < end; step++) {
      clock.advance(STEP_DAYS * DAY);
      const now = clock.now();
      const serverDue = now >= renewsAt(info(server).notBefore, info(server).notAfter);
      const routerDue = now >= renewsAt(info(router).notBefore, info(router).notAfter);
      const result = await app.certificates.check();
      expect(result.serverRenewed, `step ${step}: server renewal`).toBe(serverDue);
      expect(result.routerRenewed, `step ${step}: router renewal`).toBe(routerDue);

      // the admin logs in (and the API listener presents the current certificate, verified at this date)
      const admin = client();
      await admin.login(ADMIN_USER, ADMIN_PASSWORD);
      const inventory = (await admin.get('/weft/certificates')).body.data as Array<{ kind: string; fingerprint: string; state: string }>;
      await admin.close();
      const current = app.core.pki.server.certPem;
      expect(presented.get(apiPort)).toBe(current);
      expect(await ctrlHandshake()).toBe(current);
      if (serverDue) {
        serverRenewals++;
        expect(info(current).serialNumber).not.toBe(info(server).serialNumber);
        expect(info(current).notAfter.getTime()).toBeGreaterThan(info(server).notAfter.getTime());
        // same key: what SDKs verify enrollment JWTs with stays the same
        expect(new X509Certificate(current).publicKey.equals(serverKey)).toBe(true);
        const alg = decodeProtectedHeader(firstDayJwt).alg!;
        await compactVerify(firstDayJwt, await importX509(presented.get(apiPort)!, alg));
        server = current;
      } else expect(current).toBe(server);
      // Weft's own certificates never come near a warning
      for (const kind of ['server', 'builtin-router-server', 'builtin-router-client']) {
        expect(inventory.find((e) => e.kind === kind)?.state, `${kind} at step ${step}`).toBe('ok');
      }

      // the long-lived identity logs in, extending when asked; a new identity enrolls; a dial goes through the router
      const before = host.cert;
      await dialThroughRouter(host, await enroll(`client-${step}`, ['clients']), serviceId);
      if (host.cert !== before) extensions++;
      const leaf = routerLeaf();
      if (routerDue) {
        routerRenewals++;
        expect(info(leaf).serialNumber).not.toBe(info(router).serialNumber);
        expect(info(leaf).notAfter.getTime()).toBeGreaterThan(info(router).notAfter.getTime());
        router = leaf;
      } else expect(leaf).toBe(router);
    }
    // one-year certificates renewed at two thirds of their lifetime: four times in three years
    expect(serverRenewals).toBe(4);
    expect(routerRenewals).toBe(4);
    expect(extensions).toBe(4);
    expect(app.core.pki.retiredServerCertPems.length).toBeGreaterThan(0);
  }, 300_000);
});

describe('certificate inventory and warnings', () => {
  const clock2 = new ManualClock();
  const lines: Array<Record<string, unknown>> = [];
  const logger2 = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const dataDir = tempDir();
  let app2: TestApp;
  afterAll(async () => {
    await app2?.stop();
  });

  it('lists every certificate for admins only; warns once per threshold; flags the identity for extension; renewal survives a restart', async () => {
    app2 = await startTestApp({ clock: clock2, logger: logger2, dataDir });
    await app2.certificates.check(); // the one started with the app is done before the clock moves
    const admin = await app2.adminClient();
    const device = await enrolledDevice(app2, admin, 'expiring-device');
    const firstKid = app2.core.jwt.kid;

    // before any simulated time passes, ordinary TLS checks work: the REST route, for admins only
    const list = await admin.get('/weft/certificates');
    expect(list.status).toBe(200);
    const entries = list.body.data as Array<Record<string, any>>;
    const kinds = new Set(entries.map((e) => e.kind));
    for (const k of [
      'root-ca',
      'intermediate-ca',
      'signing-ca',
      'server',
      'builtin-router-server',
      'builtin-router-client',
      'identity',
      'admin-client',
    ]) {
      expect(kinds.has(k), k).toBe(true);
    }
    const mine = entries.find((e) => e.kind === 'identity' && e.ownerId === device.id)!;
    expect(mine).toMatchObject({ name: 'Identity expiring-device', renewal: 'extend', state: 'ok', daysLeft: 364 });
    expect(mine.fingerprint).toBe(parseCertificate(device.cert).fingerprint);
    expect(entries.find((e) => e.kind === 'server')).toMatchObject({ renewal: 'automatic', fingerprint: firstKid });
    expect(entries.map((e) => e.notAfter)).toEqual([...entries.map((e) => e.notAfter)].sort());
    const { client: deviceApi } = await deviceSession(app2, device);
    const refused = await deviceApi.get('/weft/certificates');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
    await deviceApi.close();
    await admin.close();

    const notAfter = parseCertificate(device.cert).notAfter.getTime();
    const warnedAbout = () => lines.filter((l) => l.fingerprint === mine.fingerprint && l.level === 40).map((l) => l.msg);

    // at two thirds of its lifetime: flagged for extension (what SDKs see as isCertExtendRequested); Weft renews its own
    clock2.set(new Date(parseCertificate(device.cert).notBefore.getTime() + 250 * DAY));
    let check = await app2.certificates.check();
    expect(check).toMatchObject({ serverRenewed: true, routerRenewed: true, extensionsRequested: 1, warnings: [] });
    let inv = await certificateInventory(app2.core);
    expect(inv.find((e) => e.fingerprint === mine.fingerprint)).toMatchObject({ renewal: 'extend-requested', state: 'ok' });
    expect((await app2.certificates.check()).extensionsRequested).toBe(0); // flagged once

    // a restart keeps the renewed certificate and still accepts JWTs naming the first one (same key, not expired)
    const renewed = app2.core.pki.server.certPem;
    await app2.close();
    app2 = await startTestApp({ clock: clock2, logger: logger2, dataDir });
    await app2.certificates.check(); // the one started with the app is done before the clock moves
    expect(app2.core.pki.status).toBe('loaded');
    expect(app2.core.pki.server.certPem).toBe(renewed);
    expect(app2.core.jwt.kids.has(firstKid)).toBe(true);
    expect(app2.core.jwt.kid).not.toBe(firstKid);

    // 30, 7 and 1 days before expiry, then expired: one log line each, however often the check runs
    for (const [days, state] of [
      [30, 'warning-30'],
      [7, 'warning-7'],
      [1, 'warning-1'],
      [-1, 'expired'],
    ] as const) {
      clock2.set(new Date(notAfter - days * DAY + 60_000));
      check = await app2.certificates.check();
      expect(check.warnings.map((w) => [w.fingerprint, w.state])).toEqual([[mine.fingerprint, state]]);
      expect((await app2.certificates.check()).warnings).toEqual([]);
      inv = await certificateInventory(app2.core);
      expect(inv.find((e) => e.fingerprint === mine.fingerprint)?.state).toBe(state);
    }
    expect(warnedAbout()).toEqual([
      'certificate Identity expiring-device expires in 29 day(s)',
      'certificate Identity expiring-device expires in 6 day(s)',
      'certificate Identity expiring-device expires in 0 day(s)',
      'certificate Identity expiring-device has expired',
    ]);
    // Weft's own were renewed and stay clear of every warning
    for (const e of inv.filter((x) => x.renewal === 'automatic')) expect(e.state, e.name).toBe('ok');
  }, 120_000);
});
