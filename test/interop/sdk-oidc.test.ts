// The Go SDK's OIDC login against `npm start` on port 0: Weft advertises OIDC_AUTH, so the unmodified SDK (v1.2.10)
// takes OpenZiti's authorization code flow (/oidc/authorize, /oidc/login/<method>, /oidc/oauth/token) instead of
// POST /authenticate, for certificate, password and external JWT logins, then lists services and dials and binds
// through the built-in router with the JWT API session; access tokens live 15 s here, so the SDK refreshes them (token
// exchange) and hands each new one to the router. With `--api-oidc off` the same SDK logs in the legacy way.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/app';
import type { ApiClient } from '../support/client';
import { JwksServer, signingKey, signJwt } from '../support/jwks';
import { startWeftProcess, type WeftProcess } from '../support/weftProcess';
import { openzitiTools, sdkClient, ToolProcess, ZitiCli } from './tools';

const PASSWORD = 'interop-admin-password-1';
const ENV = { WEFT_ADMIN_USERNAME: 'admin', WEFT_ADMIN_PASSWORD: PASSWORD };

interface Network {
  weft: WeftProcess;
  cli: ZitiCli;
  admin: ApiClient;
}

async function network(oidc: 'on' | 'off'): Promise<Network> {
  const dir = tempDir();
  const config = join(dir, 'weft.yml');
  writeFileSync(config, 'api:\n  oidc:\n    access_token_lifetime: 15s\n');
  const weft = await startWeftProcess(
    join(dir, 'data'),
    [
      '--config',
      config,
      '--api-address',
      '127.0.0.1:0',
      '--console-address',
      '127.0.0.1:0',
      '--router-listener',
      'tls:127.0.0.1:0',
      '--api-oidc',
      oidc,
    ],
    ENV,
  );
  const cli = new ZitiCli(openzitiTools().ziti);
  await cli.ok('edge', 'login', weft.api, '-u', 'admin', '-p', PASSWORD, '-y');
  await cli.create('service', 'oidc-echo', '-e', 'ON');
  await cli.create('service-policy', 'oidc-bind', 'Bind', '--identity-roles', '#hosts', '--service-roles', '@oidc-echo');
  await cli.create('service-policy', 'oidc-dial', 'Dial', '--identity-roles', '#clients', '--service-roles', '@oidc-echo');
  await cli.create('edge-router-policy', 'all-routers', '--identity-roles', '#all', '--edge-router-roles', '#all');
  await cli.create('service-edge-router-policy', 'all-services', '--service-roles', '#all', '--edge-router-roles', '#all');
  return { weft, cli, admin: await weft.login('admin', PASSWORD) };
}

/** An OTT identity enrolled with `ziti edge enroll`; returns the identity file. */
async function enrolled(net: Network, name: string, ...attrs: string[]): Promise<string> {
  const jwt = join(net.cli.cwd, `${name}.jwt`);
  await net.cli.create('identity', name, '-o', jwt, ...(attrs.length ? ['-a', attrs.join(',')] : []));
  const file = join(net.cli.cwd, `${name}.json`);
  await net.cli.ok('edge', 'enroll', jwt, '-o', file);
  return file;
}

/** The audit log's login entries of an identity: the route shows which path the SDK took. */
async function logins(net: Network, name: string): Promise<Array<{ route: string; authMethod: string; outcome: string }>> {
  const r = await net.admin.get('/audit-log?limit=50&filter=' + encodeURIComponent(`action = "login" and identityName = "${name}"`));
  return r.body.data;
}

let on: Network;
let off: Network;
let sdk: string;

beforeAll(async () => {
  sdk = openzitiTools().sdkClient;
  [on, off] = await Promise.all([network('on'), network('off')]);
});
afterAll(async () => {
  for (const net of [on, off]) {
    await net?.admin.close();
    await net?.weft.stop();
  }
});

