// Enrollment by the real OpenZiti programs against `npm start` on port 0: `ziti edge enroll` of OTT (RSA and EC
// keys), OTTCA (CA made and verified with the CLI) and UPDB enrollments, `ziti router enroll` of an edge router;
// then the Go SDK logs in with each identity, lists its services and creates a Dial session with its edge routers.
import { X509Certificate } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/app';
import type { ApiClient } from '../support/client';
import { clientCert, externalCa } from '../support/pki';
import { startWeftProcess, type WeftProcess } from '../support/weftProcess';
import { openzitiTools, sdkClient, ZitiCli } from './tools';

const PASSWORD = 'interop-admin-password-1';
let weft: WeftProcess;
let cli: ZitiCli;
let admin: ApiClient;
let sdk: string;
let caFile: string;

beforeAll(async () => {
  const tools = openzitiTools();
  sdk = tools.sdkClient;
  weft = await startWeftProcess(tempDir(), ['--api-address', '127.0.0.1:0', '--console-address', '127.0.0.1:0'], {
    WEFT_ADMIN_USERNAME: 'admin',
    WEFT_ADMIN_PASSWORD: PASSWORD,
  });
  cli = new ZitiCli(tools.ziti);
  caFile = join(cli.cwd, 'weft-ca.pem');
  writeFileSync(caFile, weft.caPem());
  await cli.ok('edge', 'login', weft.api, '-u', 'admin', '-p', PASSWORD, '--ca', caFile);
  admin = await weft.login('admin', PASSWORD);
  // a network every identity can use: one service, one router, policies for #all
  await cli.create('service', 'enr-svc');
  await cli.create('edge-router', 'enr-er', '-a', 'enr');
  await cli.create('service-policy', 'enr-dial', 'Dial', '--identity-roles', '#all', '--service-roles', '@enr-svc');
  await cli.create('edge-router-policy', 'enr-erp', '--identity-roles', '#all', '--edge-router-roles', '#enr');
  await cli.create('service-edge-router-policy', 'enr-serp', '--service-roles', '@enr-svc', '--edge-router-roles', '#enr');
});
afterAll(async () => {
  await admin?.close();
  await weft?.stop();
});

/**
 * The Go SDK logs in (with an identity file, or with the weft-sdk-client arguments of another login) and reports
 * what the identity sees, with a Dial session for enr-svc whose edge routers are enr-er.
 */
async function expectSdkSees(login: string | string[], name: string): Promise<void> {
  const loginArgs = typeof login === 'string' ? ['--identity', login] : login;
  const [out] = await sdkClient(sdk, ['probe', ...loginArgs, '--service', 'enr-svc']);
  expect(out).toMatchObject({ identityName: name, services: ['enr-svc'], session: { type: 'Dial' } });
  expect(out!.session.edgeRouters.map((r: any) => r.name)).toEqual(['enr-er']);
}

