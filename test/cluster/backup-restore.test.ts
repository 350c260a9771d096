// weft backup and weft restore: a network with identities, services, policies and enrolled devices is backed up while
// Weft runs (on SQLite, and on PostgreSQL), restored into an empty data directory (SQLite, and an empty PostgreSQL
// database), and the restored Weft serves it: the admin's password login, the devices' own certificates, a dial
// through the built-in router with the real Go SDK, and the JWT key (an enrollment JWT issued before still verifies).
// Wrong passphrases, damaged archives and non-empty targets are refused with nothing written.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, tempDir, type TestApp } from '../support/app';
import { deviceSession, enrolledDevice, type Device } from '../support/edge';
import { openRouter } from '../support/overlay';
import { csr } from '../support/pki';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { createUser } from '../support/users';
import { ROOT, WEFT_BIN } from '../support/weftProcess';
import { runBackup, runRestore } from '../../src/main/backupCommand';
import { SqliteStore } from '../../src/main/core/store/sqlite';
import { openzitiTools, sdkClient, ToolProcess } from '../interop/tools';

const PASSPHRASE = 'correct horse battery staple';

interface Ran {
  status: number;
  stdout: string;
  stderr: string;
}

/** The real `weft` command, as a child process (the test's own Weft keeps serving meanwhile). */
export function weftProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Ran> {
  return new Promise((resolve) =>
    execFile(process.execPath, [WEFT_BIN, ...args], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    ),
  );
}

/** `weft backup|restore` run in this process (the same command, without a process start per call). */
async function weft(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Ran> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const status = await (args[0] === 'backup' ? runBackup : runRestore)(
    args.slice(1),
    (l) => stdout.push(l),
    (l) => stderr.push(l),
    { ...process.env, ...env },
  );
  return { status, stdout: stdout.map((l) => l + '\n').join(''), stderr: stderr.map((l) => l + '\n').join('') };
}

let pg: PostgresServer;
let passphraseFile: string;
beforeAll(async () => {
  pg = await startPostgres();
  passphraseFile = join(tempDir(), 'passphrase');
  writeFileSync(passphraseFile, `${PASSPHRASE}\n`, { mode: 0o600 });
});
afterAll(async () => {
  await pg?.stop();
});

interface Seeded {
  host: Device;
  client: Device;
  pendingJwt: string;
  pendingToken: string;
  pendingId: string;
  caBundle: string;
  serverCert: string;
  counts: Record<string, number>;
}

const countsOf = async (app: TestApp) => {
  const admin = await app.adminClient();
  try {
    return Object.fromEntries(Object.entries((await admin.get('/summary')).body.data as Record<string, number>).filter(([k]) => !/session/i.test(k)));
  } finally {
    await admin.close();
  }
};

/** Identities (a password user, two enrolled devices, one still to enroll), a service both may use, the policies. */
async function seed(app: TestApp): Promise<Seeded> {
  const admin = await app.adminClient();
  try {
    await openRouter(app, admin);
    await createUser(admin, 'alice', 'alice-password-1');
    const host = await enrolledDevice(app, admin, 'host', ['hosts']);
    const client = await enrolledDevice(app, admin, 'client', ['clients']);
    await admin.create('/services', { name: 'echo', encryptionRequired: true, roleAttributes: ['echo'] });
    await admin.create('/service-policies', {
      name: 'echo-bind',
      type: 'Bind',
      semantic: 'AnyOf',
      identityRoles: ['#hosts'],
      serviceRoles: ['#echo'],
    });
    await admin.create('/service-policies', {
      name: 'echo-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#clients'],
      serviceRoles: ['#echo'],
    });
    const pendingId = await admin.create('/identities', { name: 'later', type: 'Device', isAdmin: false, enrollment: { ott: true } });
    const ott = (await admin.get(`/identities/${pendingId}`)).body.data.enrollment.ott;
    return {
      host,
      client,
      pendingJwt: ott.jwt,
      pendingToken: ott.token,
      pendingId,
      caBundle: app.core.pki.caBundlePem,
      serverCert: app.core.pki.server.certPem,
      counts: await countsOf(app),
    };
  } finally {
    await admin.close();
  }
}

