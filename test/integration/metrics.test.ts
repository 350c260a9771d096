// Prometheus metrics: GET /metrics on its own listener, read by Prometheus' own parser and linter (test/prometheus),
// with what real requests, logins, policy writes and circuits through the built-in router leave in them; the bearer
// token off loopback; bad configuration; the console's last-hour samples (with an injected clock) and who may read them.
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp } from '../../src/main/app';
import type { EdgeConn } from '../../src/main/sdk';
import { MetricHistory, SAMPLE_MS, SAMPLES } from '../../src/main/metrics/history';
import type { MetricTotals } from '../../src/main/metrics/metrics';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, tempDir, useTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ConsoleClient } from '../support/consoleTrpc';
import { edgeClient, eventually, openRouter, sdkIdentity, serviceBetween, serviceSession } from '../support/overlay';
import { parsePrometheus, prometheusChecker, samplesOf, type PromParse } from '../support/prometheus';
import { createUser } from '../support/users';
import { ManualClock } from '../support/clock';

let app: TestApp;
let admin: ApiClient;
// built from the Go module proxy on a fresh machine
beforeAll(() => void prometheusChecker(), 300_000);
useTestApp((a, c) => ((app = a), (admin = c)));

async function scrape(url = app.urls.metrics!, headers: Record<string, string> = {}): Promise<PromParse> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await res.text());
}

const value = (p: PromParse, name: string, labels: Record<string, string> = {}) =>
  samplesOf(p, name, labels).reduce((n, s) => n + Number(s.value ?? 0), 0);
const count = (p: PromParse, name: string, labels: Record<string, string> = {}) => samplesOf(p, name, labels).reduce((n, s) => n + (s.count ?? 0), 0);

