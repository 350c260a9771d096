// The real `ziti` CLI (pinned OpenZiti release, scripts/openziti-tools.sh) managing a network through `npm start`'s
// controller on port 0: login, create/list/update/delete of every resource kind, filters, policy advice, errors.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pkcs7ToPems } from '../../src/main/core/pki/index';
import { tempDir } from '../support/app';
import type { ApiClient } from '../support/client';
import { externalCa } from '../support/pki';
import { startWeftProcess, type WeftProcess } from '../support/weftProcess';
import { openzitiTools, ZitiCli } from './tools';

const PASSWORD = 'interop-admin-password-1';
let weft: WeftProcess;
let cli: ZitiCli;
let admin: ApiClient;

beforeAll(async () => {
  const tools = openzitiTools();
  weft = await startWeftProcess(tempDir(), ['--api-address', '127.0.0.1:0', '--console-address', '127.0.0.1:0'], {
    WEFT_ADMIN_USERNAME: 'admin',
    WEFT_ADMIN_PASSWORD: PASSWORD,
  });
  cli = new ZitiCli(tools.ziti);
  admin = await weft.login('admin', PASSWORD);
});
afterAll(async () => {
  await admin?.close();
  await weft?.stop();
});

/** One entity of a `ziti edge list <kind> 'name = "<name>"' -j`. */
async function one(kind: string, name: string): Promise<any> {
  const r = await cli.json('edge', 'list', kind, `name = "${name}"`);
  expect(r.data, `${kind} ${name}`).toHaveLength(1);
  return r.data[0];
}

