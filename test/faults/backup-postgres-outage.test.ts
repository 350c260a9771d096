// PostgreSQL stopped while a backup (weft backup) and a snapshot (POST /database/snapshot) are being written from a
// running Weft's database: both fail cleanly (an error line; a 503 in the envelope), leave no partial archive or
// snapshot, the Weft keeps running, and once the database is back the next backup and snapshot work at once.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg_ from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBackup } from '../../src/main/backupCommand';
import { openBackup } from '../../src/main/core/ops/backup';
import { SqliteStore } from '../../src/main/core/store/sqlite';
import { startTestApp, tempDir, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { startPostgres, type PostgresServer } from '../support/postgres';

const PASSPHRASE = 'outage backup passphrase';
let pg: PostgresServer;
let database: string;
let app: TestApp;
let admin: ApiClient;

beforeAll(async () => {
  pg = await startPostgres();
  database = await pg.createDatabase();
  app = await startTestApp({ database });
  admin = await app.adminClient();
  for (let i = 0; i < 5; i++) await admin.create('/services', { name: `kept-${i}`, encryptionRequired: true });
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
  await pg?.stop();
});

async function backup(output: string) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const status = await runBackup(
    ['--data-dir', app.dataDir, '--database', database, '-o', output],
    (l) => stdout.push(l),
    (l) => stderr.push(l),
    { ...process.env, WEFT_BACKUP_PASSPHRASE: PASSPHRASE },
  );
  return { status, stdout, stderr };
}

/** Polls until `n` backends wait for a lock on `table` (the copies are then mid-way: past the tables before it). */
async function waitersOn(table: string, n: number): Promise<void> {
  // a connection of its own, outside any transaction (a transaction sees one snapshot of pg_stat_activity)
  const probe = new pg_.Client({ connectionString: database });
  await probe.connect();
  try {
    for (;;) {
      const r = await probe.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE $1", [
        `%FROM "${table}"%`,
      ]);
      if (r.rows[0].n >= n) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await probe.end();
  }
}

describe('PostgreSQL stopped while a backup and a snapshot are being written', { timeout: 120_000 }, () => {
  it('fails cleanly, leaves nothing partial, and the next backup and snapshot work once it is back', async () => {
    const out = tempDir();
    const archive = join(out, 'during.weftbak');
    // hold the copies mid-way: a table they read late is locked until the server stops
    const locker = new pg_.Client({ connectionString: database });
    locker.on('error', () => undefined);
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE posture_checks IN ACCESS EXCLUSIVE MODE');
    const running = backup(archive);
    const snapshot = admin.post('/database/snapshot');
    await waitersOn('posture_checks', 2);
    // one snapshot at a time: another one while this one is being written is refused
    const second = await admin.post('/database/snapshot');
    expect(second.status).toBe(429);
    expect(second.body.error).toMatchObject({ code: 'RATE_LIMITED', message: 'A database snapshot is already being written' });
    expect(second.headers['retry-after']).toBe('1');
    await pg.halt();

    const failed = await running;
    expect(failed.status).toBe(1);
    expect(failed.stderr).toHaveLength(1);
    expect(failed.stderr[0]).toMatch(/^weft backup: .*(PostgreSQL is unavailable|terminat|connection)/i);
    expect(failed.stderr[0]).not.toMatch(/\n\s+at /);
    expect(readdirSync(out)).toEqual([]);
    const snap = await snapshot;
    expect(snap.status).toBe(503);
    expect(snap.body.error.code).toBe('SERVICE_UNAVAILABLE');
    const snapshots = join(app.dataDir, 'snapshots');
    expect(existsSync(snapshots) ? readdirSync(snapshots) : []).toEqual([]);
    // the node keeps running: it answers, with 503 while the database is away
    expect((await admin.get('/services')).status).toBe(503);
    await locker.end().catch(() => undefined);

    await pg.resume();
    for (let r = await admin.get('/services'); r.status !== 200; r = await admin.get('/services')) {
      expect(r.status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const again = await backup(archive);
    expect(again.stderr).toEqual([]);
    expect(again.status).toBe(0);
    const contents = await openBackup(readFileSync(archive), PASSPHRASE);
    expect(contents.manifest.source).toBe('postgres');
    // the failed snapshot took no turn of the rate limit: the next one is written now
    const next = await admin.post('/database/snapshot');
    expect(next.status).toBe(200);
    const [file] = readdirSync(snapshots);
    expect(file).toMatch(/^weft-.*\.db$/);
    const copy = new SqliteStore(join(snapshots, file!));
    try {
      const names = (await copy.allSql<{ name: string }>("SELECT name FROM services WHERE name LIKE 'kept-%' ORDER BY name")).map((s) => s.name);
      expect(names).toEqual(['kept-0', 'kept-1', 'kept-2', 'kept-3', 'kept-4']);
    } finally {
      await copy.close();
    }
  });
});
