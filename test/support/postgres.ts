import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './freePort';

/**
 * A throwaway PostgreSQL server from Debian's package (`postgresql`): a fresh cluster in a temp directory on a free
 * loopback port, trust authentication, fsync off (a test database need not survive the machine). As root it runs as
 * the package's `postgres` user (PostgreSQL refuses to run as root).
 */
export interface PostgresServer {
  /** the URL of the `postgres` database (for administration) */
  adminUrl: string;
  /** a new empty database (C collation, as SQLite compares text) and its URL */
  createDatabase(): Promise<string>;
  /** shuts the server down (fast shutdown: connections are cut), keeping its data */
  halt(): Promise<void>;
  /** starts it again on the same port with the same data */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const version = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
        .sort((a, b) => Number(b) - Number(a))[0]
    : undefined;
  if (!version) throw new Error('PostgreSQL is not installed (Debian package "postgresql"; .ci/run installs it)');
  return join(root, version, 'bin');
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBinDir();
  const dir = mkdtempSync(join(tmpdir(), 'weft-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? Number(execFileSync('id', ['-u', 'postgres']).toString().trim()) : undefined;
  const group = asRoot ? Number(execFileSync('id', ['-g', 'postgres']).toString().trim()) : undefined;
  if (user !== undefined && group !== undefined) chownSync(dir, user, group);
  const as = user !== undefined ? { uid: user, gid: group } : {};
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--locale=C', '-E', 'UTF8', '--no-sync'], {
    stdio: 'pipe',
    ...as,
  });
  const port = await freePort();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let log = '';
  let proc: ChildProcess;
  const launch = async () => {
    proc = spawn(
      join(bin, 'postgres'),
      ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off'].concat([
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=400',
      ]),
      { stdio: ['ignore', 'ignore', 'pipe'], ...as },
    );
    proc.stderr?.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
    await waitUntilAccepting(adminUrl, proc, () => log);
  };
  const halt = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGINT'); // fast shutdown
    await exited;
  };
  await launch();

  return {
    adminUrl,
    createDatabase: () => createDatabase(adminUrl),
    halt,
    resume: launch,
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls until the server accepts a connection (or has exited, which is reported with its log). */
async function waitUntilAccepting(url: string, proc: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`PostgreSQL exited (${proc.exitCode}): ${log()}`);
    const c = new pg.Client({ connectionString: url });
    try {
      await c.connect();
      await c.end();
      return;
    } catch (e) {
      await c.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not start: ${(e as Error).message}\n${log()}`, { cause: e });
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

let databases = 0;

/** A new empty database on the server of `adminUrl` (C collation, as SQLite compares text), and its URL. */
export async function createDatabase(adminUrl: string): Promise<string> {
  const name = `weft_${process.pid}_${++databases}_${Math.random().toString(36).slice(2, 8)}`;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`);
  } finally {
    await c.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Whether this test run is the PostgreSQL one (`WEFT_TEST_STORE=postgres`, see vitest.config.ts). */
export const onPostgres = (): boolean => process.env.WEFT_TEST_STORE === 'postgres';