describe('the Go SDK logs in through OIDC when Weft advertises it', { timeout: 180_000 }, () => {
  it('certificate identity: OIDC login, services, a Dial session; binds and dials an end-to-end encrypted echo', async () => {
    const v = (await on.admin.get('/version', { api: 'root' })).body.data;
    expect(v.capabilities).toEqual(['OIDC_AUTH']);
    const host = await enrolled(on, 'oidc-host', 'hosts');
    const client = await enrolled(on, 'oidc-client', 'clients');

    const [probe] = await sdkClient(sdk, ['probe', '--identity', client, '--service', 'oidc-echo']);
    expect(probe).toMatchObject({ apiSessionType: 'oidc', identityName: 'oidc-client', services: ['oidc-echo'], session: { type: 'Dial' } });
    expect(await logins(on, 'oidc-client')).toEqual([
      expect.objectContaining({ route: 'POST /oidc/login/cert', authMethod: 'cert', outcome: 'success' }),
    ]);

    const server = new ToolProcess(sdk, ['echo-server', '--identity', host, '--service', 'oidc-echo']);
    try {
      await server.waitFor((l) => l.bound === true);
      const echoed = await sdkClient(sdk, ['dial', '--identity', client, '--service', 'oidc-echo', '--bytes', '262144', '--count', '5']);
      expect(echoed.at(-1)).toMatchObject({ ok: 5, failed: 0 });
    } finally {
      server.end();
      await server.exited;
    }
    expect((await logins(on, 'oidc-host')).every((e) => e.route === 'POST /oidc/login/cert')).toBe(true);
    // what the SDKs hold are OIDC API sessions (not legacy ones), listed like any other
    const sessions = (await on.admin.get('/api-sessions?limit=100')).body.data as any[];
    expect(sessions.filter((s) => s.identity?.name === 'oidc-client').length).toBeGreaterThan(0);
  });

  it('username and password (UPDB credentials): OIDC login through /oidc/login/password', async () => {
    const id = await on.cli.create('identity', 'oidc-updb', '-a', 'clients');
    const r = await on.admin.post('/authenticators', { method: 'updb', identityId: id, username: 'oidc-updb', password: 'oidc-updb-password' });
    expect(r.status).toBe(201);
    const ca = join(on.cli.cwd, 'ca.pem');
    writeFileSync(ca, on.weft.caPem());
    const [probe] = await sdkClient(sdk, [
      'probe',
      '--controller',
      on.weft.api,
      '--ca',
      ca,
      '--username',
      'oidc-updb',
      '--password',
      'oidc-updb-password',
      '--service',
      'oidc-echo',
    ]);
    expect(probe).toMatchObject({ apiSessionType: 'oidc', identityName: 'oidc-updb', services: ['oidc-echo'], session: { type: 'Dial' } });
    expect(await logins(on, 'oidc-updb')).toEqual([
      expect.objectContaining({ route: 'POST /oidc/login/password', authMethod: 'password', outcome: 'success' }),
    ]);
  });

  it('external JWT: OIDC login through /oidc/login/ext-jwt with the token as bearer', async () => {
    const jwks = new JwksServer();
    try {
      const url = await jwks.start();
      const key = await signingKey('oidc-k1', 'ES256');
      jwks.keys = [key.jwk];
      const signer = await on.cli.create(
        'ext-jwt-signer',
        'oidc-idp',
        'https://idp.oidc.test',
        '-a',
        'weft-oidc',
        '-u',
        url,
        '--claims-property',
        'email',
        '--external-id',
      );
      const policy = await on.cli.create('auth-policy', 'oidc-jwt', '--primary-ext-jwt-allowed', '--primary-ext-jwt-allowed-signers', signer);
      await on.cli.create('identity', 'oidc-jwt-user', '--external-id', 'jwt@oidc.test', '-P', policy, '-a', 'clients');
      const token = await signJwt(
        key,
        { iss: 'https://idp.oidc.test', aud: 'weft-oidc', sub: 'u1', email: 'jwt@oidc.test' },
        Math.floor(Date.now() / 1000),
      );
      const ca = join(on.cli.cwd, 'ca.pem');
      writeFileSync(ca, on.weft.caPem());
      const out = await sdkClient(sdk, ['ext-jwt', '--controller', on.weft.api, '--ca', ca, '--jwt', token, '--service', 'oidc-echo']);
      expect(out[1]).toMatchObject({ apiSessionType: 'oidc', identityName: 'oidc-jwt-user', services: ['oidc-echo'], session: { type: 'Dial' } });
      expect(await logins(on, 'oidc-jwt-user')).toEqual([
        expect.objectContaining({ route: 'POST /oidc/login/ext-jwt', authMethod: 'ext-jwt', outcome: 'success' }),
      ]);
    } finally {
      await jwks.stop();
    }
  });

  it('refreshes: the SDK exchanges its refresh token before the access token expires, and the router takes the new one', async () => {
    const host = await enrolled(on, 'oidc-refresh-host', 'hosts');
    const client = await enrolled(on, 'oidc-refresh-client', 'clients');
    const server = new ToolProcess(sdk, ['echo-server', '--identity', host, '--service', 'oidc-echo']);
    try {
      await server.waitFor((l) => l.bound === true);
      // the client's own REST calls after two access token lifetimes: it refreshed on its own
      const out = await sdkClient(sdk, ['probe', '--identity', client, '--service', 'oidc-echo', '--wait', '35s'], 90_000);
      expect(out[1]).toMatchObject({ identityName: 'oidc-refresh-client', tokenRefreshed: true, apiSessionType: 'oidc' });
      // the host's router connection outlived its first tokens (its SDK sent the router each new one): it still serves
      const echoed = await sdkClient(sdk, ['dial', '--identity', client, '--service', 'oidc-echo', '--bytes', '65536']);
      expect(echoed.at(-1)).toMatchObject({ ok: 1, failed: 0 });
      const log = server.stderr.join('');
      expect(log).not.toMatch(/failed to update token|error updating current api session token|could not refresh apiSession/);
    } finally {
      server.end();
      await server.exited;
    }
  });

  it('with --api-oidc off nothing is advertised, /oidc is not served, and the same SDK logs in the legacy way', async () => {
    const v = (await off.admin.get('/version', { api: 'root' })).body.data;
    expect(v.capabilities).toEqual([]);
    expect(v.apiVersions['edge-oidc']).toBeUndefined();
    expect((await off.admin.get('/oidc/.well-known/openid-configuration', { api: 'root' })).status).toBe(404);
    const client = await enrolled(off, 'legacy-client', 'clients');
    const [probe] = await sdkClient(sdk, ['probe', '--identity', client, '--service', 'oidc-echo']);
    expect(probe).toMatchObject({ apiSessionType: 'legacy', identityName: 'legacy-client', services: ['oidc-echo'] });
    expect(await logins(off, 'legacy-client')).toEqual([expect.objectContaining({ route: 'POST /authenticate', authMethod: 'cert' })]);
  });
});