describe('GET /metrics', () => {
  it('parses with Prometheus’ parser, and promlint finds nothing in Weft’s own families', async () => {
    const p = await scrape();
    const ours = Object.keys(p.families).filter((n) => n.startsWith('weft_'));
    expect(ours).toEqual(
      expect.arrayContaining([
        'weft_authentications_total',
        'weft_certificate_expires_in_seconds',
        'weft_certificates',
        'weft_circuit_bytes_total',
        'weft_circuits_open',
        'weft_circuits_total',
        'weft_ctrl_routers_connected',
        'weft_policy_index_seconds_total',
        'weft_policy_index_updates_total',
        'weft_reply_cache_requests_total',
        'weft_resources',
        'weft_router_connections',
        'weft_store_transaction_seconds',
        'weft_store_transaction_wait_seconds',
      ]),
    );
    expect(p.problems.filter((x) => x.startsWith('weft_'))).toEqual([]);
    // the process's own (prom-client's defaults)
    expect(p.families.process_cpu_seconds_total?.type).toBe('COUNTER');
  });

  it('counts requests by API, route group, method and status, and reply-cache hits', async () => {
    const before = await scrape();
    const listed = (p: PromParse) =>
      count(p, 'weft_http_request_duration_seconds', { api: 'management', group: 'identities', method: 'GET', status: '200' });
    const gets = (p: PromParse, result?: string) => value(p, 'weft_reply_cache_requests_total', result ? { result } : {});
    for (let i = 0; i < 4; i++) expect((await admin.get('/identities?limit=5')).status).toBe(200);
    expect((await app.client().get('/version', { api: 'root' })).status).toBe(200);
    expect((await admin.get('/no-such-thing')).status).toBe(404);
    const after = await scrape();
    expect(listed(after) - listed(before)).toBe(4);
    // every GET is a hit or a miss; a list is kept from its second request on and served again while nothing is
    // written (for a second at most), so the later ones are hits
    expect(gets(after) - gets(before)).toBe(6);
    expect(gets(after, 'hit') - gets(before, 'hit')).toBeGreaterThanOrEqual(1);
    expect(count(after, 'weft_http_request_duration_seconds', { api: 'root', group: 'version', status: '200' })).toBeGreaterThanOrEqual(1);
    // unknown paths are one series, whatever their names
    expect(count(after, 'weft_http_request_duration_seconds', { api: 'management', group: 'other', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(after.families.weft_http_request_duration_seconds!.type).toBe('HISTOGRAM');
  });

  it('counts logins by method and outcome, and store transactions with their waits', async () => {
    const before = await scrape();
    const outcome = (p: PromParse, o: string) => value(p, 'weft_authentications_total', { method: 'password', outcome: o });
    expect(
      (await app.client().post('/authenticate?method=password', { username: ADMIN_USER, password: 'wrong-password' }, { api: 'client' })).status,
    ).toBe(401);
    const c = await app.adminClient();
    await c.close();
    const after = await scrape();
    expect(outcome(after, 'fail') - outcome(before, 'fail')).toBe(1);
    expect(outcome(after, 'success') - outcome(before, 'success')).toBe(1);
    const writes = (p: PromParse) => count(p, 'weft_store_transaction_seconds', { kind: 'write', outcome: 'commit' });
    expect(writes(after)).toBeGreaterThan(writes(before));
    expect(count(after, 'weft_store_transaction_wait_seconds', { kind: 'write' })).toBe(
      count(after, 'weft_store_transaction_seconds', { kind: 'write' }),
    );
  });

  it('counts policy index work, resources and certificate time left', async () => {
    const before = await scrape();
    const ids = await Promise.all(
      [0, 1, 2].map((i) => admin.create('/identities', { name: `m-${i}`, type: 'Device', isAdmin: false, roleAttributes: ['metrics'] })),
    );
    await admin.create('/service-policies', { name: 'm-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#metrics'], serviceRoles: ['#all'] });
    const after = await scrape();
    expect(
      value(after, 'weft_policy_index_updates_total', { kind: 'policy' }) - value(before, 'weft_policy_index_updates_total', { kind: 'policy' }),
    ).toBe(1);
    expect(
      value(after, 'weft_policy_index_updates_total', { kind: 'entity' }) - value(before, 'weft_policy_index_updates_total', { kind: 'entity' }),
    ).toBe(3);
    expect(value(after, 'weft_resources', { type: 'identities' }) - value(before, 'weft_resources', { type: 'identities' })).toBe(ids.length);
    const left = samplesOf(after, 'weft_certificate_expires_in_seconds');
    expect(left.map((s) => s.labels.kind)).toEqual(
      expect.arrayContaining(['root-ca', 'intermediate-ca', 'signing-ca', 'server', 'builtin-router-server']),
    );
    for (const s of left) expect(Number(s.value)).toBeGreaterThan(30 * 86400);
    // identities' certificates are counted by state, not listed (the admin's client certificate is one)
    expect(value(after, 'weft_certificates', { kind: 'admin-client', state: 'ok' })).toBe(1);
    expect(value(after, 'weft_certificates', { kind: 'root-ca', state: 'ok' })).toBe(1);
  });

  it('counts router connections, circuits and bytes relayed', async () => {
    await openRouter(app, admin);
    const [host, dialer] = await Promise.all([sdkIdentity(app, admin, 'metrics-host'), sdkIdentity(app, admin, 'metrics-dialer')]);
    const service = await serviceBetween(admin, 'metrics-echo', host, dialer);
    const before = await scrape();
    const hosting = edgeClient(app, host);
    const listener = hosting.listen(await serviceSession(host, service, 'Bind'));
    listener.on('connection', (conn: EdgeConn) => {
      conn.on('error', () => undefined);
      conn.pipe(conn);
    });
    await once(listener, 'bound');
    const dialing = edgeClient(app, dialer);
    try {
      const conn = await dialing.dial(await serviceSession(dialer, service, 'Dial'));
      conn.on('error', () => undefined);
      const open = await scrape();
      expect(value(open, 'weft_circuits_open')).toBe(1);
      expect(value(open, 'weft_router_connections')).toBeGreaterThanOrEqual(2);
      conn.end('0123456789');
      const chunks: Buffer[] = [];
      conn.on('data', (c: Buffer) => chunks.push(c));
      await once(conn, 'end');
      expect(Buffer.concat(chunks).toString()).toBe('0123456789');
      await eventually(() => app.router!.status().circuits.length === 0, 'the circuit to end');
      const after = await scrape();
      expect(value(after, 'weft_circuits_total') - value(before, 'weft_circuits_total')).toBe(1);
      expect(value(after, 'weft_circuits_open')).toBe(0);
      // the payload each way (the SDK's frames may carry a few bytes more than it, never less)
      for (const direction of ['in', 'out']) {
        expect(
          value(after, 'weft_circuit_bytes_total', { direction }) - value(before, 'weft_circuit_bytes_total', { direction }),
        ).toBeGreaterThanOrEqual(10);
      }
    } finally {
      dialing.close();
      hosting.close();
      await host.client.close();
      await dialer.client.close();
    }
  });

  it('serves nothing else: 404 elsewhere, 405 for other methods', async () => {
    const base = new URL(app.urls.metrics!);
    expect((await fetch(new URL('/', base))).status).toBe(404);
    expect((await fetch(base, { method: 'POST' })).status).toBe(405);
    expect((await fetch(base, { method: 'HEAD' })).status).toBe(200);
  });
});

describe('the listener', () => {
  const dir = tempDir('weft-metrics-config-');
  const tokenFile = join(dir, 'token');
  const token = 'metrics-token-0123456789abcdef';
  let secured: TestApp | undefined;
  beforeAll(() => writeFileSync(tokenFile, `${token}\n`));
  afterAll(() => secured?.stop());

  it('with a bearer token file, answers 401 without the token and 200 with it', async () => {
    const config = join(dir, 'weft.yaml');
    writeFileSync(config, `metrics:\n  bearer_token_file: ${tokenFile}\n`);
    secured = await startTestApp({ configFile: config });
    expect((await fetch(secured.urls.metrics!)).status).toBe(401);
    expect((await fetch(secured.urls.metrics!, { headers: { authorization: 'Bearer wrong-token-0123456789abcd' } })).status).toBe(401);
    const p = await scrape(secured.urls.metrics, { authorization: `Bearer ${token}` });
    expect(p.families.weft_resources).toBeDefined();
  });

  it('refuses a non-loopback address without a token, an unreadable token file, and a short token: one line naming the field', async () => {
    const cases: Array<[string, RegExp]> = [
      [`metrics:\n  address: 0.0.0.0:0\n`, /^config file .*: metrics\.address: a non-loopback address needs metrics\.bearer_token_file/],
      [`metrics:\n  bearer_token_file: ${join(dir, 'missing')}\n`, /^metrics\.bearer_token_file: cannot read .*missing \(ENOENT\)$/],
      [`metrics:\n  bearer_token_file: ${join(dir, 'short')}\n`, /^metrics\.bearer_token_file: .* at least 16 characters$/],
    ];
    writeFileSync(join(dir, 'short'), 'abc\n');
    for (const [yaml, message] of cases) {
      const config = join(dir, 'bad.yaml');
      writeFileSync(config, yaml);
      const data = tempDir();
      const err = await startApp({ configFile: config, dataDir: data }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.constructor.name).toBe('ConfigError');
      expect(err!.message).toMatch(message);
      expect(err!.message).not.toContain('\n');
    }
  });

  it('--metrics-address off starts no listener', async () => {
    const off = await startTestApp({ metricsAddress: 'off' });
    try {
      expect(off.urls.metrics).toBeUndefined();
    } finally {
      await off.stop();
    }
  });
});

describe('the console’s last hour', () => {
  it('samples rates over each interval and levels at its end, keeping an hour', () => {
    const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
    const totals: MetricTotals = { requests: 0, serverErrors: 0, loginsOk: 0, loginsFailed: 0, circuitsOpen: 0, bytes: 0 };
    const history = new MetricHistory(() => ({ ...totals }), clock);
    history.sample();
    expect(history.points()).toEqual([]);
    Object.assign(totals, { requests: 50, serverErrors: 1, loginsOk: 3, loginsFailed: 2, circuitsOpen: 4, bytes: 10_000 });
    clock.advance(SAMPLE_MS);
    history.sample();
    expect(history.points()).toEqual([
      {
        at: '2026-01-01T00:00:10.000Z',
        requestsPerSecond: 5,
        serverErrorsPerSecond: 0.1,
        loginsOk: 3,
        loginsFailed: 2,
        circuitsOpen: 4,
        bytesPerSecond: 1000,
      },
    ]);
    for (let i = 0; i < SAMPLES + 5; i++) {
      clock.advance(SAMPLE_MS);
      history.sample();
    }
    const points = history.points();
    expect(points.length).toBeLessThanOrEqual(SAMPLES);
    expect(Date.parse(points[points.length - 1]!.at) - Date.parse(points[0]!.at)).toBeLessThan(SAMPLE_MS * SAMPLES);
    expect(points[points.length - 1]).toMatchObject({ requestsPerSecond: 0, circuitsOpen: 4 });
  });

  it('reach the console for ops readers, not for other identities', async () => {
    const ui = await new ConsoleClient(app.urls.console!).login(ADMIN_USER, ADMIN_PASSWORD);
    const r = await ui.query('dataPlane.metrics');
    expect(r.status).toBe(200);
    expect(Array.isArray(r.data)).toBe(true);
    await createUser(admin, 'metrics-plain-user', 'plain-user-password-1');
    const plain = await new ConsoleClient(app.urls.console!).login('metrics-plain-user', 'plain-user-password-1');
    const refused = await plain.query('dataPlane.metrics');
    expect(refused.status).toBe(401);
  });
});
