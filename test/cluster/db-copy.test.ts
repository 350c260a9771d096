// weft migrate and weft db copy: a lab made on SQLite moves to PostgreSQL (and back) and keeps working there.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, tempDir } from '../support/app';
import { ApiClient } from '../support/client';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { createUser } from '../support/users';
import { WEFT_BIN, ROOT } from '../support/weftProcess';

const weft = (...args: string[]) => spawnSync(process.execPath, [WEFT_BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });

let pg: PostgresServer;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg?.stop();
});

describe('moving a network between databases', { timeout: 240_000 }, () => {
  it('weft migrate creates the schema once, on PostgreSQL and on SQLite', async () => {
    const url = await pg.createDatabase();
    const first = weft('migrate', '--database', url);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/applied migrations 1, 2, 3, .*; schema version \d+/);
    const again = weft('migrate', '--database', url);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/nothing to do/);
    const dir = join(tempDir(), 'new-lab');
    expect(weft('migrate', '--data-dir', dir).stdout).toMatch(/new-lab\/weft\.db: applied migrations 1,/);
    const bad = weft('migrate', '--database', 'postgres://nobody@127.0.0.1:1/none');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^weft migrate: PostgreSQL is unavailable/);
  });

  it('weft db copy moves a lab to PostgreSQL, where it runs as before; a second copy is refused; and back', async () => {
    // a lab on SQLite: a user allowed to dial a service
    const dataDir = tempDir();
    const lab = await startTestApp({ dataDir, database: join(dataDir, 'weft.db') });
    const admin = await lab.adminClient();
    const userId = await createUser(admin, 'mover', 'mover-password-1', { roleAttributes: ['movers'] });
    const serviceId = await admin.create('/services', { name: 'moved-service', roleAttributes: ['moved'], encryptionRequired: true });
    await admin.create('/service-policies', {
      name: 'movers-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#movers'],
      serviceRoles: ['#moved'],
    });
    // the user was seen: its session ended, its last seen time stays (and moves with the database)
    const seen = lab.client();
    await seen.login('mover', 'mover-password-1', 'client');
    expect((await seen.del('/current-api-session', { api: 'client' })).status).toBe(200);
    await seen.close();
    const lastSeenAt = (await admin.get(`/identities/${userId}`)).body.data.lastSeenAt as string;
    expect(lastSeenAt).toMatch(/^\d{4}-/);
    // what the network holds (API sessions come and go with each login)
    const counts = async (c: ApiClient) =>
      Object.fromEntries(Object.entries((await c.get('/summary')).body.data as Record<string, number>).filter(([k]) => !/session/i.test(k)));
    const before = await counts(admin);
    await admin.close();
    await lab.stop({ keepData: true });

    const url = await pg.createDatabase();
    const copy = weft('db', 'copy', '--from', join(dataDir, 'weft.db'), '--to', url);
    expect(copy.status, copy.stderr).toBe(0);
    expect(copy.stdout).toMatch(/^copied \d+ rows in \d+ tables from .*weft\.db to postgres:\/\/postgres@127\.0\.0\.1:\d+\/weft_/);
    expect(copy.stdout).toMatch(/identities\s+\d+/);
    const twice = weft('db', 'copy', '--from', join(dataDir, 'weft.db'), '--to', url);
    expect(twice.status).toBe(1);
    expect(twice.stderr).toMatch(/the target already holds a network/);
    expect(weft('db', 'copy', '--from', join(dataDir, 'nothing.db'), '--to', url).stderr).toMatch(/no such file/);
    expect(weft('db', 'copy', '--from', join(dataDir, 'weft.db')).status).toBe(2);

    // the lab's data directory (its CA and secret key) on PostgreSQL: the same network
    const moved = await startTestApp({ dataDir, database: url });
    try {
      const admin2 = await moved.adminClient();
      expect(await counts(admin2)).toEqual(before);
      expect((await admin2.get(`/identities/${userId}`)).body.data).toMatchObject({ name: 'mover', roleAttributes: ['movers'], lastSeenAt });
      const user = moved.client();
      expect((await user.login('mover', 'mover-password-1')).status).toBe(200);
      const services = (await user.get('/services', { api: 'client' })).body.data as Array<{ id: string }>;
      expect(services.map((s) => s.id)).toEqual([serviceId]);
      // the copied policy index is consistent: the integrity check finds nothing
      expect((await admin2.post('/database/check-data-integrity')).status).toBe(202);
      let results: any;
      for (;;) {
        results = (await admin2.get('/database/data-integrity-results')).body.data;
        if (!results.inProgress) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(results).toMatchObject({ error: null, results: [] });
      await user.close();
      await admin2.close();
    } finally {
      await moved.stop({ keepData: true });
    }

    // and back to a SQLite file
    const back = join(tempDir(), 'back.db');
    const reverse = weft('db', 'copy', '--from', url, '--to', back);
    expect(reverse.status, reverse.stderr).toBe(0);
    const again = await startTestApp({ dataDir, database: back });
    try {
      const admin3 = await again.adminClient();
      expect(await counts(admin3)).toEqual(before);
      // the kept time came back (the user's later login on PostgreSQL is a live session, newer still)
      const kept = await again.core.store.getSql<{ last_seen_at: string }>(
        'SELECT last_seen_at FROM identity_last_seen WHERE identity_id = ?',
        userId,
      );
      expect(kept?.last_seen_at).toBe(lastSeenAt);
      await admin3.close();
    } finally {
      await again.stop();
    }
  });
});