describe('ziti CLI against npm start', { timeout: 120_000 }, () => {
  it('ziti edge login -y, and with --ca the bundle from /.well-known/est/cacerts', async () => {
    expect(await cli.ok('edge', 'login', weft.api, '-u', 'admin', '-p', PASSWORD, '-y')).toMatch(/Token:/);
    const pkcs7 = await admin.get('/.well-known/est/cacerts', { api: 'root' });
    const caFile = join(cli.cwd, 'weft-ca.pem');
    writeFileSync(caFile, pkcs7ToPems(pkcs7.text).join(''));
    const second = new ZitiCli(cli.bin);
    expect(await second.ok('edge', 'login', weft.api, '-u', 'admin', '-p', PASSWORD, '--ca', caFile)).toMatch(/Token:/);
    expect((await second.json('edge', 'list', 'identities')).data.map((i: any) => i.name)).toContain('Default Admin');
    expect(await new ZitiCli(cli.bin).fails('edge', 'login', weft.api, '-u', 'admin', '-p', 'wrong-password', '-y')).toMatch(/INVALID_AUTH|401/);
  });

  it('identities: the (deprecated) type commands, role attributes, auth policy, admin flag; update, filter, delete', async () => {
    const ap = await cli.create('auth-policy', 'cli-ap', '--primary-cert-allowed', '--primary-updb-allowed', '--primary-updb-min-length', '8');
    const ids: Record<string, string> = {};
    for (const type of ['user', 'device', 'service']) ids[type] = await cli.create('identity', type, `cli-${type}`, '-a', `t-${type},shared`);
    ids.plain = await cli.create('identity', 'cli-plain', '-a', 'shared', '-P', 'cli-ap');
    ids.admin = await cli.create('identity', 'cli-admin', '--admin');
    const user = await one('identities', 'cli-user');
    // `ziti edge create identity user|device|service` no longer sends a type: OpenZiti's default type applies
    expect(user).toMatchObject({ id: ids.user, type: { name: 'Default' }, typeId: 'Default', roleAttributes: ['t-user', 'shared'], isAdmin: false });
    expect((await one('identities', 'cli-device')).roleAttributes).toEqual(['t-device', 'shared']);
    expect((await one('identities', 'cli-service')).roleAttributes).toEqual(['t-service', 'shared']);
    expect(await one('identities', 'cli-plain')).toMatchObject({ authPolicyId: ap, roleAttributes: ['shared'] });
    expect((await one('identities', 'cli-admin')).isAdmin).toBe(true);

    await cli.ok('edge', 'update', 'identity', 'cli-user', '-a', 'changed', '--name', 'cli-user-2');
    expect(await one('identities', 'cli-user-2')).toMatchObject({ id: ids.user, roleAttributes: ['changed'] });
    const filtered = await cli.json('edge', 'list', 'identities', 'name contains "cli-" limit 5');
    expect(filtered.data).toHaveLength(5);
    expect(filtered.meta.pagination).toMatchObject({ limit: 5, totalCount: 5 });
    const table = await cli.ok('edge', 'list', 'identities', 'name contains "cli-" and anyOf(roleAttributes) = "shared"');
    expect(table).toContain('cli-device');
    expect(table).not.toContain('cli-admin');
    await cli.ok('edge', 'delete', 'identity', 'cli-device');
    expect((await cli.json('edge', 'list', 'identities', 'name = "cli-device"')).data).toHaveLength(0);
  });

  it('config types, configs, services; ziti edge show config / config-type', async () => {
    const schema = JSON.stringify({ type: 'object', properties: { port: { type: 'integer' } }, required: ['port'] });
    await cli.create('config-type', 'cli-ct', schema);
    await cli.create('config', 'cli-cfg', 'cli-ct', '{"port":8080}');
    expect(await cli.fails('edge', 'create', 'config', 'cli-bad', 'cli-ct', '{"port":"x"}')).toMatch(/COULD_NOT_VALIDATE|INVALID/);
    await cli.create(
      'config',
      'cli-intercept',
      'intercept.v1',
      JSON.stringify({ protocols: ['tcp'], addresses: ['web.ziti'], portRanges: [{ low: 80, high: 80 }] }),
    );
    await cli.ok('edge', 'update', 'config', 'cli-cfg', '-d', '{"port":9090}');
    expect(JSON.parse(await cli.ok('edge', 'show', 'config', 'cli-cfg'))).toEqual({ port: 9090 });
    expect(JSON.parse(await cli.ok('edge', 'show', 'config-type', 'cli-ct'))).toMatchObject({ required: ['port'] });
    await cli.ok('edge', 'update', 'config-type', 'cli-ct', '--name', 'cli-ct-2');
    expect((await one('config-types', 'cli-ct-2')).schema).toMatchObject({ required: ['port'] });

    const svc = await cli.create('service', 'cli-svc', '-c', 'cli-intercept,cli-cfg', '-a', 'web', '-e', 'ON');
    const detail = await one('services', 'cli-svc');
    expect(detail).toMatchObject({ id: svc, roleAttributes: ['web'], encryptionRequired: true });
    expect(detail.configs).toHaveLength(2);
    await cli.ok('edge', 'update', 'service', 'cli-svc', '-a', 'web,db', '--terminator-strategy', 'random');
    expect(await one('services', 'cli-svc')).toMatchObject({ roleAttributes: ['web', 'db'], terminatorStrategy: 'random', encryptionRequired: true });
    // referenced config types and configs cannot go: OpenZiti's error, and nothing changes
    expect(await cli.fails('edge', 'delete', 'config-type', 'cli-ct-2')).toMatch(/CAN_NOT_DELETE_REFERENCED_ENTITY/);
    expect(await one('config-types', 'cli-ct-2')).toBeTruthy();
    await cli.ok('edge', 'delete', 'service', 'cli-svc');
    await cli.ok('edge', 'delete', 'config', 'cli-cfg');
    await cli.ok('edge', 'delete', 'config-type', 'cli-ct-2');
  });

  it('the three policy kinds, edge routers, transit routers and policy-advisor', async () => {
    const dev = await cli.create('identity', 'pol-dev', '-a', 'staff');
    await cli.create('service', 'pol-svc', '-a', 'app');
    const er = await cli.create('edge-router', 'pol-er', '-a', 'public', '-t', '--cost', '10', '--no-traversal');
    expect(await one('edge-routers', 'pol-er')).toMatchObject({
      id: er,
      roleAttributes: ['public'],
      isTunnelerEnabled: true,
      cost: 10,
      noTraversal: true,
    });
    await cli.ok('edge', 'update', 'edge-router', 'pol-er', '-a', 'public,eu', '--cost', '5');
    expect(await one('edge-routers', 'pol-er')).toMatchObject({ roleAttributes: ['public', 'eu'], cost: 5 });

    const sp = await cli.create('service-policy', 'pol-dial', 'Dial', '--identity-roles', '#staff', '--service-roles', '#app', '--semantic', 'AnyOf');
    expect(await one('service-policies', 'pol-dial')).toMatchObject({
      id: sp,
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#staff'],
      serviceRoles: ['#app'],
    });
    await cli.ok('edge', 'update', 'service-policy', 'pol-dial', '--identity-roles', `@${dev}`);
    expect((await one('service-policies', 'pol-dial')).identityRoles).toEqual([`@${dev}`]);
    await cli.create('edge-router-policy', 'pol-erp', '--identity-roles', '#staff', '--edge-router-roles', '#eu');
    await cli.ok('edge', 'update', 'edge-router-policy', 'pol-erp', '--edge-router-roles', '#public');
    expect((await one('edge-router-policies', 'pol-erp')).edgeRouterRoles).toEqual(['#public']);

    let advice = await cli.ok('edge', 'policy-advisor', 'identities', '-q', 'pol-dev', 'pol-svc');
    expect(advice).toMatch(/ERROR: pol-dev \(1\) -> pol-svc \(0\) Common Routers: \(0\/0\) Dial: Y Bind: N/); // no service edge router policy yet
    await cli.create('service-edge-router-policy', 'pol-serp', '--service-roles', '#app', '--edge-router-roles', '#all');
    await cli.ok('edge', 'update', 'service-edge-router-policy', 'pol-serp', '--edge-router-roles', '#public');
    expect((await one('service-edge-router-policies', 'pol-serp')).edgeRouterRoles).toEqual(['#public']);
    advice = await cli.ok('edge', 'policy-advisor', 'identities', '-q', 'pol-dev', 'pol-svc');
    // pol-er is the one common router; it has never connected, so it is offline
    expect(advice).toMatch(/pol-dev \(1\) -> pol-svc \(1\) Common Routers: \(0\/1\) Dial: Y Bind: N/);
    expect(advice).toMatch(/off-line/);
    expect(await cli.ok('edge', 'policy-advisor', 'services', '-q', 'pol-svc')).toMatch(/pol-dev \(1\) -> pol-svc \(1\)/);

    const tr = await cli.create('transit-router', 'pol-tr');
    expect((await cli.json('edge', 'list', 'transit-routers', 'name = "pol-tr"')).data[0].id).toBe(tr);
    await cli.ok('edge', 'delete', 'transit-router', 'pol-tr');
    for (const [kind, name] of [
      ['service-edge-router-policy', 'pol-serp'],
      ['edge-router-policy', 'pol-erp'],
      ['service-policy', 'pol-dial'],
      ['edge-router', 'pol-er'],
    ]) {
      await cli.ok('edge', 'delete', kind!, name!);
    }
    expect((await cli.json('edge', 'list', 'edge-routers', 'name = "pol-er"')).data).toHaveLength(0);
  });

  it('posture checks of every type: create, update, list, delete', async () => {
    await cli.create('posture-check', 'domain', 'pc-domain', '-d', 'example.com', '-a', 'pc');
    await cli.create('posture-check', 'mac', 'pc-mac', '-m', '00:11:22:33:44:55');
    await cli.create('posture-check', 'os', 'pc-os', '-o', 'Windows:10.0.19041', '-o', 'macOS');
    await cli.create('posture-check', 'process', 'pc-process', 'Windows', 'C:\\app.exe');
    await cli.create('posture-check', 'process-multi', 'pc-multi', 'AllOf', 'Windows,Linux', 'C:\\app.exe,/usr/bin/app');
    await cli.create('posture-check', 'mfa', 'pc-mfa', '-s', '60', '-w', '-u');
    expect(await one('posture-checks', 'pc-domain')).toMatchObject({ typeId: 'DOMAIN', domains: ['example.com'], roleAttributes: ['pc'] });
    expect((await one('posture-checks', 'pc-mac')).macAddresses).toHaveLength(1);
    expect((await one('posture-checks', 'pc-os')).operatingSystems).toEqual([
      { type: 'Windows', versions: ['10.0.19041'] },
      { type: 'macOS', versions: [] },
    ]);
    expect((await one('posture-checks', 'pc-process')).process).toMatchObject({ osType: 'Windows', path: 'C:\\app.exe' });
    expect(await one('posture-checks', 'pc-multi')).toMatchObject({ semantic: 'AllOf' });
    expect(await one('posture-checks', 'pc-mfa')).toMatchObject({ typeId: 'MFA', timeoutSeconds: 60, promptOnWake: true, promptOnUnlock: true });
    await cli.ok('edge', 'update', 'posture-check', 'domain', 'pc-domain', '-d', 'example.org');
    await cli.ok('edge', 'update', 'posture-check', 'mfa', 'pc-mfa', '-s', '120');
    await cli.ok('edge', 'update', 'posture-check', 'os', 'pc-os', '-o', 'Linux:5.10.0:6.1.0', '-a', 'pc-os');
    await cli.ok('edge', 'update', 'posture-check', 'mac', 'pc-mac', '-m', 'aa:bb:cc:dd:ee:ff,00:11:22:33:44:66');
    // the CLI's PATCH carries only the process fields whose flags are given; the official swagger requires both
    // osType and path in a `process`, so both are given
    await cli.ok('edge', 'update', 'posture-check', 'process', 'pc-process', '-o', 'Linux', '-p', '/usr/bin/app2');
    // the pinned CLI (v1.7.2) has no `ziti edge update posture-check process-multi` (its subcommands: domain, mac,
    // mfa, os, process): pc-multi is only created, listed and deleted through the CLI. Should a later pin add it,
    // this fails as a reminder to update pc-multi here too.
    expect(await cli.ok('edge', 'update', 'posture-check', '--help')).not.toMatch(/process-multi/);
    expect((await one('posture-checks', 'pc-domain')).domains).toEqual(['example.org']);
    expect((await one('posture-checks', 'pc-mfa')).timeoutSeconds).toBe(120);
    expect(await one('posture-checks', 'pc-os')).toMatchObject({
      typeId: 'OS',
      roleAttributes: ['pc-os'],
      operatingSystems: [{ type: 'Linux', versions: ['5.10.0', '6.1.0'] }],
    });
    expect(await one('posture-checks', 'pc-mac')).toMatchObject({ typeId: 'MAC', macAddresses: ['aa:bb:cc:dd:ee:ff', '00:11:22:33:44:66'] });
    expect(await one('posture-checks', 'pc-process')).toMatchObject({ typeId: 'PROCESS', process: { osType: 'Linux', path: '/usr/bin/app2' } });
    expect(await one('posture-checks', 'pc-multi')).toMatchObject({ typeId: 'PROCESS_MULTI', semantic: 'AllOf' });
    for (const name of ['pc-domain', 'pc-mac', 'pc-os', 'pc-process', 'pc-multi', 'pc-mfa']) await cli.ok('edge', 'delete', 'posture-check', name);
    expect((await cli.json('edge', 'list', 'posture-checks')).data).toHaveLength(0);
  });

  it('CAs: create, then verify with a certificate the CLI makes from the CA key', async () => {
    const ca = await externalCa('Interop CLI CA');
    const dir = tempDir();
    writeFileSync(join(dir, 'ca.pem'), ca.certPem);
    writeFileSync(join(dir, 'ca.key'), ca.keyPem);
    const id = await cli.create('ca', 'cli-ca', join(dir, 'ca.pem'), '--autoca', '--ottca', '--auth', '-a', 'from-ca');
    expect(await one('cas', 'cli-ca')).toMatchObject({
      id,
      isVerified: false,
      isAutoCaEnrollmentEnabled: true,
      isOttCaEnrollmentEnabled: true,
      isAuthEnabled: true,
    });
    await cli.ok('edge', 'verify', 'ca', 'cli-ca', '--cacert', join(dir, 'ca.pem'), '--cakey', join(dir, 'ca.key'));
    expect((await one('cas', 'cli-ca')).isVerified).toBe(true);
    await cli.ok('edge', 'delete', 'ca', 'cli-ca');
  });

  it('auth policies and external JWT signers', async () => {
    const signer = await cli.create('ext-jwt-signer', 'cli-signer', 'https://issuer.example', '-a', 'weft', '-u', 'https://issuer.example/jwks.json');
    const detail = await one('external-jwt-signers', 'cli-signer');
    expect(detail).toMatchObject({
      id: signer,
      issuer: 'https://issuer.example',
      audience: 'weft',
      jwksEndpoint: 'https://issuer.example/jwks.json',
    });
    await cli.ok('edge', 'update', 'ext-jwt-signer', 'cli-signer', '--audience', 'weft-2');
    expect((await one('external-jwt-signers', 'cli-signer')).audience).toBe('weft-2');

    const ap = await cli.create(
      'auth-policy',
      'cli-ap-2',
      '--primary-updb-allowed',
      '--primary-updb-max-attempts',
      '3',
      '--primary-ext-jwt-allowed',
      '--primary-ext-jwt-allowed-signers',
      signer,
      '--secondary-req-totp',
    );
    expect(await one('auth-policies', 'cli-ap-2')).toMatchObject({
      id: ap,
      primary: { updb: { allowed: true, maxAttempts: 3 }, extJwt: { allowed: true, allowedSigners: [signer] } },
      secondary: { requireTotp: true },
    });
    await cli.ok('edge', 'update', 'auth-policy', 'cli-ap-2', '--primary-updb-max-attempts', '5');
    expect((await one('auth-policies', 'cli-ap-2')).primary.updb.maxAttempts).toBe(5);
    // a signer an auth policy names cannot go
    expect(await cli.fails('edge', 'delete', 'ext-jwt-signer', 'cli-signer')).toMatch(/CAN_NOT_DELETE_REFERENCED_ENTITY/);
    await cli.ok('edge', 'delete', 'auth-policy', 'cli-ap-2');
    await cli.ok('edge', 'delete', 'ext-jwt-signer', 'cli-signer');
  });

  it('ziti edge list summary and the lists of every other kind', async () => {
    const summary = await cli.json('edge', 'list', 'summary');
    expect(summary.data).toMatchObject({ identities: expect.any(Number), services: expect.any(Number) });
    for (const kind of [
      'api-sessions',
      'sessions',
      'authenticators',
      'enrollments',
      'identity-types',
      'terminators',
      'controllers',
      'routers',
      'configs',
      'config-types',
      'cas',
    ]) {
      const r = await cli.run('edge', 'list', kind);
      expect(r.code, `${kind}: ${r.stderr}`).toBe(0);
    }
  });

  it('filters through references, as OpenZiti resolves them: service.name, router.name, identity.name, type.name', async () => {
    const svc = await cli.create('service', 'ref-filter-svc');
    const router = (await cli.json('edge', 'list', 'edge-routers', 'name = "er-builtin"')).data[0];
    await cli.create('terminator', 'ref-filter-svc', router.id, 'tcp:127.0.0.1:9');
    const names = async (kind: string, filter: string, field = 'name') =>
      ((await cli.json('edge', 'list', kind, filter)).data as any[]).map((e) => (field === 'name' ? e.name : e[field]));
    expect(await names('terminators', 'service.name = "ref-filter-svc"', 'serviceId')).toEqual([svc]);
    expect(await names('terminators', 'router.name = "er-builtin" and service.name contains "ref-filter"', 'serviceId')).toEqual([svc]);
    expect(await names('terminators', 'router.name = "no-such-router"', 'serviceId')).toEqual([]);
    expect((await names('api-sessions', 'identity.name = "Default Admin"', 'identityId')).length).toBeGreaterThan(0);
    expect((await names('authenticators', 'identity.name = "Default Admin"', 'method')).length).toBeGreaterThan(0);
    expect(await names('identities', 'type.name = "Router" and name = "Default Admin"')).toEqual([]);
    expect(await names('identities', 'type.name = "User" and name = "Default Admin"')).toEqual(['Default Admin']);
    expect(await names('sessions', 'service.name = "ref-filter-svc" or apiSession.identity.name = "nobody"', 'id')).toEqual([]);
    expect(await cli.fails('edge', 'list', 'terminators', 'service.nope = "x"')).toMatch(/INVALID_FILTER|unknown field "nope"/);
    await cli.ok('edge', 'delete', 'service', 'ref-filter-svc');
  });

  it('ziti ops verify traffic: its identities, service and policies, a bind and a dial through the router, cleaned up', async () => {
    await cli.create('edge-router-policy', 'verify-erp', '--identity-roles', '#all', '--edge-router-roles', '#all');
    await cli.create('service-edge-router-policy', 'verify-serp', '--service-roles', '#all', '--edge-router-roles', '#all');
    const r = await cli.run(
      'ops',
      'verify',
      'traffic',
      '--cleanup',
      '--prefix',
      'vt',
      '-u',
      'admin',
      '-p',
      PASSWORD,
      '--controller-url',
      weft.api,
      '-y',
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/traffic test successfully detected/);
    expect((await cli.json('edge', 'list', 'services', 'name contains "vt."')).data).toEqual([]);
  });
});
