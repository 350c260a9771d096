import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Migration, Store } from '../store/db';
import { openStore, sqliteFile } from '../store/open';
import { SqliteStore } from '../store/sqlite';
import { copyDatabase } from './databaseCopy';
import { writeSqliteCopy } from './snapshot';

/**
 * Backups: one file holding what a restore needs to bring a network back on a new machine — its database (a SQLite
 * copy made as a snapshot is, on either store) and the data directory's keys (the PKI: CAs, server and admin client
 * certificates; the secrets key; the cluster key; the node's controller id; the built-in router's id and keys) —
 * encrypted with a passphrase.
 *
 * The archive: `WEFTBAK1`, a u32 (big-endian) length, a JSON header (format version, the KDF and its parameters and
 * salt, the cipher's IV, a passphrase check), then AES-256-GCM of the gzipped contents, then the 16-byte tag. The key
 * comes from the passphrase through scrypt (N=2^17, r=8, p=1: 128 MiB and a fraction of a second per try); the header is
 * authenticated with the contents (GCM's additional data), so nothing in the file can change without the restore
 * refusing it. The check (an HMAC under a key derived apart from the encryption key) tells a wrong passphrase from a
 * damaged file. The contents: a u32 length, a JSON manifest (when, which Weft and schema, the source store, each
 * part's path, mode and size), then the parts' bytes in the manifest's order, the database first.
 */

const MAGIC = Buffer.from('WEFTBAK1');
const FORMAT_VERSION = 1;
const TAG_BYTES = 16;
const SCRYPT = { N: 1 << 17, r: 8, p: 1 };
const MAX_HEADER = 64 * 1024;
/** Data directory entries a backup takes (the rest is the database, or made again: runtime.json, snapshots/). */
const DATA_DIR_ENTRIES = ['pki', 'router', 'secrets.key', 'cluster.key', 'controller.id'];
/** work folders of the PKI's atomic writes: never part of a backup */
const SKIPPED = new Set(['.staging']);
const DATABASE_FILE = 'weft.db';

/** A refused backup or restore: the message says why, for the operator (nothing was written). */
export class BackupError extends Error {}

export interface BackupManifest {
  format: 'weft-backup';
  createdAt: string;
  weftVersion: string;
  /** the database's schema version */
  schemaVersion: number;
  /** the store the backup was taken from */
  source: 'sqlite' | 'postgres';
  database: { size: number; sha256: string };
  files: Array<{ path: string; mode: number; size: number }>;
}

export interface BackupContents {
  manifest: BackupManifest;
  /** a SQLite database file */
  database: Buffer;
  files: Array<{ path: string; mode: number; content: Buffer }>;
}

interface Header {
  format: 'weft-backup';
  version: number;
  kdf: { name: 'scrypt'; N: number; r: number; p: number; salt: string };
  cipher: 'aes-256-gcm';
  iv: string;
  check: string;
}

/** The shortest passphrase a backup is written with. */
export const MIN_PASSPHRASE = 8;

async function deriveKeys(passphrase: string, kdf: Header['kdf']): Promise<{ enc: Buffer; check: Buffer }> {
  const master = await new Promise<Buffer>((ok, fail) =>
    scrypt(
      passphrase.normalize('NFC'),
      Buffer.from(kdf.salt, 'base64'),
      32,
      { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 256 * kdf.N * kdf.r * 2 },
      (e, k) => (e ? fail(e) : ok(k)),
    ),
  );
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, 32));
  return { enc: derive('weft backup v1: encryption'), check: derive('weft backup v1: passphrase check') };
}

const checkValue = (key: Buffer) => createHmac('sha256', key).update('weft backup passphrase check').digest();

/** The files of a data directory a backup takes, by path relative to it (sorted). */
function dataDirFiles(dataDir: string): Array<{ path: string; mode: number; content: Buffer }> {
  const out: Array<{ path: string; mode: number; content: Buffer }> = [];
  const visit = (rel: string) => {
    const abs = join(dataDir, rel);
    if (!existsSync(abs)) return;
    const st = lstatSync(abs);
    if (st.isDirectory()) {
      for (const name of readdirSync(abs).sort()) if (!SKIPPED.has(name)) visit(posix.join(rel, name));
    } else if (st.isFile()) {
      out.push({ path: rel, mode: st.mode & 0o777, content: readFileSync(abs) });
    }
  };
  for (const entry of DATA_DIR_ENTRIES) visit(entry);
  return out;
}

/**
 * A backup of the network on `store` with the keys of `dataDir`, encrypted with `passphrase`: the archive's bytes.
 * Consistent while a Weft runs on them (the database is read as one snapshot; the keys do not change while it runs).
 */