/** A Go SDK identity file for a device of `app` (what `ziti edge enroll` writes). */
function identityFile(app: TestApp, device: Device): string {
  const file = join(tempDir('weft-id-'), `${device.name}.json`);
  const pem = (s: string) => `pem:${s}`;
  writeFileSync(
    file,
    JSON.stringify({ ztAPI: app.urls.client, id: { cert: pem(device.cert), key: pem(device.key), ca: pem(app.core.pki.caBundlePem) } }),
  );
  return file;
}

/** Everything a restored network must still do for its users. */
async function expectServes(app: TestApp, seeded: Seeded): Promise<void> {
  // the same PKI and JWT key
  expect(app.core.pki.caBundlePem).toBe(seeded.caBundle);
  expect(app.core.pki.server.certPem).toBe(seeded.serverCert);
  expect(await countsOf(app)).toEqual(seeded.counts);
  // password logins: the admin's and a user's
  const admin = await app.adminClient();
  const alice = app.client();
  try {
    expect((await alice.login('alice', 'alice-password-1')).status).toBe(200);
    // the devices' own certificates, issued before the backup
    const { client: device } = await deviceSession(app, seeded.client);
    expect((await device.get('/services', { api: 'client' })).body.data.map((s: { name: string }) => s.name)).toEqual(['echo']);
    await device.close();
    // an enrollment JWT issued before the backup verifies with the restored key, and its token enrolls
    const jwks = (await app.client().get('/enroll/jwks', { api: 'client' })).body;
    const { payload } = await jwtVerify(seeded.pendingJwt, createLocalJWKSet(jwks));
    expect(payload).toMatchObject({ sub: seeded.pendingId, jti: seeded.pendingToken, em: 'ott' });
    const { csrPem } = await csr('EC-P256', 'later');
    const enrolled = await app.client().post('/enroll/ott', { token: seeded.pendingToken, clientCsr: csrPem }, { api: 'client' });
    expect(enrolled.status, enrolled.text).toBe(200);
    // a dial through the restored built-in router with the real Go SDK: host binds, client dials, bytes echo back
    const { sdkClient: sdk } = openzitiTools();
    const server = new ToolProcess(sdk, ['echo-server', '--identity', identityFile(app, seeded.host), '--service', 'echo']);
    try {
      await server.waitFor((l) => l.bound === true);
      const [dial] = await sdkClient(sdk, ['dial', '--identity', identityFile(app, seeded.client), '--service', 'echo', '--bytes', '65536']);
      expect(dial).toMatchObject({ bytes: 65536 });
    } finally {
      server.end();
      await server.exited;
    }
  } finally {
    await admin.close();
    await alice.close();
  }
}

