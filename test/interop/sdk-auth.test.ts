// The Go SDK's own MFA and external-JWT logins against `npm start` on port 0: TOTP enrollment and the MFA auth query
// as stock SDKs answer it (with `--api-brand ziti`, and why the switch exists), and ext-jwt login with a signer whose
// JWKS is served by the test. These are the SDK's legacy logins (POST /authenticate), so Weft runs with
// `--api-oidc off`: advertised OIDC_AUTH, the SDK logs in through /oidc instead (test/interop/sdk-oidc.test.ts), and
// v1.2.10 cannot answer TOTP there — its OIDC TOTP callback hands the code to POST /authenticate/mfa, which has no
// session yet, and then waits 30 minutes for a code that never comes (later SDKs rework it), against OpenZiti as well.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/app';
import type { ApiClient } from '../support/client';
import { JwksServer, signingKey, signJwt } from '../support/jwks';
import { startWeftProcess, type WeftProcess } from '../support/weftProcess';
import { openzitiTools, run, sdkClient, ZitiCli } from './tools';

const PASSWORD = 'interop-admin-password-1';
const ENV = { WEFT_ADMIN_USERNAME: 'admin', WEFT_ADMIN_PASSWORD: PASSWORD };

interface Network {
  weft: WeftProcess;
  cli: ZitiCli;
  admin: ApiClient;
}

/** A Weft process with one service every identity may dial, and a CLI logged in to it. */
async function network(brand: 'svc' | 'ziti'): Promise<Network> {
  const weft = await startWeftProcess(
    tempDir(),
    ['--api-address', '127.0.0.1:0', '--console-address', '127.0.0.1:0', '--api-brand', brand, '--api-oidc', 'off'],
    ENV,
  );
  const cli = new ZitiCli(openzitiTools().ziti);
  await cli.ok('edge', 'login', weft.api, '-u', 'admin', '-p', PASSWORD, '-y');
  await cli.create('service', 'auth-svc');
  await cli.create('service-policy', 'auth-dial', 'Dial', '--identity-roles', '#all', '--service-roles', '@auth-svc');
  await cli.create('edge-router', 'auth-er');
  await cli.create('edge-router-policy', 'auth-erp', '--identity-roles', '#all', '--edge-router-roles', '@auth-er');
  await cli.create('service-edge-router-policy', 'auth-serp', '--service-roles', '@auth-svc', '--edge-router-roles', '@auth-er');
  return { weft, cli, admin: await weft.login('admin', PASSWORD) };
}

/** An OTT identity enrolled with `ziti edge enroll`; returns the identity file. */
async function enrolled(net: Network, name: string): Promise<string> {
  const jwt = join(net.cli.cwd, `${name}.jwt`);
  await net.cli.create('identity', name, '-o', jwt);
  const file = join(net.cli.cwd, `${name}.json`);
  await net.cli.ok('edge', 'enroll', jwt, '-o', file);
  return file;
}

let ziti: Network;
let svc: Network;
let sdk: string;

beforeAll(async () => {
  sdk = openzitiTools().sdkClient;
  [ziti, svc] = await Promise.all([network('ziti'), network('svc')]);
});
afterAll(async () => {
  for (const net of [ziti, svc]) {
    await net?.admin.close();
    await net?.weft.stop();
  }
});

