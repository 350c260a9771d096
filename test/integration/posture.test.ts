import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../support/clock';
import { Network } from './policies-network';

let net: Network;
// the certificates TLS clients check against the real clock are renewed by this one: it starts at the real time
const clock = new ManualClock(new Date(Math.floor(Date.now() / 60_000) * 60_000));

beforeAll(async () => {
  net = await Network.start({ clock });
  await net.openRouting('pc-open');
});
afterAll(async () => {
  await net.stop();
});

describe('posture checks: types and CRUD', () => {
  it('lists the six posture check types', async () => {
    const r = await net.admin.get('/posture-check-types?limit=100');
    expect(r.body.data.map((t: any) => t.id).sort()).toEqual(['DOMAIN', 'MAC', 'MFA', 'OS', 'PROCESS', 'PROCESS_MULTI']);
    expect((await net.admin.get('/posture-check-types/OS')).body.data).toMatchObject({
      name: 'Operating System Check',
      version: '1',
      operatingSystems: expect.arrayContaining([{ type: 'Linux', versions: [] }]),
    });
  });

  it('every type is created with its own body, validated, versioned on update; the type is fixed', async () => {
    const bodies: Record<string, object> = {
      DOMAIN: { domains: ['corp.example'] },
      MAC: { macAddresses: ['AA:BB:CC:DD:EE:FF'] },
      OS: {
        operatingSystems: [
          { type: 'Linux', versions: ['>=5.0.0'] },
          { type: 'Windows', versions: [] },
        ],
      },
      PROCESS: { process: { osType: 'Linux', path: '/usr/bin/agent', hashes: ['ab12'], signerFingerprint: 'ff00' } },
      PROCESS_MULTI: {
        semantic: 'AllOf',
        processes: [
          { osType: 'macOS', path: '/bin/a' },
          { osType: 'macOS', path: '/bin/b', hashes: ['01'] },
        ],
      },
      MFA: { timeoutSeconds: 600, promptOnWake: true, promptOnUnlock: false, ignoreLegacyEndpoints: true },
    };
    for (const [typeId, body] of Object.entries(bodies)) {
      const id = await net.admin.create('/posture-checks', { name: `crud-${typeId}`, typeId, roleAttributes: ['crud'], ...body });
      const g = (await net.admin.get(`/posture-checks/${id}`)).body.data;
      expect(g, typeId).toMatchObject({ id, name: `crud-${typeId}`, typeId, version: 1, roleAttributes: ['crud'], tags: {}, ...body });
    }
    const mfa = (await net.admin.get(`/posture-checks?filter=${encodeURIComponent('typeId = "MFA"')}`)).body.data[0];
    expect((await net.admin.patch(`/posture-checks/${mfa.id}`, { promptOnUnlock: true })).status).toBe(200);
    expect((await net.admin.get(`/posture-checks/${mfa.id}`)).body.data).toMatchObject({
      version: 2,
      timeoutSeconds: 600,
      promptOnUnlock: true,
      promptOnWake: true,
    });
    const changeType = await net.admin.patch(`/posture-checks/${mfa.id}`, { typeId: 'OS' });
    expect(changeType.status).toBe(400);
    expect(changeType.body.error.cause.field).toBe('typeId');
    const dom = (await net.admin.get(`/posture-checks?filter=${encodeURIComponent('typeId = "DOMAIN"')}`)).body.data[0];
    expect((await net.admin.put(`/posture-checks/${dom.id}`, { name: 'crud-DOMAIN', domains: ['other.example'] })).status).toBe(200);
    expect((await net.admin.get(`/posture-checks/${dom.id}`)).body.data).toMatchObject({
      domains: ['other.example'],
      roleAttributes: [],
      version: 2,
    });
    expect((await net.admin.put(`/posture-checks/${dom.id}`, { name: 'crud-DOMAIN' })).body.error.cause.field).toBe('domains');
    const invalid: Array<[object, string]> = [
      [{ typeId: 'DOMAIN', domains: [] }, 'domains'],
      [{ typeId: 'DOMAIN' }, 'domains'],
      [{ typeId: 'MAC', macAddresses: [] }, 'macAddresses'],
      [{ typeId: 'OS', operatingSystems: [{ type: 'Plan9', versions: [] }] }, 'operatingSystems.0.type'],
      [{ typeId: 'PROCESS', process: { osType: 'Linux' } }, 'process.path'],
      [{ typeId: 'PROCESS_MULTI', processes: [{ osType: 'Linux', path: '/x' }] }, 'semantic'],
      [{ typeId: 'MFA', timeoutSeconds: 'soon' }, 'timeoutSeconds'],
      [{ typeId: 'NOPE' }, 'typeId'],
      [{ typeId: 'MFA', roleAttributes: ['#bad'] }, 'roleAttributes'],
    ];
    for (const [body, field] of invalid) {
      const r = await net.admin.post('/posture-checks', { name: 'bad-check', ...body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.cause.field, JSON.stringify(body)).toBe(field);
    }
    expect((await net.admin.get(`/posture-checks?filter=${encodeURIComponent('name = "bad-check"')}`)).body.data).toEqual([]);
    expect((await net.admin.del(`/posture-checks/${dom.id}`)).status).toBe(200);
  });
});

describe('posture in action', () => {
  it('a failing check blocks sessions (409 INVALID_POSTURE) and is recorded; passing it lets them through; failing again kills them', async () => {
    const me = await net.identity('pa-me', ['pa-eng']);
    const svc = await net.service('pa-svc', ['pa-web']);
    const domain = await net.admin.create('/posture-checks', {
      name: 'pa-domain',
      typeId: 'DOMAIN',
      domains: ['corp.example'],
      roleAttributes: ['pa-checks'],
    });
    const p = await net.servicePolicy('pa-p', 'Dial', ['#pa-eng'], ['#pa-web'], { postureCheckRoles: ['#pa-checks'] });
    const c = await net.login(me);
    // the service shows its posture queries, failing
    const view = (await c.get(`/services/${svc}`, { api: 'client' })).body.data;
    expect(view.postureQueries).toEqual([
      {
        policyId: p,
        policyType: 'Dial',
        isPassing: false,
        postureQueries: [
          expect.objectContaining({ id: domain, queryType: 'DOMAIN', isPassing: false, timeout: -1, timeoutRemaining: -1, timeoutAt: null }),
        ],
      },
    ]);
    const refused = await c.post('/sessions', { serviceId: svc }, { api: 'client' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('INVALID_POSTURE');
    expect(refused.body.error.cause.value[p][0]).toMatchObject({
      postureCheckId: domain,
      postureCheckName: 'pa-domain',
      postureCheckType: 'DOMAIN',
      actualValue: '',
      expectedValue: ['corp.example'],
    });
    const failures = (await net.admin.get(`/identities/${me}/failed-service-requests`)).body.data;
    expect(failures).toEqual([
      {
        apiSessionId: expect.any(String),
        serviceId: svc,
        serviceName: 'pa-svc',
        sessionType: 'Dial',
        when: clock.now().toISOString(),
        policyFailures: [
          {
            policyId: p,
            policyName: 'pa-p',
            checks: [expect.objectContaining({ postureCheckId: domain, postureCheckName: 'pa-domain', postureCheckType: 'DOMAIN' })],
          },
        ],
      },
    ]);
    // report the right domain
    const resp = await c.post('/posture-response', { id: domain, typeId: 'DOMAIN', domain: 'CORP.example' }, { api: 'client' });
    expect(resp.status).toBe(201);
    expect(resp.body.data).toEqual({ services: [] });
    expect((await c.get(`/services/${svc}`, { api: 'client' })).body.data.postureQueries[0].isPassing).toBe(true);
    const ok = await c.post('/sessions', { serviceId: svc }, { api: 'client' });
    expect(ok.status).toBe(201);
    expect((await net.admin.get(`/sessions/${ok.body.data.id}`)).body.data.servicePolicies.map((x: any) => x.id)).toEqual([p]);
    const data = (await net.admin.get(`/identities/${me}/posture-data`)).body.data;
    expect(data.domain).toEqual({ domain: 'CORP.example', postureCheckId: domain, lastUpdatedAt: clock.now().toISOString(), timedOut: false });
    expect(Object.keys(data.apiSessionPostureData)).toHaveLength(1);
    // the wrong domain again: the session is gone
    await c.post('/posture-response-bulk', [{ id: domain, typeId: 'DOMAIN', domain: 'home.example' }], { api: 'client' });
    expect((await net.admin.get(`/sessions/${ok.body.data.id}`)).status).toBe(404);
    expect((await net.admin.get(`/identities/${me}/failed-service-requests`)).body.data).toHaveLength(1);
  });

  it('a service reachable through two policies passes when either policy passes', async () => {
    const me = await net.identity('two-me', ['two-eng']);
    const svc = await net.service('two-svc', ['two-web']);
    const mac = await net.admin.create('/posture-checks', { name: 'two-mac', typeId: 'MAC', macAddresses: ['aa:bb:cc:00:11:22'] });
    const os = await net.admin.create('/posture-checks', {
      name: 'two-os',
      typeId: 'OS',
      operatingSystems: [{ type: 'Linux', versions: ['>=5.10.0 <7.0.0'] }],
    });
    await net.servicePolicy('two-mac-p', 'Dial', ['#two-eng'], ['#two-web'], { postureCheckRoles: [`@${mac}`] });
    await net.servicePolicy('two-os-p', 'Dial', ['#two-eng'], ['#two-web'], { postureCheckRoles: [`@${os}`] });
    const c = await net.login(me);
    const refused = await c.post('/sessions', { serviceId: svc }, { api: 'client' });
    expect(refused.status).toBe(409);
    expect(Object.keys(refused.body.error.cause.value)).toHaveLength(2);
    await c.post('/posture-response', { id: os, typeId: 'OS', type: 'Linux', version: '4.19.0' }, { api: 'client' });
    expect((await c.post('/sessions', { serviceId: svc }, { api: 'client' })).status).toBe(409);
    await c.post('/posture-response', { id: os, typeId: 'OS', type: 'linux', version: '6.1.0', build: 'x' }, { api: 'client' });
    expect((await c.post('/sessions', { serviceId: svc }, { api: 'client' })).status).toBe(201);
    const bulk = await c.post(
      '/posture-response-bulk',
      [
        { id: mac, typeId: 'MAC', macAddresses: ['AA-BB-CC-00-11-22'] },
        { id: os, typeId: 'OS', type: 'Windows', version: '10.0.0' },
      ],
      { api: 'client' },
    );
    expect(bulk.status).toBe(200);
    expect(bulk.body.data).toEqual({ services: [] });
    const qs = (await c.get(`/services/${svc}`, { api: 'client' })).body.data.postureQueries;
    expect(qs.map((q: any) => q.isPassing).sort()).toEqual([false, true]);
    expect((await c.get('/sessions', { api: 'client' })).body.data).toHaveLength(1);
  });

  it('process checks compare path, hashes and signers; multi-process checks honour AllOf/AnyOf', async () => {
    const me = await net.identity('proc-me', ['proc-eng']);
    const one = await net.service('proc-one', ['proc-one']);
    const many = await net.service('proc-many', ['proc-many']);
    const proc = await net.admin.create('/posture-checks', {
      name: 'proc-check',
      typeId: 'PROCESS',
      process: { osType: 'Linux', path: '/opt/av', hashes: ['AB:CD'], signerFingerprint: 'F0F0' },
    });
    const multi = await net.admin.create('/posture-checks', {
      name: 'proc-multi',
      typeId: 'PROCESS_MULTI',
      semantic: 'AllOf',
      processes: [
        { osType: 'Linux', path: '/opt/a' },
        { osType: 'Linux', path: '/opt/b', signerFingerprints: ['0101'] },
      ],
    });
    await net.servicePolicy('proc-one-p', 'Dial', ['#proc-eng'], ['#proc-one'], { postureCheckRoles: [`@${proc}`] });
    await net.servicePolicy('proc-many-p', 'Dial', ['#proc-eng'], ['#proc-many'], { postureCheckRoles: [`@${multi}`] });
    const c = await net.login(me);
    const dial = async (svc: string) => (await c.post('/sessions', { serviceId: svc }, { api: 'client' })).status;
    await c.post(
      '/posture-response',
      { id: proc, typeId: 'PROCESS', path: '/opt/av', isRunning: true, hash: 'abcd', signerFingerprints: ['0000'] },
      { api: 'client' },
    );
    expect(await dial(one)).toBe(409);
    await c.post(
      '/posture-response',
      { id: proc, typeId: 'PROCESS', path: '/opt/av', isRunning: true, hash: 'abcd', signerFingerprints: ['f0f0'] },
      { api: 'client' },
    );
    expect(await dial(one)).toBe(201);
    const pq = (await c.get(`/services/${one}`, { api: 'client' })).body.data.postureQueries[0].postureQueries[0];
    expect(pq).toMatchObject({ queryType: 'PROCESS', isPassing: true, process: { osType: 'Linux', path: '/opt/av' } });
    await c.post('/posture-response', { id: multi, typeId: 'PROCESS', path: '/opt/a', isRunning: true }, { api: 'client' });
    expect(await dial(many)).toBe(409);
    await c.post(
      '/posture-response',
      { id: multi, typeId: 'PROCESS', path: '/opt/b', isRunning: true, signerFingerprints: ['01:01'] },
      { api: 'client' },
    );
    expect(await dial(many)).toBe(201);
    expect((await c.get(`/services/${many}`, { api: 'client' })).body.data.postureQueries[0].postureQueries[0].processes).toEqual([
      { osType: 'Linux', path: '/opt/a' },
      { osType: 'Linux', path: '/opt/b' },
    ]);
    const pd = (await net.admin.get(`/identities/${me}/posture-data`)).body.data;
    expect(pd.processes.map((p: any) => p.path).sort()).toEqual(['/opt/a', '/opt/av', '/opt/b']);
  });

  it('an MFA check needs a session that passed MFA (the seam with the MFA module), within its timeout', async () => {
    const me = await net.identity('mfa-me', ['mfa-eng']);
    const svc = await net.service('mfa-svc', ['mfa-web']);
    const check = await net.admin.create('/posture-checks', { name: 'mfa-check', typeId: 'MFA', timeoutSeconds: 600, promptOnWake: true });
    await net.servicePolicy('mfa-p', 'Dial', ['#mfa-eng'], ['#mfa-web'], { postureCheckRoles: [`@${check}`] });
    const c = await net.login(me);
    const refused = await c.post('/sessions', { serviceId: svc }, { api: 'client' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.cause.value[Object.keys(refused.body.error.cause.value)[0]!][0]).toMatchObject({
      postureCheckType: 'MFA',
      actualValue: { passedMfa: false },
      expectedValue: { passedMfa: true, passedOnWake: true },
    });
    // what the MFA module records once the identity has TOTP and the session proves a code
    const apiSession = (await c.get('/current-api-session', { api: 'client' })).body.data.id;
    const core = net.app.core;
    await core.store.runSql(
      "INSERT INTO mfas (id, identity_id, secret, is_verified, created_at, updated_at) VALUES ('mfa-seam', ?, 'unused', 1, '', '')",
      me,
    );
    await core.store.runSql('UPDATE api_sessions SET is_mfa_complete = 1, mfa_passed_at = ? WHERE id = ?', clock.now().toISOString(), apiSession);
    const q = (await c.get(`/services/${svc}`, { api: 'client' })).body.data.postureQueries[0].postureQueries[0];
    expect(q).toMatchObject({ queryType: 'MFA', isPassing: true, timeout: 600, timeoutRemaining: 600, promptOnWake: true, promptOnUnlock: false });
    const s = await c.post('/sessions', { serviceId: svc }, { api: 'client' });
    expect(s.status).toBe(201);
    // waking up: the MFA timer drops to the grace period and the service says so
    clock.advance(60_000);
    const woke = await c.post('/posture-response', { id: check, typeId: 'ENDPOINT_STATE', woken: true }, { api: 'client' });
    expect(woke.body.data.services).toEqual([{ id: svc, name: 'mfa-svc', postureQueryType: 'MFA', timeout: 600, timeoutRemaining: 300 }]);
    expect((await c.get(`/services/${svc}`, { api: 'client' })).body.data.postureQueries[0].postureQueries[0].timeoutRemaining).toBe(300);
    // still passing within the grace period; after it the check fails and new sessions are refused
    expect((await c.post('/sessions', { serviceId: svc }, { api: 'client' })).status).toBe(201);
    clock.advance(301_000);
    expect((await c.get(`/services/${svc}`, { api: 'client' })).body.data.postureQueries[0].isPassing).toBe(false);
    await c.del(`/sessions/${s.body.data.id}`, { api: 'client' });
    expect((await c.post('/sessions', { serviceId: svc }, { api: 'client' })).status).toBe(409);
    const pd = (await net.admin.get(`/identities/${me}/posture-data`)).body.data;
    expect(pd.apiSessionPostureData[apiSession]).toMatchObject({ mfa: { apiSessionId: apiSession, passedMfa: true, passedOnWake: false } });
    await core.store.runSql("DELETE FROM mfas WHERE id = 'mfa-seam'");
  });

  it('bad posture responses are field errors', async () => {
    const me = await net.identity('pr-bad');
    const c = await net.login(me);
    const cases: Array<[unknown, string, boolean]> = [
      [{ typeId: 'DOMAIN', domain: 'x' }, 'id', false],
      [{ id: 'x', typeId: 'DOMAIN' }, 'domain', false],
      [{ id: 'x', typeId: 'OS', type: 'Linux' }, 'version', false],
      [{ id: 'x', typeId: 'MFA' }, 'typeId', false],
      [{ id: 'x', typeId: 'WHAT' }, 'typeId', false],
      [[{ id: 'x', typeId: 'MAC', macAddresses: 'aa' }], '0.macAddresses', true],
      [{ id: 'x', typeId: 'DOMAIN', domain: 'x' }, '(root)', true],
    ];
    for (const [body, field, bulk] of cases) {
      const r = await c.post(bulk ? '/posture-response-bulk' : '/posture-response', body, { api: 'client' });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.cause.field, JSON.stringify(body)).toBe(field);
    }
  });
});