describe.each([
  { from: 'sqlite', to: 'sqlite' },
  { from: 'postgres', to: 'postgres' },
  { from: 'postgres', to: 'sqlite' },
  { from: 'sqlite', to: 'postgres' },
] as const)('a backup of a network on $from, restored onto $to', { timeout: 240_000 }, ({ from, to }) => {
  it('brings back a network that serves logins, enrolled devices and dials', async () => {
    const sourceDir = tempDir();
    const sourceDb = from === 'postgres' ? await pg.createDatabase() : join(sourceDir, 'weft.db');
    const source = await startTestApp({ dataDir: sourceDir, database: sourceDb });
    let seeded: Seeded;
    const archive = join(tempDir(), 'network.weftbak');
    try {
      seeded = await seed(source);
      // while the source runs
      const run = from === 'sqlite' && to === 'sqlite' ? weftProcess : weft;
      const made = await run(['backup', '--data-dir', sourceDir, '--database', sourceDb, '--passphrase-file', passphraseFile, '-o', archive]);
      expect(made.stderr).toBe('');
      expect(made.status).toBe(0);
      expect(made.stdout).toMatch(/^backup of .* written to .*network\.weftbak \(\d+ bytes\)/);
      expect(statSync(archive).mode & 0o077).toBe(0);
      // the archive is encrypted: no key or certificate in the clear
      const bytes = readFileSync(archive);
      expect(bytes.subarray(0, 8).toString()).toBe('WEFTBAK1');
      expect(bytes.includes('PRIVATE KEY')).toBe(false);
      expect(bytes.includes(Buffer.from(seeded.caBundle.split('\n')[1]!))).toBe(false);
    } finally {
      await source.stop();
    }

    const restoredDir = join(tempDir(), 'restored');
    const targetDb = to === 'postgres' ? await pg.createDatabase() : undefined;
    const restored = await (from === 'sqlite' && to === 'sqlite' ? weftProcess : weft)(
      ['restore', archive, '--data-dir', restoredDir, ...(targetDb ? ['--database', targetDb] : [])],
      {
        WEFT_BACKUP_PASSPHRASE: PASSPHRASE,
      },
    );
    expect(restored.stderr).toBe('');
    expect(restored.status).toBe(0);
    expect(restored.stdout).toMatch(new RegExp(`^restored the backup of \\S+ \\(Weft \\S+, from ${from}\\) into ${restoredDir}`));
    expect(restored.stdout).toContain(`start it with: weft start --data-dir ${restoredDir}`);
    expect(readdirSync(restoredDir).sort()).toEqual(
      expect.arrayContaining(['controller.id', 'pki', 'router', 'secrets.key', ...(to === 'sqlite' ? ['weft.db'] : [])]),
    );
    expect(statSync(join(restoredDir, 'secrets.key')).mode & 0o077).toBe(0);
    expect(statSync(join(restoredDir, 'pki', 'root-ca.key.pem')).mode & 0o077).toBe(0);

    const app = await startTestApp({ dataDir: restoredDir, database: targetDb ?? join(restoredDir, 'weft.db') });
    try {
      expect(app.admin.generatedPassword).toBeUndefined();
      expect(app.admin.username).toBe(ADMIN_USER);
      await expectServes(app, seeded);
      expect((await app.client().login(ADMIN_USER, ADMIN_PASSWORD)).status).toBe(200);
    } finally {
      await app.stop();
    }
  });
});

