import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fingerprintSha1, parseCertificate } from '../../src/main/core/pki/index';
import { startTestApp, tempDir } from '../support/app';
import { ManualClock, MINUTE } from '../support/clock';
import { onPostgres } from '../support/postgres';

describe('API session expiry', () => {
  it('expires after the inactivity timeout; activity extends it', async () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const app = await startTestApp({ clock });
    const c = await app.adminClient();
    const first = (await c.get('/current-api-session')).body.data;
    expect(first.expiresAt).toBe('2026-01-01T00:30:00.000Z');
    clock.advance(20 * MINUTE);
    const second = (await c.get('/current-api-session')).body.data;
    expect(second.lastActivityAt).toBe('2026-01-01T00:20:00.000Z');
    expect(second.expiresAt).toBe('2026-01-01T00:50:00.000Z');
    expect(second.expirationSeconds).toBe(1800);
    clock.advance(29 * MINUTE);
    expect((await c.get('/current-identity')).status).toBe(200);
    clock.advance(31 * MINUTE);
    const gone = await c.get('/current-identity');
    expect(gone.status).toBe(401);
    expect((await (await app.adminClient()).get('/api-sessions')).body.data.map((s: any) => s.id)).not.toContain(first.id);
    await c.close();
    await app.stop();
  });

  it('honours a configured session timeout and the management views of sessions', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'weft.yml'), 'api:\n  session_timeout: 5m\n');
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const app = await startTestApp({ configFile: join(dir, 'weft.yml'), clock });
    const a = await app.adminClient();
    const b = await app.adminClient();
    const sessions = (await a.get('/api-sessions')).body;
    expect(sessions.meta.pagination.totalCount).toBe(2);
    const bs = (await b.get('/current-api-session')).body.data;
    expect(bs.expiresAt).toBe('2026-01-01T00:05:00.000Z');
    const viewed = (await a.get(`/api-sessions/${bs.id}`)).body.data;
    expect(viewed).toMatchObject({ id: bs.id, identityId: bs.identityId, ipAddress: '127.0.0.1', isMfaRequired: false, authQueries: [] });
    expect(viewed).not.toHaveProperty('expiresAt');
    expect((await a.del(`/api-sessions/${bs.id}`)).status).toBe(200);
    expect((await b.get('/current-identity')).status).toBe(401);
    clock.advance(6 * MINUTE);
    expect((await a.get('/current-identity')).status).toBe(401);
    await app.stop();
  });
});

describe('restart persistence', () => {
  it('a restart reuses the PKI, the admin and the data', async () => {
    const dataDir = tempDir();
    const first = await startTestApp({ dataDir });
    const admin = await first.adminClient();
    const id = await admin.create('/identities', { name: 'survivor', type: 'Device', isAdmin: false, roleAttributes: ['kept'] });
    const rootFp = fingerprintSha1(first.core.pki.root.certPem);
    const serverCert = first.core.pki.server.certPem;
    expect(first.admin.generatedPassword).toBeUndefined(); // password came from WEFT_ADMIN_PASSWORD
    await admin.close();
    await first.stop({ keepData: true });

    const second = await startTestApp({ dataDir, env: { WEFT_ADMIN_PASSWORD: 'ignored-on-restart' } });
    expect(fingerprintSha1(second.core.pki.root.certPem)).toBe(rootFp);
    expect(second.core.pki.server.certPem).toBe(serverCert);
    const again = await second.adminClient(); // the original password still works
    expect((await again.get(`/identities/${id}`)).body.data).toMatchObject({ name: 'survivor', roleAttributes: ['kept'] });
    expect((await again.get('/identity-role-attributes')).body.data).toContain('kept');
    expect((await again.get('/config-types?filter=' + encodeURIComponent('name = "svc.proxy.v1"'))).body.data).toHaveLength(1);
    expect((await again.get('/identities?filter=isDefaultAdmin')).body.data).toHaveLength(1);
    expect((await again.get('/controllers')).body.data).toHaveLength(1);
    await again.close();
    await second.stop();
  });

  it('generates and reports an admin password once when none is given', async () => {
    const dataDir = tempDir();
    const first = await startTestApp({ dataDir, env: { WEFT_ADMIN_PASSWORD: '' } });
    const pw = first.admin.generatedPassword!;
    expect(pw.length).toBeGreaterThanOrEqual(16);
    const c = first.client();
    await c.login('admin', pw);
    await c.close();
    await first.stop({ keepData: true });
    const second = await startTestApp({ dataDir, env: { WEFT_ADMIN_PASSWORD: '' } });
    expect(second.admin.generatedPassword).toBeUndefined();
    await second.stop();
  });

  it('the server certificate covers the configured address, localhost and 127.0.0.1', async () => {
    const app = await startTestApp();
    const info = parseCertificate(app.core.pki.server.certPem);
    expect(info.dnsNames).toContain('localhost');
    expect(info.ipAddresses).toContain('127.0.0.1');
    // the SQLite file is in the data directory, unless the run's store is PostgreSQL
    expect(existsSync(join(app.dataDir, 'weft.db'))).toBe(!onPostgres());
    expect(readFileSync(join(app.dataDir, 'pki', 'root-ca.key.pem'), 'utf8')).toContain('PRIVATE KEY');
    await app.stop();
  });
});