export async function createBackup(opts: {
  store: Store;
  dataDir: string;
  migrations: readonly Migration[];
  passphrase: string;
  weftVersion: string;
  now: Date;
}): Promise<Buffer> {
  if (opts.passphrase.length < MIN_PASSPHRASE) throw new BackupError(`the passphrase must have at least ${MIN_PASSPHRASE} characters`);
  const work = mkdtempSync(join(tmpdir(), 'weft-backup-'));
  try {
    const file = join(work, DATABASE_FILE);
    await writeSqliteCopy(opts.store, file, opts.migrations);
    const database = readFileSync(file);
    const schemaVersion = await sqliteSchemaVersion(file);
    const files = dataDirFiles(opts.dataDir);
    const manifest: BackupManifest = {
      format: 'weft-backup',
      createdAt: opts.now.toISOString(),
      weftVersion: opts.weftVersion,
      schemaVersion,
      source: opts.store.dialect,
      database: { size: database.length, sha256: createHash('sha256').update(database).digest('hex') },
      files: files.map((f) => ({ path: f.path, mode: f.mode, size: f.content.length })),
    };
    const manifestBytes = Buffer.from(JSON.stringify(manifest));
    const length = Buffer.alloc(4);
    length.writeUInt32BE(manifestBytes.length);
    const plain = gzipSync(Buffer.concat([length, manifestBytes, database, ...files.map((f) => f.content)]));
    return await seal(plain, opts.passphrase);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function sqliteSchemaVersion(file: string): Promise<number> {
  const s = new SqliteStore(file);
  try {
    return (await s.getSql<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations'))?.v ?? 0;
  } finally {
    await s.close();
  }
}

async function seal(plain: Buffer, passphrase: string): Promise<Buffer> {
  const kdf = { name: 'scrypt' as const, ...SCRYPT, salt: randomBytes(16).toString('base64') };
  const keys = await deriveKeys(passphrase, kdf);
  const iv = randomBytes(12);
  const header: Header = {
    format: 'weft-backup',
    version: FORMAT_VERSION,
    kdf,
    cipher: 'aes-256-gcm',
    iv: iv.toString('base64'),
    check: checkValue(keys.check).toString('base64'),
  };
  const headerBytes = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(headerBytes.length);
  const prefix = Buffer.concat([MAGIC, length, headerBytes]);
  const cipher = createCipheriv('aes-256-gcm', keys.enc, iv);
  cipher.setAAD(prefix);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([prefix, body, cipher.getAuthTag()]);
}

const DAMAGED = 'the backup archive is damaged or truncated (it does not authenticate)';

/** Decrypts and checks an archive; throws BackupError (wrong passphrase, not an archive, damaged or truncated). */
export async function openBackup(archive: Buffer, passphrase: string): Promise<BackupContents> {
  if (archive.length < MAGIC.length + 4 || !archive.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new BackupError('not a Weft backup archive (it does not start with WEFTBAK1)');
  }
  const headerLength = archive.readUInt32BE(MAGIC.length);
  const bodyStart = MAGIC.length + 4 + headerLength;
  if (headerLength > MAX_HEADER || archive.length < bodyStart + TAG_BYTES) throw new BackupError(DAMAGED);
  let header: Header;
  try {
    header = JSON.parse(archive.subarray(MAGIC.length + 4, bodyStart).toString('utf8')) as Header;
  } catch {
    throw new BackupError(DAMAGED);
  }
  if (header.format !== 'weft-backup' || header.cipher !== 'aes-256-gcm' || header.kdf?.name !== 'scrypt') throw new BackupError(DAMAGED);
  if (header.version !== FORMAT_VERSION)
    throw new BackupError(`the backup archive has format version ${header.version}; this Weft reads version ${FORMAT_VERSION}`);
  const { N, r, p } = header.kdf;
  // parameters an archive may ask for: at least ours, at most what a restore can afford
  if (![N, r, p].every(Number.isSafeInteger) || N < SCRYPT.N || N > 1 << 20 || r < 1 || r > 32 || p < 1 || p > 16) throw new BackupError(DAMAGED);
  let keys: { enc: Buffer; check: Buffer };
  try {
    keys = await deriveKeys(passphrase, header.kdf);
  } catch {
    throw new BackupError(DAMAGED);
  }
  const check = Buffer.from(String(header.check), 'base64');
  const expected = checkValue(keys.check);
  if (check.length !== expected.length || !timingSafeEqual(check, expected)) throw new BackupError('wrong passphrase for this backup archive');
  let plain: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keys.enc, Buffer.from(header.iv, 'base64'));
    decipher.setAAD(archive.subarray(0, bodyStart));
    decipher.setAuthTag(archive.subarray(archive.length - TAG_BYTES));
    plain = gunzipSync(Buffer.concat([decipher.update(archive.subarray(bodyStart, archive.length - TAG_BYTES)), decipher.final()]));
  } catch {
    throw new BackupError(DAMAGED);
  }
  return unpack(plain);
}

function unpack(plain: Buffer): BackupContents {
  const bad = (why: string) => new BackupError(`the backup archive is not one this Weft can restore: ${why}`);
  if (plain.length < 4) throw bad('no manifest');
  const length = plain.readUInt32BE(0);
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(plain.subarray(4, 4 + length).toString('utf8')) as BackupManifest;
  } catch {
    throw bad('its manifest is not JSON');
  }
  if (manifest.format !== 'weft-backup' || !manifest.database || !Array.isArray(manifest.files)) throw bad('no database in its manifest');
  let at = 4 + length;
  const take = (size: number) => {
    if (!Number.isSafeInteger(size) || size < 0 || at + size > plain.length) throw bad('its parts do not match its manifest');
    const part = plain.subarray(at, at + size);
    at += size;
    return part;
  };
  const database = take(manifest.database.size);
  if (createHash('sha256').update(database).digest('hex') !== manifest.database.sha256) throw bad('its database does not match its checksum');
  const files = manifest.files.map((f) => {
    const path = posix.normalize(String(f.path));
    if (path.startsWith('/') || path.startsWith('..') || !DATA_DIR_ENTRIES.includes(path.split('/')[0]!)) throw bad(`it names ${f.path}`);
    return { path, mode: Number(f.mode) & 0o700, content: take(f.size) };
  });
  if (at !== plain.length) throw bad('its parts do not match its manifest');
  return { manifest, database, files };
}