describe('refusals: nothing is written', { timeout: 120_000 }, () => {
  let archive: string;
  let sourceDir: string;
  beforeAll(async () => {
    sourceDir = tempDir();
    const source = await startTestApp({ dataDir: sourceDir, database: join(sourceDir, 'weft.db') });
    await source.stop({ keepData: true });
    archive = join(tempDir(), 'lab.weftbak');
    const made = await weft(['backup', '--data-dir', sourceDir, '-o', archive], { WEFT_BACKUP_PASSPHRASE: PASSPHRASE });
    expect(made.status, made.stderr).toBe(0);
  });

  const restoreInto = (file: string, dir: string, env: NodeJS.ProcessEnv = { WEFT_BACKUP_PASSPHRASE: PASSPHRASE }, ...more: string[]) =>
    weft(['restore', file, '--data-dir', dir, ...more], env);

  it('a wrong passphrase', async () => {
    const dir = join(tempDir(), 'target');
    const r = await restoreInto(archive, dir, { WEFT_BACKUP_PASSPHRASE: 'not the passphrase' });
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe('weft restore: wrong passphrase for this backup archive');
    expect(existsSync(dir)).toBe(false);
  });

  it('a truncated or altered archive, or not an archive at all', async () => {
    const bytes = readFileSync(archive);
    const damaged = Buffer.from(bytes);
    damaged[damaged.length - 100] ^= 0x01;
    // the header is authenticated too: another IV (its first character changed) does not open
    const headerEdit = Buffer.from(bytes);
    const iv = bytes.indexOf('"iv":"') + 6;
    headerEdit[iv] = headerEdit[iv] === 0x41 ? 0x42 : 0x41;
    for (const [name, content, message] of [
      ['truncated', bytes.subarray(0, bytes.length - 1000), /damaged or truncated/],
      ['flipped', damaged, /damaged or truncated/],
      ['header', headerEdit, /damaged or truncated/],
      ['empty', Buffer.alloc(0), /not a Weft backup archive/],
      ['other', Buffer.from('SQLite format 3\0 and more'), /not a Weft backup archive/],
    ] as const) {
      const file = join(tempDir(), `${name}.weftbak`);
      writeFileSync(file, content);
      const dir = join(tempDir(), 'target');
      const r = await restoreInto(file, dir);
      expect(r.status, name).toBe(1);
      expect(r.stderr, name).toMatch(message);
      expect(r.stderr.split('\n').filter(Boolean), name).toHaveLength(1);
      expect(existsSync(dir), name).toBe(false);
    }
  });

  it('a data directory that is not empty, a database file that exists, a PostgreSQL database holding a network', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const r = await restoreInto(archive, dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/is not empty: restore into a new or empty data directory/);
    expect(readdirSync(dir)).toEqual(['notes.txt']);

    const elsewhere = join(tempDir(), 'weft.db');
    writeFileSync(elsewhere, 'data');
    const target = join(tempDir(), 'target');
    const file = await restoreInto(archive, target, undefined, '--database', elsewhere);
    expect(file.stderr).toMatch(/exists already/);
    expect(readFileSync(elsewhere, 'utf8')).toBe('data');
    expect(existsSync(target)).toBe(false);

    const busy = await pg.createDatabase();
    const running = await startTestApp({ database: busy });
    await running.stop();
    const held = await restoreInto(archive, target, undefined, '--database', busy);
    expect(held.status).toBe(1);
    expect(held.stderr).toMatch(/the target database already holds a network/);
    expect(existsSync(target)).toBe(false);
    // the staging folder beside the target is gone too
    expect(readdirSync(join(target, '..')).filter((n) => n.startsWith('.weft-restore-'))).toEqual([]);
  });

  it('a database file of its own: in the data directory, or elsewhere', async () => {
    for (const where of ['inside', 'elsewhere'] as const) {
      const dir = join(tempDir(), 'target');
      const file = where === 'inside' ? join(dir, 'network.db') : join(tempDir(), 'db', 'network.db');
      const r = await restoreInto(archive, dir, undefined, '--database', file);
      expect(r.stderr, where).toBe('');
      expect(r.stdout, where).toContain(`database ${file}`);
      expect(existsSync(join(dir, 'weft.db')), where).toBe(false);
      const db = new SqliteStore(file);
      try {
        expect((await db.getSql<{ n: number }>('SELECT count(*) AS n FROM identities'))!.n, where).toBeGreaterThan(0);
      } finally {
        await db.close();
      }
      expect(
        readdirSync(dirname(file)).filter((n) => n.includes('restoring')),
        where,
      ).toEqual([]);
    }
  });

  it('bad arguments: no passphrase, a short one, no data dir; backup of a directory without a network', async () => {
    const noPass = await weft(['backup', '--data-dir', sourceDir, '-o', join(tempDir(), 'x.weftbak')], { WEFT_BACKUP_PASSPHRASE: '' });
    expect(noPass.status).toBe(2);
    expect(noPass.stderr).toMatch(/a passphrase is needed: --passphrase-file FILE or the environment variable WEFT_BACKUP_PASSPHRASE/);
    const short = await weft(['backup', '--data-dir', sourceDir], { WEFT_BACKUP_PASSPHRASE: 'short' });
    expect(short.status).toBe(2);
    expect(short.stderr).toMatch(/at least 8 characters/);
    expect((await weft(['restore', archive], { WEFT_BACKUP_PASSPHRASE: PASSPHRASE })).stderr).toMatch(/--data-dir is required/);
    const empty = tempDir();
    const none = await weft(['backup', '--data-dir', empty, '-o', join(empty, 'x.weftbak')], { WEFT_BACKUP_PASSPHRASE: PASSPHRASE });
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(/holds no network's keys/);
    expect(readdirSync(empty)).toEqual([]);
    const existing = await weft(['backup', '--data-dir', sourceDir, '-o', archive], { WEFT_BACKUP_PASSPHRASE: PASSPHRASE });
    expect(existing.status).toBe(1);
    expect(existing.stderr).toMatch(/exists already/);
  });
});
