import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { externalJwtSigners } from '../../src/main/core/auth/externalJwtSigners';
import { identities } from '../../src/main/core/policy/identities';
import { createResource } from '../../src/main/core/entities/resource';
import { startTestApp, testDatabase } from '../support/app';
import { ManualClock } from '../support/clock';
import { JwksServer, signingKey, signJwt, type SigningKey } from '../support/jwks';
import { storeOutage } from '../support/rawDb';
import { createUser, epochSeconds } from '../support/users';

const dirs: string[] = [];
function configFile(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'weft-rl-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'weft.yml'), yaml);
  return join(dir, 'weft.yml');
}

let jwks: JwksServer;
let jwksUrl: string;
let key: SigningKey;

beforeAll(async () => {
  jwks = new JwksServer();
  jwksUrl = await jwks.start();
  key = await signingKey('rl-kid');
  jwks.keys = [key.jwk];
});
afterAll(async () => {
  await jwks.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** An app with an ext-jwt signer whose JWKS fetches the test can hold: a login that holds its auth slot. */
async function appWithSigner(yaml: string, clock = new ManualClock()) {
  const app = await startTestApp({ configFile: configFile(yaml), clock });
  const admin = await app.adminClient();
  const userId = await createUser(admin, 'burst-user', 'burst-password');
  await admin.create('/external-jwt-signers', {
    name: `s-${Date.now()}`,
    issuer: 'rl-issuer',
    audience: 'weft',
    enabled: true,
    jwksEndpoint: jwksUrl,
  });
  const jwtLogin = async () => {
    const token = await signJwt(key, { iss: 'rl-issuer', aud: 'weft', sub: userId }, epochSeconds(clock));
    return app.client().post('/authenticate?method=ext-jwt', {}, { headers: { authorization: `Bearer ${token}` } });
  };
  return { app, admin, jwtLogin };
}

describe('adaptive limit on concurrent authentications', () => {
  it('a burst of logins beyond the window is answered 429 RATE_LIMITED with Retry-After while other requests keep working', async () => {
    const { app, admin, jwtLogin } = await appWithSigner('rate_limits:\n  auth:\n    max_concurrent: 1\n    min_concurrent: 1\n');
    try {
      // an ext-jwt login waiting for its JWKS holds the only authentication slot
      const gate = jwks.hold();
      const slow = jwtLogin();
      await gate.held;

      const burst = await Promise.all(
        Array.from({ length: 12 }, () => app.client().post('/authenticate?method=password', { username: 'burst-user', password: 'burst-password' })),
      );
      for (const r of burst) {
        expect(r.status).toBe(429);
        expect(r.body.error).toMatchObject({ code: 'RATE_LIMITED', requestId: expect.any(String) });
        expect(r.headers['retry-after']).toBe('1');
      }
      expect((await app.client().post('/authenticate/mfa', { code: '123456' }, { headers: { 'zt-session': admin.token! } })).status).toBe(429);

      // everything else is served
      expect((await admin.get('/identities')).status).toBe(200);
      expect((await app.client().get('/version', { api: 'client' })).status).toBe(200);
      expect((await admin.get('/current-api-session')).status).toBe(200);

      gate.release();
      expect((await slow).status).toBe(200);
      expect((await app.client().post('/authenticate?method=password', { username: 'burst-user', password: 'burst-password' })).status).toBe(200);
    } finally {
      await admin.close();
      await app.stop();
    }
  });
});

describe('per-client request rate', () => {
  it('a token bucket per client address: 429 with Retry-After once the burst is spent, refilled by the clock', async () => {
    const clock = new ManualClock();
    const app = await startTestApp({ configFile: configFile('rate_limits:\n  per_client:\n    requests_per_second: 0.5\n    burst: 4\n'), clock });
    try {
      const c = app.client();
      for (let i = 0; i < 4; i++) expect((await c.get('/version', { api: 'client' })).status).toBe(200);
      const limited = await c.get('/version', { api: 'client' });
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe('RATE_LIMITED');
      expect(limited.headers['retry-after']).toBe('2');
      // also for unknown paths and unauthenticated logins: the bucket is per client, not per route
      expect((await c.get('/no-such-path')).status).toBe(429);
      expect((await c.post('/authenticate?method=password', { username: 'admin', password: 'x' })).status).toBe(429);
      clock.advance(2000);
      expect((await c.get('/version', { api: 'client' })).status).toBe(200);
      expect((await c.get('/version', { api: 'client' })).status).toBe(429);
      await c.close();
    } finally {
      await app.stop();
    }
  });
});

describe('503 SERVICE_UNAVAILABLE', () => {
  it('when a request outlives request_timeout, and when the store is unavailable', async () => {
    // no password logins here: argon2 under a loaded machine must not race the short timeout
    const clock = new ManualClock();
    // SQLite: its connection closed under the app; PostgreSQL: the server unreachable for this app alone
    const outage = await storeOutage(await testDatabase());
    const app = await startTestApp({ configFile: configFile('rate_limits:\n  request_timeout: 2s\n'), clock, database: outage.database });
    try {
      const ctx = app.core.system;
      const id = await createResource(ctx, identities, { name: 'jwt-admin', type: 'User', isAdmin: true });
      await createResource(ctx, externalJwtSigners, {
        name: 'timeouts',
        issuer: 'rl-issuer',
        audience: 'weft',
        enabled: true,
        jwksEndpoint: jwksUrl,
      });
      const login = (k: SigningKey) =>
        signJwt(k, { iss: 'rl-issuer', aud: 'weft', sub: id }, epochSeconds(clock)).then((token) =>
          app.client().post('/authenticate?method=ext-jwt', {}, { headers: { authorization: `Bearer ${token}` } }),
        );
      const ok = await login(key);
      expect(ok.status).toBe(200);
      const admin = app.client();
      admin.token = ok.body.data.token;

      // a new kid makes the next login refetch the JWKS, which the test holds past the timeout
      const gate = jwks.hold();
      clock.advance(60_000);
      const r = await login(await signingKey('rl-kid-2'));
      expect(r.status).toBe(503);
      expect(r.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'The request timed out', requestId: expect.any(String) });
      gate.release();

      expect((await admin.get('/identities')).status).toBe(200);
      await outage.begin(app);
      const down = await admin.get('/identities');
      expect(down.status).toBe(503);
      expect(down.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', requestId: expect.any(String) });
      expect((await app.client().post('/authenticate?method=password', { username: 'admin', password: 'wrong-password' })).status).toBe(503);
      await admin.close();
    } finally {
      await app.stop();
      await outage.end();
    }
  });
});
