// MFA secrets at rest: TOTP secrets sealed with <data dir>/secrets.key, recovery codes kept as keyed digests, rows
// written in clear by earlier versions converted at start-up, the key file's checks; and the MFA failure counter
// of an API session surviving a restart.
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, tempDir, type TestApp } from '../support/app';
import { ApiClient } from '../support/client';
import { ManualClock } from '../support/clock';
import { onPostgres } from '../support/postgres';
import { allStoredText, rawSql } from '../support/rawDb';
import { createUser, epochSeconds, login, secretOf, totp, totpStepStart } from '../support/users';

const STEP = 30_000;
const PASSWORD = 'at-rest-password-1';

/**
 * SQLite's database file and its WAL as bytes (what a copy of the data directory would hold). Not on PostgreSQL: its
 * files belong to the server; there the check is of what every table holds (allStoredText).
 */
function rawDatabase(dataDir: string): string {
  const read = (f: string) => {
    try {
      return readFileSync(join(dataDir, f)).toString('latin1');
    } catch {
      return '';
    }
  };
  return read('weft.db') + read('weft.db-wal');
}

async function expectNotStored(app: TestApp, secret: string, codes: string[]): Promise<void> {
  const texts = await allStoredText(app);
  expect(texts.length).toBeGreaterThan(0);
  expect(texts.filter((t) => t.includes(secret))).toEqual([]);
  for (const code of codes) expect(texts.filter((t) => t.includes(code))).toEqual([]);
  if (!onPostgres()) expect(rawDatabase(app.dataDir)).not.toContain(secret);
}

/** A client of a (restarted) app carrying an existing API session token. */
function withToken(app: TestApp, token: string): ApiClient {
  const c = app.client();
  c.token = token;
  return c;
}