describe('MFA as stock OpenZiti SDKs do it', { timeout: 120_000 }, () => {
  it('with api.brand ziti: enroll TOTP through the SDK, log in again, answer the auth query, use services', async () => {
    const file = await enrolled(ziti, 'mfa-user');
    const [enrolledMfa] = await sdkClient(sdk, ['mfa-enroll', '--identity', file]);
    expect(enrolledMfa).toMatchObject({ recoveryCodes: 20 });
    expect(enrolledMfa!.provisioningUrl).toMatch(/^otpauth:\/\/totp\//);
    const id = (await ziti.admin.get('/identities?filter=' + encodeURIComponent('name = "mfa-user"'))).body.data[0];
    expect(id.isMfaEnabled).toBe(true);

    // a new login is partial until the SDK answers the "ziti" MFA auth query with a TOTP code (the next step's code:
    // the current one was spent on the enrollment, and replays are refused)
    const [out] = await sdkClient(sdk, [
      'probe',
      '--identity',
      file,
      '--mfa-secret',
      enrolledMfa!.secret,
      '--mfa-step',
      '1',
      '--service',
      'auth-svc',
    ]);
    expect(out).toMatchObject({ identityName: 'mfa-user', authQueries: ['ziti'], services: ['auth-svc'], session: { type: 'Dial' } });
    const sessions = (await ziti.admin.get('/api-sessions?filter=' + encodeURIComponent(`identityId = "${id.id}"`))).body.data;
    expect(sessions.some((s: any) => s.isMfaRequired && s.isMfaComplete)).toBe(true);

    // without a code the SDK cannot get past the partial session
    const blocked = await run(sdk, ['probe', '--identity', file, '--service', 'auth-svc'], { timeoutMs: 60_000 });
    expect(blocked.code).not.toBe(0);
  });

  it('with the default api.brand svc the provider is "svc", which stock SDKs do not answer (hence api.brand ziti)', async () => {
    const file = await enrolled(svc, 'mfa-svc');
    const [enrolledMfa] = await sdkClient(sdk, ['mfa-enroll', '--identity', file]);
    const r = await run(sdk, ['probe', '--identity', file, '--mfa-secret', enrolledMfa!.secret, '--mfa-step', '1'], { timeoutMs: 60_000 });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/unsupported MFA provider: svc/);
  });
});

describe('external JWT login of the Go SDK', { timeout: 120_000 }, () => {
  let jwks: JwksServer;
  beforeAll(async () => {
    jwks = new JwksServer();
  });
  afterAll(async () => {
    await jwks.stop();
  });

  it('logs in with a JWT from a signer backed by a JWKS endpoint, lists services, creates a Dial session', async () => {
    const url = await jwks.start();
    const key = await signingKey('interop-k1', 'ES256');
    jwks.keys = [key.jwk];
    const signer = await ziti.cli.create(
      'ext-jwt-signer',
      'interop-idp',
      'https://idp.interop.test',
      '-a',
      'weft-interop',
      '-u',
      url,
      '--claims-property',
      'email',
      '--external-id',
    );
    const policy = await ziti.cli.create('auth-policy', 'jwt-only', '--primary-ext-jwt-allowed', '--primary-ext-jwt-allowed-signers', signer);
    await ziti.cli.create('identity', 'jwt-user', '--external-id', 'jwt-user@interop.test', '-P', policy);
    const now = Math.floor(Date.now() / 1000);
    const token = await signJwt(key, { iss: 'https://idp.interop.test', aud: 'weft-interop', sub: 'u1', email: 'jwt-user@interop.test' }, now);
    const caFile = join(ziti.cli.cwd, 'ca.pem');
    writeFileSync(caFile, ziti.weft.caPem());
    const out = await sdkClient(sdk, ['ext-jwt', '--controller', ziti.weft.api, '--ca', caFile, '--jwt', token, '--service', 'auth-svc']);
    expect(out[0]!.signers).toContain('interop-idp');
    expect(out[1]).toMatchObject({ identityName: 'jwt-user', services: ['auth-svc'], session: { type: 'Dial' } });
    expect(jwks.fetches).toBeGreaterThan(0);

    // a token from an unknown key is refused
    const other = await signingKey('interop-k2', 'ES256');
    const bad = await signJwt(other, { iss: 'https://idp.interop.test', aud: 'weft-interop', sub: 'u1', email: 'jwt-user@interop.test' }, now);
    const r = await run(sdk, ['ext-jwt', '--controller', ziti.weft.api, '--ca', caFile, '--jwt', bad], { timeoutMs: 60_000 });
    expect(r.code).not.toBe(0);
  });
});