/**
 * Restores a backup into `dataDir`, which must be empty or absent, with the network's database in `databaseUrl` (a
 * PostgreSQL database holding no network yet, or a SQLite file that does not exist; default `<dataDir>/weft.db`). The
 * database is brought up to this Weft's schema. Checks first, writes only once they pass; the files are staged beside
 * the data directory and moved in at the end; on PostgreSQL the rows go in one transaction. A failure leaves neither
 * files nor rows behind.
 */
export async function restoreBackup(opts: {
  contents: BackupContents;
  dataDir: string;
  databaseUrl?: string;
  migrations: readonly Migration[];
}): Promise<{ database: string }> {
  const dataDir = resolve(opts.dataDir);
  const latest = Math.max(...opts.migrations.map((m) => m.version));
  if (opts.contents.manifest.schemaVersion > latest) {
    throw new BackupError(
      `the backup was made by a newer Weft (${opts.contents.manifest.weftVersion}, schema version ${opts.contents.manifest.schemaVersion}; this one has ${latest}): restore it with that version`,
    );
  }
  if (existsSync(dataDir)) {
    if (!statSync(dataDir).isDirectory()) throw new BackupError(`${dataDir} is not a directory`);
    if (readdirSync(dataDir).length) throw new BackupError(`${dataDir} is not empty: restore into a new or empty data directory`);
  }
  const file = sqliteFile(opts.databaseUrl, dataDir);
  const inDataDir = file !== undefined && dirname(file) === dataDir;
  if (file && !inDataDir && existsSync(file) && statSync(file).size > 0)
    throw new BackupError(`${file} exists already: restore into a new database file`);
  const target = file ? undefined : openStore(opts.databaseUrl, dataDir);
  try {
    if (target && (await target.tables()).includes('identities') && (await target.getSql('SELECT 1 AS x FROM identities LIMIT 1'))) {
      throw new BackupError('the target database already holds a network (it has identities): restore into an empty database');
    }
    mkdirSync(dirname(dataDir), { recursive: true });
    const staging = mkdtempSync(join(dirname(dataDir), '.weft-restore-'));
    const outside = file && !inDataDir ? `${file}.restoring` : undefined;
    try {
      for (const f of opts.contents.files) {
        const to = join(staging, f.path);
        mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
        writeFileSync(to, f.content, { mode: f.mode || 0o600 });
      }
      if (outside) mkdirSync(dirname(outside), { recursive: true, mode: 0o700 });
      const dbFile = target ? join(staging, '.restore.db') : (outside ?? join(staging, basename(file!)));
      writeFileSync(dbFile, opts.contents.database, { mode: 0o600 });
      const restored = new SqliteStore(dbFile);
      try {
        await restored.migrate(opts.migrations);
        if (target) {
          await target.migrate(opts.migrations);
          await copyDatabase(restored, target);
        }
      } finally {
        await restored.close();
      }
      if (target) for (const f of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) rmSync(f, { force: true });
      if (outside) renameSync(outside, file!);
      moveInto(staging, dataDir);
    } catch (e) {
      rmSync(staging, { recursive: true, force: true });
      if (outside) for (const f of [outside, `${outside}-wal`, `${outside}-shm`]) rmSync(f, { force: true });
      throw e;
    }
  } finally {
    await target?.close();
  }
  return { database: file ?? opts.databaseUrl! };
}

/** Moves the staged data directory into place: a rename of the whole, or of each entry into an existing empty one. */
function moveInto(staging: string, dataDir: string): void {
  if (!existsSync(dataDir)) return renameSync(staging, dataDir);
  for (const name of readdirSync(staging)) renameSync(join(staging, name), join(dataDir, name));
  rmdirSync(staging);
}
