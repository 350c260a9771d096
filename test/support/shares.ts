// Weft with a frontend for share tests: the app started from a YAML config with a `frontend` section,
// an adjustable clock, in-process IO for `weft share` and the real CLI as a child process.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Logger } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import type { Clock } from '../../src/main/core/clock';
import type { FrontendConfig, ProviderConfig } from '../../src/main/frontend/config';
import { runShareCommand, type ShareIo } from '../../src/main/share/shareCommand';
import { startTestApp, tempDir, type TestApp } from './app';
import type { ApiClient } from './client';
import { startEchoBackend, type EchoBackend } from './browser';
import { ENCRYPTION_KEY, SIGNING_KEY, SHARE_DOMAIN, COOKIE_DOMAIN, COOKIE_NAME, AUTH_HOST } from './browser';

export const ROOT = join(import.meta.dirname, '..', '..');
export const WEFT_BIN = join(ROOT, 'bin', 'weft.mjs');

export const GITHUB: ProviderConfig = { name: 'github', type: 'idp_a', client_id: 'gh-client', client_secret: 'gh-secret' };
export const GOOGLE: ProviderConfig = { name: 'google', type: 'idp_b', client_id: 'gg-client', client_secret: 'gg-secret' };

/** A frontend section on loopback port 0; shares at *.share.weft.test, OAuth at auth.weft.test:<oauthPort>. */
export function frontendSection(opts: { providers?: ProviderConfig[]; oauthPort?: number; noOAuth?: boolean } = {}): FrontendConfig {
  const oauthPort = opts.oauthPort ?? 0;
  return {
    bind_address: '127.0.0.1:0',
    share_domain: SHARE_DOMAIN,
    ...(opts.noOAuth
      ? {}
      : {
          oauth: {
            bind_address: `127.0.0.1:${oauthPort}`,
            endpoint_url: `http://${AUTH_HOST}:${oauthPort || 9}`,
            cookie_name: COOKIE_NAME,
            cookie_domain: COOKIE_DOMAIN,
            session_lifetime: '6h',
            intermediate_lifetime: '5m',
            signing_key: SIGNING_KEY,
            encryption_key: ENCRYPTION_KEY,
            providers: (opts.providers ?? [GITHUB, GOOGLE]).map((p) => ({ ...p })),
          },
        }),
  };
}

