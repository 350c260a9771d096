// The real OpenZiti programs the interop tests drive: the `ziti` CLI and weft-sdk-client (test/interop/sdkclient,
// on the OpenZiti Go SDK), built by scripts/openziti-tools.sh into a cache folder.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openzitiDir, openzitiStamp } from '../../scripts/openziti-stamp.mjs';
import { expect } from 'vitest';

export { openzitiDir };
import { tempDir } from '../support/app';
import type { ApiClient } from '../support/client';

export const INSTALL_COMMAND = 'npm run openziti-tools';

/** Paths of the tools; throws (failing the test, naming the install command) when they are missing or stale. */
export function openzitiTools(): { ziti: string; sdkClient: string; dir: string } {
  const dir = openzitiDir();
  const ziti = join(dir, 'ziti');
  const sdkClient = join(dir, 'weft-sdk-client');
  const missing = [ziti, sdkClient].filter((p) => !existsSync(p));
  if (missing.length) throw new Error(`the OpenZiti test tools are not installed (${missing.join(', ')} missing): run \`${INSTALL_COMMAND}\``);
  const stamp = existsSync(join(dir, 'stamp')) ? readFileSync(join(dir, 'stamp'), 'utf8').trim() : '';
  if (stamp !== openzitiStamp()) throw new Error(`the OpenZiti test tools in ${dir} are out of date: run \`${INSTALL_COMMAND}\``);
  return { ziti, sdkClient, dir };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(file: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env: { ...process.env, ...opts.env }, cwd: opts.cwd, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

const describeRun = (what: string, r: RunResult) =>
  `${what} exited ${r.code}\n--- stdout\n${r.stdout.slice(-3000)}\n--- stderr\n${r.stderr.slice(-3000)}`;

/** The `ziti` CLI with its own config folder (its logins), so tests never touch ~/.config/ziti. */
export class ZitiCli {
  readonly configDir: string;
  constructor(
    readonly bin: string,
    readonly cwd = tempDir('weft-ziti-'),
  ) {
    this.configDir = join(cwd, 'ziti-config');
    mkdirSync(this.configDir, { recursive: true });
  }

  run(...args: string[]): Promise<RunResult> {
    return run(this.bin, args, { env: { ZITI_CONFIG_DIR: this.configDir, HOME: this.cwd }, cwd: this.cwd });
  }

  /** Runs and expects exit status 0; returns stdout. */
  async ok(...args: string[]): Promise<string> {
    const r = await this.run(...args);
    if (r.code !== 0) throw new Error(describeRun(`ziti ${args.join(' ')}`, r));
    return r.stdout;
  }

  /** Runs and expects a failure; returns stdout + stderr. */
  async fails(...args: string[]): Promise<string> {
    const r = await this.run(...args);
    if (r.code === 0) throw new Error(describeRun(`ziti ${args.join(' ')} (expected to fail)`, r));
    return r.stdout + r.stderr;
  }

  /** `ziti edge ... -j`: the JSON the CLI prints. */
  async json<T = any>(...args: string[]): Promise<T> {
    return JSON.parse(await this.ok(...args, '-j')) as T;
  }

  /** An identity created and enrolled with the CLI (`ziti edge create identity` + `ziti edge enroll`): its id and identity file. */
  async enrolledIdentity(name: string, attrs: string[] = []): Promise<{ id: string; file: string }> {
    const jwt = join(this.cwd, `${name}.jwt`);
    const id = await this.create('identity', name, '-o', jwt, ...(attrs.length ? ['-a', attrs.join(',')] : []));
    const file = join(this.cwd, `${name}.json`);
    await this.ok('edge', 'enroll', jwt, '-o', file);
    return { id, file };
  }

  /** Identities enrolled with the CLI, one role attribute each (name → attribute): their identity files by name. */
  async enrolledIdentities(attrs: Record<string, string>): Promise<Record<string, string>> {
    const files: Record<string, string> = {};
    for (const [name, attr] of Object.entries(attrs)) files[name] = (await this.enrolledIdentity(name, [attr])).file;
    return files;
  }

  /** A service (end-to-end encryption on) that `#hosts` may Bind and `#clients` Dial: policies <service>-bind and -dial. */
  async hostedService(service: string, hosts: string, clients: string): Promise<void> {
    await this.create('service', service, '-e', 'ON');
    await this.create('service-policy', `${service}-bind`, 'Bind', '--identity-roles', `#${hosts}`, '--service-roles', `@${service}`);
    await this.create('service-policy', `${service}-dial`, 'Dial', '--identity-roles', `#${clients}`, '--service-roles', `@${service}`);
  }

  /** The id a `ziti edge create ...` printed ("... created with id: X", or the bare id). */
  async create(...args: string[]): Promise<string> {
    const out = await this.ok('edge', 'create', ...args);
    const m = /created with id:\s*(\S+)/.exec(out) ?? /^(\S+)\s*$/m.exec(out.trim());
    if (!m) throw new Error(`no id in: ${out}`);
    return m[1]!;
  }
}

/** weft-sdk-client: one JSON object per output line. */
export async function sdkClient(bin: string, args: string[], timeoutMs = 60_000): Promise<Record<string, any>[]> {
  const r = await run(bin, args, { timeoutMs });
  if (r.code !== 0) throw new Error(describeRun(`weft-sdk-client ${args.join(' ')}`, r));
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);
}

/** `weft-sdk-client echo-server` for a service, once its terminator is established. */
export async function echoServer(sdk: string, identityFile: string, service: string): Promise<ToolProcess> {
  const p = new ToolProcess(sdk, ['echo-server', '--identity', identityFile, '--service', service]);
  await p.waitFor((l) => l.bound === true);
  return p;
}

/** A `/fabric/v1` answer's data (a list: `links`, `circuits`; or one entity: `routers/<id>`), as the root API gives it. */
export async function fabricData(admin: ApiClient, path: string): Promise<any> {
  return (await admin.get(`/fabric/v1/${path}`, { api: 'root' })).body.data;
}

/** A host bound to `service` and a client holding a dial to it, for `body`; both stopped afterwards. */
export async function withHeldDial(
  sdk: string,
  hostFile: string,
  clientFile: string,
  service: string,
  body: (dialer: ToolProcess) => Promise<void>,
): Promise<void> {
  const server = await echoServer(sdk, hostFile, service);
  const dialer = new ToolProcess(sdk, ['dial', '--identity', clientFile, '--service', service, '--hold']);
  try {
    await dialer.waitFor((l) => l.holding === true);
    await body(dialer);
  } finally {
    dialer.end();
    server.end();
    await Promise.all([dialer.exited, server.exited]);
  }
}

/**
 * The service's Dial policy `<service>-dial` deleted while `dialer` holds a dial: the dial ends within a second (not by
 * its own stdin closing) and a new dial is refused. The policy is made again afterwards (#clients may dial).
 */
export async function dialRevokedWithinASecond(
  admin: ApiClient,
  cli: ZitiCli,
  sdk: string,
  dialer: ToolProcess,
  clientFile: string,
  service: string,
): Promise<void> {
  const policy = `${service}-dial`;
  try {
    const revoked = Date.now();
    expect((await admin.del(`/service-policies/${await idByName(admin, 'service-policies', policy)}`)).status).toBe(200);
    const line = await dialer.waitFor((l) => 'ended' in l);
    expect(line.ended).not.toBe('stdin closed');
    expect(Date.now() - revoked).toBeLessThan(1_000);
    const refused = await run(sdk, ['dial', '--identity', clientFile, '--service', service]);
    expect(refused.code).not.toBe(0);
  } finally {
    await cli.create('service-policy', policy, 'Dial', '--identity-roles', '#clients', '--service-roles', `@${service}`);
  }
}

/** A long-running tool process: its stdout lines (JSON parsed when possible), waits on them, stdin and signals. */
export class ToolProcess {
  readonly lines: Array<Record<string, any> | string> = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly proc: ChildProcess;
  private waiters: Array<() => void> = [];

  constructor(file: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
    this.proc = spawn(file, args, { env: { ...process.env, ...opts.env }, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    createInterface({ input: this.proc.stdout! }).on('line', (l) => {
      let v: Record<string, any> | string = l;
      try {
        v = JSON.parse(l) as Record<string, any>;
      } catch {
        // not JSON: keep the text
      }
      this.lines.push(v);
      this.wake();
    });
    this.proc.stderr!.on('data', (d: Buffer) => this.stderr.push(d.toString()));
    this.exited = new Promise((resolve) =>
      this.proc.once('exit', (code) => {
        this.wake();
        resolve(code);
      }),
    );
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }

  /** The first output line matching `pred`; fails after `timeoutMs` or when the process exits first. */
  async waitFor(pred: (line: Record<string, any>) => boolean, timeoutMs = 30_000): Promise<Record<string, any>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.lines.find((l) => typeof l === 'object' && pred(l));
      if (hit) return hit as Record<string, any>;
      if (this.proc.exitCode !== null || Date.now() > deadline) {
        throw new Error(
          `no matching output (exit ${this.proc.exitCode})\n--- stdout\n${this.lines
            .map((l) => JSON.stringify(l))
            .join('\n')
            .slice(-3000)}\n--- stderr\n${this.stderr.join('').slice(-3000)}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }

  /** Closes stdin (the test client's cue to stop). */
  end(): void {
    this.proc.stdin!.end();
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.proc.exitCode === null) this.proc.kill(signal);
  }
}

/** Polls `check` until it returns a truthy value (or throws after `timeoutMs`): for state that changes after an event. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The id of the entity of `kind` (a Management API collection) named `name`, if there is one. */
export async function idByName(admin: ApiClient, kind: string, name: string): Promise<string | undefined> {
  return (await admin.get(`/${kind}?filter=${encodeURIComponent(`name = "${name}"`)}`)).body.data[0]?.id;
}