describe('enrollment with the ziti CLI, then the Go SDK', { timeout: 120_000 }, () => {
  for (const keyAlg of ['RSA', 'EC']) {
    it(`OTT with an ${keyAlg} key: ziti edge enroll writes an identity file the SDK logs in with`, async () => {
      const name = `ott-${keyAlg.toLowerCase()}`;
      const jwt = join(cli.cwd, `${name}.jwt`);
      const id = await cli.create('identity', name, '-o', jwt);
      const file = join(cli.cwd, `${name}.json`);
      const copy = join(cli.cwd, `${name}-copy.jwt`);
      copyFileSync(jwt, copy);
      await cli.ok('edge', 'enroll', jwt, '-o', file, '--keyAlg', keyAlg);
      const identity = JSON.parse(readFileSync(file, 'utf8'));
      expect(identity.ztAPI).toBe(`${weft.api}/edge/client/v1`);
      const cert = new X509Certificate(identity.id.cert.replace(/^pem:/, ''));
      expect(cert.subject).toContain(`CN=${id}`);
      expect(cert.publicKey.asymmetricKeyType).toBe(keyAlg === 'RSA' ? 'rsa' : 'ec');
      await expectSdkSees(file, name);
      // the token is spent
      expect(await cli.fails('edge', 'enroll', copy, '-o', join(cli.cwd, `${name}-again.json`))).toMatch(
        /enroll error|INVALID_ENROLLMENT_TOKEN|40[04]/,
      );
    });
  }

  it('OTTCA: a CA created and verified with the CLI, an identity enrolling with a certificate from it', async () => {
    const ca = await externalCa('Interop OTTCA CA');
    writeFileSync(join(cli.cwd, 'ottca.pem'), ca.certPem);
    writeFileSync(join(cli.cwd, 'ottca.key'), ca.keyPem);
    const caId = await cli.create('ca', 'enr-ca', join(cli.cwd, 'ottca.pem'), '--ottca', '--auth');
    await cli.ok('edge', 'verify', 'ca', 'enr-ca', '--cacert', join(cli.cwd, 'ottca.pem'), '--cakey', join(cli.cwd, 'ottca.key'));
    const id = await admin.create('/identities', { name: 'ottca-dev', type: 'Device', isAdmin: false, enrollment: { ottca: caId } });
    const detail = (await admin.get(`/identities/${id}`)).body.data;
    writeFileSync(join(cli.cwd, 'ottca.jwt'), detail.enrollment.ottca.jwt);
    const leaf = await clientCert(ca, { commonName: 'ottca-dev-device' });
    writeFileSync(join(cli.cwd, 'ottca-leaf.pem'), leaf.certPem);
    writeFileSync(join(cli.cwd, 'ottca-leaf.key'), leaf.keyPem);
    const file = join(cli.cwd, 'ottca.json');
    await cli.ok(
      'edge',
      'enroll',
      join(cli.cwd, 'ottca.jwt'),
      '-o',
      file,
      '-c',
      join(cli.cwd, 'ottca-leaf.pem'),
      '-k',
      join(cli.cwd, 'ottca-leaf.key'),
    );
    await expectSdkSees(file, 'ottca-dev');
    const authenticators = (await admin.get(`/identities/${id}/authenticators`)).body.data;
    expect(authenticators).toHaveLength(1);
    expect(authenticators[0]).toMatchObject({
      method: 'cert',
      fingerprint: new X509Certificate(leaf.certPem).fingerprint.replace(/:/g, '').toLowerCase(),
    });
  });

  it('UPDB: ziti edge enroll sets the password; the SDK then logs in with it', async () => {
    const jwt = join(cli.cwd, 'updb.jwt');
    await cli.create('identity', 'updb-user', '--updb', 'updb-user', '-o', jwt);
    await cli.ok('edge', 'enroll', jwt, '-u', 'updb-user', '-p', 'updb-password-1');
    await expectSdkSees(['--controller', weft.api, '--ca', caFile, '--username', 'updb-user', '--password', 'updb-password-1'], 'updb-user');
  });

  it('edge router: ziti router enroll writes the router identity files; the router is verified', async () => {
    const jwt = join(cli.cwd, 'er.jwt');
    const id = await cli.create('edge-router', 'enr-router', '-o', jwt);
    const dir = tempDir('weft-router-');
    const config = join(dir, 'router.yml');
    const { port } = new URL(weft.api);
    await cli.ok('create', 'config', 'router', 'edge', '--routerName', 'enr-router', '-o', config);
    // the generated config names the controller from the environment; point it at this Weft
    writeFileSync(
      config,
      readFileSync(config, 'utf8')
        .replace(/endpoint:\s+tls:\S+/, `endpoint: tls:127.0.0.1:${port}`)
        .replaceAll(cli.cwd, dir),
    );
    const enroll = await cli.run('router', 'enroll', config, '--jwt', jwt);
    expect(enroll.code, enroll.stderr).toBe(0);
    const cfg = readFileSync(config, 'utf8');
    const files = ['cert', 'server_cert', 'key', 'ca'].map((k) => new RegExp(`^\\s+${k}:\\s+"?([^"\\n]+)"?`, 'm').exec(cfg)![1]!);
    for (const f of files) expect(existsSync(f), f).toBe(true);
    const cert = new X509Certificate(readFileSync(files[0]!));
    expect(cert.subject).toContain(`CN=${id}`);
    const router = (await admin.get(`/edge-routers/${id}`)).body.data;
    expect(router).toMatchObject({ isVerified: true, fingerprint: cert.fingerprint.replace(/:/g, '').toLowerCase() });
  });
});