/** Writes `config` as a YAML file (JSON is YAML) and returns its path. */
export function writeConfigFile(config: Record<string, unknown>, dir = tempDir('weft-config-')): string {
  const file = join(dir, 'weft.yml');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** The real app with the given frontend section (none: no frontend). */
export function startShareApp(opts: { frontend?: FrontendConfig; clock?: Clock; dataDir?: string; logger?: Logger } = {}): Promise<TestApp> {
  const configFile = writeConfigFile(opts.frontend ? { frontend: opts.frontend } : {});
  return startTestApp({ configFile, clock: opts.clock, dataDir: opts.dataDir, ...(opts.logger ? { logger: opts.logger } : {}) });
}

/** Real time plus an offset that tests move forward (core and frontend share it). */
export class OffsetClock implements Clock {
  private offset = 0;
  now(): Date {
    return new Date(Date.now() + this.offset);
  }
  advance(ms: number): void {
    this.offset += ms;
  }
}

/** The public URL of a share (with a path) on a test app's frontend. */
export function shareUrl(app: TestApp, token: string, pathAndQuery = '/'): string {
  return app.urls.frontend!.shareUrl.replace('{token}', token).replace(/\/$/, pathAndQuery);
}

/** In-process IO for runShareCommand: collects lines; `stop()` plays the part of Ctrl-C. */
export class MemoryShareIo implements ShareIo {
  readonly lines: string[] = [];
  readonly errors: string[] = [];
  readonly events = new EventEmitter();
  readonly stopped: Promise<string>;
  stop!: (signal?: string) => void;

  constructor() {
    this.stopped = new Promise((resolve) => (this.stop = (signal = 'SIGINT') => resolve(signal)));
  }
  out = (line: string) => {
    this.lines.push(...line.split('\n'));
    this.events.emit('line', line);
  };
  err = (line: string) => void this.errors.push(line);

  /** Resolves with the public URL once it is printed. */
  async publicUrl(): Promise<string> {
    for (;;) {
      const url = /public URL:\s+(\S+)/.exec(this.lines.join('\n'))?.[1];
      if (url) return url;
      await once(this.events, 'line');
    }
  }
}

export interface ShareCli {
  proc: ChildProcess;
  stdout: string[];
  stderr: string[];
  /** the printed public URL */
  url: string;
  token: string;
  /** resolves with the exit code once the process ends */
  exited: Promise<number | null>;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs the real `weft share public ...` as a child process and waits for its public URL. */
export function startShareCli(args: string[]): Promise<ShareCli> {
  return startWeftShare('public', args);
}

/**
 * Runs the real `weft share <sub> ...` as a child process (in `cwd`, ROOT by default) and waits for the public URL it
 * prints (`share host` prints it once the share is bound).
 */
export async function startWeftShare(sub: 'public' | 'host', args: string[], opts: { cwd?: string } = {}): Promise<ShareCli> {
  const proc = spawn(process.execPath, [WEFT_BIN, 'share', sub, ...args], { cwd: opts.cwd ?? ROOT, env: { ...process.env } });
  const stdout: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: proc.stderr! }).on('line', (l) => stderr.push(l));
  // 'close' comes after the output streams ended: every line printed before exiting has been read by then
  const exited = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`weft share ${sub} exited with ${code}:\n${stdout.join('\n')}\n${stderr.join('\n')}`)));
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      stdout.push(l);
      const m = /public URL:\s+(\S+)/.exec(l);
      if (m) resolve(m[1]!);
    });
  });
  const token = new URL(url).hostname.split('.')[0]!;
  return {
    proc,
    stdout,
    stderr,
    url,
    token,
    exited,
    stop: (signal = 'SIGINT') => {
      if (proc.exitCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/** `weft share ...` run in process (runShareCommand) until stop(): its IO, and the URL once printed. */
export interface RunningShare {
  io: MemoryShareIo;
  url: string;
  token: string;
  /** resolves with the exit code once the command ends by itself */
  exited: Promise<number>;
  /** plays Ctrl-C and resolves with the exit code */
  stop(): Promise<number>;
}

/** Starts `weft share <args> --data-dir <dataDir>` in process; rejects with its errors if it exits before printing a URL. */
export async function runShare(args: string[], dataDir: string): Promise<RunningShare> {
  const io = new MemoryShareIo();
  const exited = runShareCommand([...args, '--data-dir', dataDir], io);
  const url = await Promise.race([
    io.publicUrl(),
    exited.then((code): never => {
      throw new Error(`weft share ${args[0]} exited with ${code}: ${[...io.lines, ...io.errors].join('\n')}`);
    }),
  ]);
  return {
    io,
    url,
    token: new URL(url).hostname.split('.')[0]!,
    exited,
    stop: () => {
      io.stop();
      return exited;
    },
  };
}

/** For a whole test file: an app with the test frontend, an echo backend and an admin client; closed afterwards. */
export function useShareApp(use: (s: { app: TestApp; admin: ApiClient; backend: EchoBackend }) => void): void {
  let s: { app: TestApp; admin: ApiClient; backend: EchoBackend } | undefined;
  beforeAll(async () => {
    const [app, backend] = await Promise.all([startShareApp({ frontend: frontendSection() }), startEchoBackend()]);
    s = { app, backend, admin: await app.adminClient() };
    use(s);
  });
  afterAll(async () => {
    await s?.admin.close();
    await s?.app.stop();
    await s?.backend.close();
  });
}
