// Starts the real `weft` command (what `npm start` runs) as a child process and reads its banner.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ApiClient } from './client';

export const ROOT = join(import.meta.dirname, '..', '..');
export const WEFT_BIN = join(ROOT, 'bin', 'weft.mjs');

export interface WeftProcess {
  proc: ChildProcess;
  /** stdout lines so far (the banner first) */
  lines: string[];
  banner: string;
  /** everything written to stderr so far (the log) */
  stderr(): string;
  /** the controller API's base URL, e.g. https://127.0.0.1:40123 */
  api: string;
  /** the control channel's advertised address (tls:host:port), unless it is off */
  ctrl?: string;
  dataDir: string;
  /** the CA bundle clients trust (root, intermediate, signing) */
  caPem(): string;
  /** an ApiClient logged in with the given credentials */
  login(username: string, password: string): Promise<ApiClient>;
  /** SIGINT, then the exit code */
  stop(): Promise<number | null>;
}

/** Runs `weft start <args>` with `--data-dir dataDir` and resolves once the banner is printed. */
export async function startWeftProcess(dataDir: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<WeftProcess> {
  const proc = spawn(process.execPath, [WEFT_BIN, '--data-dir', dataDir, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  proc.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
  await new Promise<void>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`weft exited ${code}: ${lines.join('\n')}\n${stderr.join('').slice(-4000)}`)));
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      lines.push(l);
      if (l.includes('admin username:')) setImmediate(resolve); // the rest of the banner arrives in the same chunk
    });
  });
  proc.removeAllListeners('exit');
  const banner = lines.join('\n');
  const api = /controller API:\s+(\S+)/.exec(banner)![1]!;
  const ctrl = /control channel:\s+(\S+)/.exec(banner)?.[1];
  const caPem = () => readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8');
  return {
    proc,
    lines,
    banner,
    stderr: () => stderr.join(''),
    api,
    ctrl,
    dataDir,
    caPem,
    login: async (username, password) => {
      const c = new ApiClient(api, caPem());
      await c.login(username, password);
      return c;
    },
    stop: () =>
      new Promise<number | null>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve(proc.exitCode);
        proc.once('exit', (code) => resolve(code));
        proc.kill('SIGINT');
      }),
  };
}