describe('MFA secrets at rest', () => {
  const clock = new ManualClock(totpStepStart());
  const dataDir = tempDir();
  let app: TestApp;
  let secret = '';
  let codes: string[] = [];
  const code = () => totp(secret, epochSeconds(clock));
  const restart = async () => {
    await app.stop({ keepData: true });
    app = await startTestApp({ dataDir, clock });
  };

  afterAll(async () => {
    await app?.stop();
  });

  it('creates the secret key at the first start: 32 bytes, mode 0600', async () => {
    app = await startTestApp({ dataDir, clock });
    const key = join(dataDir, 'secrets.key');
    expect(statSync(key).size).toBe(32);
    expect(statSync(key).mode & 0o777).toBe(0o600);
  });

  it('enrollment: the provisioning URL and recovery codes are shown, but neither is stored', async () => {
    const admin = await app.adminClient();
    await createUser(admin, 'rest-user', PASSWORD);
    await admin.close();
    const { client } = await login(app, 'rest-user', PASSWORD);
    expect((await client.post('/current-identity/mfa')).status).toBe(201);
    const pending = (await client.get('/current-identity/mfa')).body.data;
    secret = secretOf(pending.provisioningUrl);
    codes = pending.recoveryCodes;
    expect(codes).toHaveLength(20);
    // pending: still shown on every read
    expect((await client.get('/current-identity/mfa')).body.data.recoveryCodes).toEqual(codes);
    await expectNotStored(app, secret, codes);

    expect((await client.post('/current-identity/mfa/verify', { code: code() })).status).toBe(200);
    await expectNotStored(app, secret, codes);
    const row = (await app.core.store.getSql<{ secret: string; recovery_codes: string; recovery_codes_pending: string | null }>(
      'SELECT secret, recovery_codes, recovery_codes_pending FROM mfas',
    ))!;
    expect(row.secret).toMatch(/^v1:[A-Za-z0-9_-]+$/);
    expect(JSON.parse(row.recovery_codes)).toHaveLength(20);
    for (const d of JSON.parse(row.recovery_codes)) expect(d).toMatch(/^h1:[A-Za-z0-9_-]{43}$/);
    expect(row.recovery_codes_pending).toBeNull();
    await client.close();
  });

  it('logins complete MFA with a TOTP code and with a recovery code; a restart keeps both working', async () => {
    clock.advance(STEP);
    const a = await login(app, 'rest-user', PASSWORD);
    expect(a.session.isMfaRequired).toBe(true);
    expect((await a.client.post('/authenticate/mfa', { code: code() })).status).toBe(200);
    const b = await login(app, 'rest-user', PASSWORD);
    expect((await b.client.post('/authenticate/mfa', { code: codes[0]!.toLowerCase() })).status).toBe(200);
    await a.client.close();
    await b.client.close();

    await restart();
    clock.advance(STEP);
    const c = await login(app, 'rest-user', PASSWORD);
    expect((await c.client.post('/authenticate/mfa', { code: code() })).status).toBe(200);
    expect((await c.client.get('/current-identity')).status).toBe(200);
    const d = await login(app, 'rest-user', PASSWORD);
    expect((await d.client.post('/authenticate/mfa', { code: codes[0] })).status).toBe(401); // spent before the restart
    expect((await d.client.post('/authenticate/mfa', { code: codes[1] })).status).toBe(200);
    await c.client.close();
    await d.client.close();
    await expectNotStored(app, secret, codes);
  });

  it('regenerated recovery codes are kept sealed until the next view shows them, then only as digests', async () => {
    clock.advance(STEP);
    const { client } = await login(app, 'rest-user', PASSWORD);
    expect((await client.post('/authenticate/mfa', { code: code() })).status).toBe(200);
    clock.advance(STEP);
    expect((await client.post('/current-identity/mfa/recovery-codes', { code: code() })).status).toBe(200);
    expect((await app.core.store.getSql<{ p: string }>('SELECT recovery_codes_pending AS p FROM mfas'))!.p).toMatch(/^v1:/);
    clock.advance(STEP);
    const fresh = (await client.get('/current-identity/mfa/recovery-codes', { headers: { 'mfa-validation-code': code() } })).body.data.recoveryCodes;
    expect(fresh).toHaveLength(20);
    expect((await app.core.store.getSql<{ p: string | null }>('SELECT recovery_codes_pending AS p FROM mfas'))!.p).toBeNull();
    await expectNotStored(app, secret, fresh);
    codes = fresh;
    await client.close();
  });

  it('the console shows a new set in its answer only; nothing is left to show afterwards', async () => {
    let cookie = '';
    const mutate = async (path: string, input: unknown) => {
      const res = await request(`${app.urls.console}/trpc/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-weft-console': '1', ...(cookie ? { cookie } : {}) },
        body: JSON.stringify(input),
      });
      const setCookie = res.headers['set-cookie'];
      if (typeof setCookie === 'string') cookie = setCookie.split(';')[0]!;
      const body = (await res.body.json()) as any;
      return { status: res.statusCode, data: body.result?.data };
    };
    clock.advance(STEP);
    expect((await mutate('session.login', { username: 'rest-user', password: PASSWORD })).data.partial).toBe(true);
    expect((await mutate('session.mfaCode', { code: code() })).status).toBe(200);
    clock.advance(STEP);
    const made = (await mutate('security.mfa.regenerateRecoveryCodes', { code: code() })).data.recoveryCodes as string[];
    expect(made).toHaveLength(20);
    expect((await app.core.store.getSql<{ p: string | null }>('SELECT recovery_codes_pending AS p FROM mfas'))!.p).toBeNull();
    clock.advance(STEP);
    expect((await mutate('security.mfa.recoveryCodes', { code: code() })).data.recoveryCodes).toEqual([]);
    await expectNotStored(app, secret, made);
    codes = made;
  });

  it('converts a TOTP secret and recovery codes stored in clear (earlier versions) at start-up, once', async () => {
    await app.stop({ keepData: true });
    // what an earlier version left behind: the secret and the codes as plain text
    const plainSecret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const plainCodes = ['ABCDEF', 'GHIJKL', 'MNOPQR'];
    await rawSql(app, 'UPDATE mfas SET secret = ?, recovery_codes = ?, recovery_codes_pending = NULL', plainSecret, JSON.stringify(plainCodes));
    secret = plainSecret;

    expect((await allStoredText(app)).filter((t) => t.includes(plainSecret))).toEqual([plainSecret]);
    if (!onPostgres()) expect(rawDatabase(dataDir)).toContain(plainSecret);
    app = await startTestApp({ dataDir, clock });
    const texts = await allStoredText(app);
    expect(texts.filter((t) => t.includes(plainSecret))).toEqual([]);
    for (const c of plainCodes) expect(texts.filter((t) => t.includes(`"${c}"`))).toEqual([]);
    // nor left behind in freed space or the WAL (SQLite's files; PostgreSQL's belong to its server)
    if (!onPostgres()) {
      expect(rawDatabase(dataDir)).not.toContain(plainSecret);
      expect(rawDatabase(dataDir)).not.toContain(JSON.stringify(plainCodes));
    }
    clock.advance(STEP);
    const a = await login(app, 'rest-user', PASSWORD);
    expect((await a.client.post('/authenticate/mfa', { code: code() })).status).toBe(200);
    await a.client.close();

    // a second start converts nothing more and changes nothing
    const before = (await app.core.store.getSql<{ secret: string; recovery_codes: string }>('SELECT secret, recovery_codes FROM mfas'))!;
    await restart();
    expect(await app.core.store.getSql('SELECT secret, recovery_codes FROM mfas')).toEqual(before);
    clock.advance(STEP);
    const b = await login(app, 'rest-user', PASSWORD);
    expect((await b.client.post('/authenticate/mfa', { code: code() })).status).toBe(200);
    const c = await login(app, 'rest-user', PASSWORD);
    expect((await c.client.post('/authenticate/mfa', { code: 'ghijkl' })).status).toBe(200);
    await b.client.close();
    await c.client.close();
  });

  it('refuses to start with a key others may read, a key of the wrong size, or no key for sealed secrets', async () => {
    await app.stop({ keepData: true });
    const key = join(dataDir, 'secrets.key');
    const original = readFileSync(key);

    chmodSync(key, 0o644);
    await expect(startTestApp({ dataDir, clock })).rejects.toThrow(
      /secrets\.key: the secret key must be accessible to its owner only \(mode 0600\), but its mode is 0644; run: chmod 600/,
    );
    chmodSync(key, 0o640);
    await expect(startTestApp({ dataDir, clock })).rejects.toThrow(/mode 0600/);
    chmodSync(key, 0o600);

    writeFileSync(key, original.subarray(0, 16), { mode: 0o600 });
    await expect(startTestApp({ dataDir, clock })).rejects.toThrow(
      onPostgres()
        ? // the network's sealed copy is the reference: a different key is not this network's
          /secrets\.key differs from this network's/
        : /secrets\.key: the secret key must hold exactly 32 bytes, but it holds 16/,
    );

    const { unlinkSync } = await import('node:fs');
    unlinkSync(key);
    if (onPostgres()) {
      // a node on PostgreSQL takes the missing key from the network's sealed copy (core/ops/sharedFiles.ts)
      app = await startTestApp({ dataDir, clock });
      expect(readFileSync(key).equals(original)).toBe(true);
      await app.stop({ keepData: true });
    } else {
      await expect(startTestApp({ dataDir, clock })).rejects.toThrow(
        /secrets\.key: the secret key is missing: the database holds MFA secrets sealed with it/,
      );
    }

    writeFileSync(key, original, { mode: 0o600 });
    app = await startTestApp({ dataDir, clock });
    clock.advance(STEP);
    const a = await login(app, 'rest-user', PASSWORD);
    expect((await a.client.post('/authenticate/mfa', { code: code() })).status).toBe(200);
    await a.client.close();
  });
});

describe('MFA failure counter', () => {
  it('survives a restart: 4 wrong codes, a restart, and the 5th ends the session', async () => {
    const clock = new ManualClock(totpStepStart());
    const dataDir = tempDir();
    let app = await startTestApp({ dataDir, clock });
    const admin = await app.adminClient();
    await createUser(admin, 'counted', PASSWORD);
    await admin.close();
    const enrolling = await login(app, 'counted', PASSWORD);
    await enrolling.client.post('/current-identity/mfa');
    const secret = secretOf((await enrolling.client.get('/current-identity/mfa')).body.data.provisioningUrl);
    expect((await enrolling.client.post('/current-identity/mfa/verify', { code: totp(secret, epochSeconds(clock)) })).status).toBe(200);
    await enrolling.client.close();

    const { client, session } = await login(app, 'counted', PASSWORD);
    expect(session.isMfaComplete).toBe(false);
    for (let i = 0; i < 4; i++) expect((await client.post('/authenticate/mfa', { code: 'ZZZZZZ' })).status).toBe(401);
    expect((await client.get('/current-api-session')).status).toBe(200);
    await client.close();

    await app.stop({ keepData: true });
    app = await startTestApp({ dataDir, clock });
    const again = withToken(app, session.token);
    expect((await again.get('/current-api-session')).status).toBe(200);
    expect((await again.post('/authenticate/mfa', { code: 'ZZZZZZ' })).status).toBe(401);
    expect((await again.get('/current-api-session')).status).toBe(401);
    await again.close();
    await app.stop();
  });
});
