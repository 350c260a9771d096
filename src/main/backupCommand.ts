import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveConfig } from './app';
import { ConfigError } from './config';
import { BackupError, createBackup, MIN_PASSPHRASE, openBackup, restoreBackup } from './core/ops/backup';
import { CA_FILES } from './core/pki/index';
import { SCHEMA_MIGRATIONS } from './core/registry';
import { openStore, redactStoreUrl, sqliteFile } from './core/store/open';
import { WEFT_VERSION } from './version';

type Out = (line: string) => void;

export const PASSPHRASE_ENV = 'WEFT_BACKUP_PASSPHRASE';

export const BACKUP_HELP = `Usage: weft backup [--data-dir DIR] [--database URL] [--config FILE] [--passphrase-file FILE] [-o FILE]

Writes one encrypted file with what a restore needs: the network's database (a consistent copy, also while a Weft
runs on it, on SQLite or PostgreSQL) and the data directory's keys (pki/, secrets.key, cluster.key, controller.id,
router/). Encrypted with a passphrase (scrypt, AES-256-GCM): --passphrase-file FILE (its first line), or the
environment variable ${PASSPHRASE_ENV}; at least ${MIN_PASSPHRASE} characters. Without -o the file is
weft-backup-<time>.weftbak in the current directory; an existing file is never replaced.`;

export const RESTORE_HELP = `Usage: weft restore FILE --data-dir DIR [--database URL] [--passphrase-file FILE]

Restores a backup made by weft backup into DIR, which must be empty or absent, with the database in DIR/weft.db or in
--database (a SQLite file that does not exist, or a PostgreSQL database holding no network). Then run
weft start --data-dir DIR [--database URL]. The passphrase as for weft backup. Nothing is written when the passphrase
is wrong, the file is damaged or the target is not empty.`;

/** The passphrase: the first line of --passphrase-file, or WEFT_BACKUP_PASSPHRASE. */
function passphrase(file: string | undefined, env: NodeJS.ProcessEnv): string {
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new ConfigError(`--passphrase-file: cannot read ${file}: ${(e as Error).message}`);
    }
    const line = text.split(/\r?\n/)[0] ?? '';
    if (!line) throw new ConfigError(`--passphrase-file: ${file} is empty`);
    return line;
  }
  const value = env[PASSPHRASE_ENV];
  if (!value) throw new ConfigError(`a passphrase is needed: --passphrase-file FILE or the environment variable ${PASSPHRASE_ENV}`);
  return value;
}

/** `weft backup`. */
export async function runBackup(argv: string[], out: Out, err: Out, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let values: { 'data-dir'?: string; database?: string; config?: string; 'passphrase-file'?: string; output?: string; help?: boolean };
  let secret: string;
  let dataDir: string;
  let url: string | undefined;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'data-dir': { type: 'string' },
        database: { type: 'string' },
        config: { type: 'string' },
        'passphrase-file': { type: 'string' },
        output: { type: 'string', short: 'o' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
    if (values.help) return (out(BACKUP_HELP), 0);
    const resolved = resolveConfig({ database: values.database, dataDir: values['data-dir'], configFile: values.config });
    dataDir = resolved.dataDir;
    url = resolved.config.store.url;
    secret = passphrase(values['passphrase-file'], env);
    if (secret.length < MIN_PASSPHRASE) throw new ConfigError(`the passphrase must have at least ${MIN_PASSPHRASE} characters`);
  } catch (e) {
    err(`weft backup: ${(e as Error).message}`);
    return 2;
  }
  const missing = CA_FILES.filter((f) => !existsSync(join(dataDir, 'pki', f)));
  if (missing.length) {
    err(`weft backup: ${dataDir} holds no network's keys (pki/${missing[0]} is missing): name the data directory of a Weft with --data-dir`);
    return 1;
  }
  const file = sqliteFile(url, dataDir);
  if (file && !existsSync(file)) {
    err(`weft backup: ${file}: no such database`);
    return 1;
  }
  const now = new Date();
  const output = resolve(values.output ?? `weft-backup-${now.toISOString().replace(/[:.]/g, '-')}.weftbak`);
  if (existsSync(output)) {
    err(`weft backup: ${output} exists already`);
    return 1;
  }
  const partial = `${output}.partial`;
  const store = openStore(url, dataDir);
  try {
    const archive = await createBackup({ store, dataDir, migrations: SCHEMA_MIGRATIONS, passphrase: secret, weftVersion: WEFT_VERSION, now });
    writeFileSync(partial, archive, { mode: 0o600, flag: 'wx' });
    renameSync(partial, output);
    out(`backup of ${file ?? redactStoreUrl(url!)} and ${dataDir} written to ${output} (${archive.length} bytes)`);
    return 0;
  } catch (e) {
    rmSync(partial, { force: true });
    err(`weft backup: ${(e as Error).message}`);
    return 1;
  } finally {
    await store.close();
  }
}

/** `weft restore FILE --data-dir DIR`. */
export async function runRestore(argv: string[], out: Out, err: Out, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let values: { 'data-dir'?: string; database?: string; 'passphrase-file'?: string; help?: boolean };
  let positionals: string[];
  let secret: string;
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: {
        'data-dir': { type: 'string' },
        database: { type: 'string' },
        'passphrase-file': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    }));
    if (values.help) return (out(RESTORE_HELP), 0);
    if (positionals.length !== 1) throw new ConfigError('name one backup file (see weft restore --help)');
    if (!values['data-dir']) throw new ConfigError('--data-dir is required: the new, empty data directory');
    if (values.database === '') throw new ConfigError('--database: must be a PostgreSQL URL or a SQLite file');
    secret = passphrase(values['passphrase-file'], env);
  } catch (e) {
    err(`weft restore: ${(e as Error).message}`);
    return 2;
  }
  const dataDir = resolve(values['data-dir']);
  try {
    let archive: Buffer;
    try {
      archive = readFileSync(positionals[0]!);
    } catch (e) {
      throw new BackupError(`cannot read ${positionals[0]}: ${(e as Error).message}`);
    }
    const contents = await openBackup(archive, secret);
    const { database } = await restoreBackup({ contents, dataDir, databaseUrl: values.database, migrations: SCHEMA_MIGRATIONS });
    const { manifest } = contents;
    out(
      `restored the backup of ${manifest.createdAt} (Weft ${manifest.weftVersion}, from ${manifest.source}) into ${dataDir}, ` +
        `database ${sqliteFile(database, dataDir) ?? redactStoreUrl(database)}`,
    );
    out(`start it with: weft start --data-dir ${dataDir}${values.database ? ` --database ${redactStoreUrl(values.database)}` : ''}`);
    return 0;
  } catch (e) {
    err(`weft restore: ${(e as Error).message}`);
    return 1;
  }
}
