import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { request, Agent } from 'undici';
import { tempDir } from '../support/app';
import { ApiClient } from '../support/client';
import { startWeftProcess } from '../support/weftProcess';
import { authPolicyBody } from '../support/users';

const ROOT = join(import.meta.dirname, '..', '..');
const WEFT = join(ROOT, 'bin', 'weft.mjs');

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [WEFT, ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
}

/** Starts `weft` (its first argument pair must be --data-dir DIR) and reads the banner. */
async function start(args: string[], env: NodeJS.ProcessEnv = {}) {
  return startWeftProcess(args[1]!, args.slice(2), env);
}

// Each case starts real `weft` processes (TypeScript compiled on start), which is slow on a loaded machine.
describe('command line', { timeout: 240_000 }, () => {
  it('--help lists commands and options, for both weft --help and npm start -- --help', () => {
    for (const args of [['--help'], ['help'], ['start', '--help']]) {
      const r = run(args);
      expect(r.status).toBe(0);
      for (const word of ['start', '--data-dir', '--config', '--api-address', '--api-brand', 'WEFT_ADMIN_PASSWORD']) expect(r.stdout).toContain(word);
    }
    const npm = spawnSync('npm', ['start', '--silent', '--', '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(npm.stdout).toContain('--api-address');
  });

  it('unknown options and commands are clear errors', () => {
    const r = run(['--bogus']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/bogus/);
    expect(run(['frobnicate']).stderr).toContain('unknown command');
  });

  it('a bad config file stops start-up with one line naming the field, and writes nothing', () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const cases: Array<[string, RegExp]> = [
      ['api:\n  address: nowhere\n', /api\.address: must be host:port/],
      ['api:\n  session_timeout: soon\n', /api\.session_timeout/],
      ['api:\n  adress: 127.0.0.1:1\n', /api: unknown field\(s\): adress/],
      ['log_level: loud\n', /log_level/],
      ['api:\n  brand: openziti\n', /api\.brand/],
      ['api: [1, 2\n', /not valid YAML/],
    ];
    for (const [text, pattern] of cases) {
      const file = join(dir, 'bad.yml');
      writeFileSync(file, text);
      const r = run(['--config', file, '--data-dir', dataDir]);
      expect(r.status, text).toBe(2);
      const lines = r.stderr
        .trim()
        .split('\n')
        .filter((l) => !/Warning|trace-warnings/.test(l));
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(pattern);
      expect(existsSync(dataDir)).toBe(false);
    }
    expect(run(['--config', join(dir, 'missing.yml'), '--data-dir', dataDir]).stderr).toContain('not found');
    expect(run(['--api-address', 'bad', '--data-dir', dataDir]).stderr).toContain('--api-address');
    expect(run(['--api-brand', 'openziti', '--data-dir', dataDir]).stderr).toContain('--api-brand: must be svc or ziti');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('starts with --data-dir and --api-address port 0, prints the real URL and the generated password once', async () => {
    const dataDir = join(tempDir(), 'd');
    const env = { WEFT_ADMIN_PASSWORD: '', WEFT_ADMIN_USERNAME: 'root-user' };
    const first = await start(['--data-dir', dataDir, '--api-address', '127.0.0.1:0'], env);
    expect(first.api).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(first.api).not.toMatch(/:0$/);
    const password = /admin password:\s+(\S+)/.exec(first.lines.join('\n'))![1]!;
    expect(first.lines.join('\n')).toContain('admin username:  root-user');
    const ca = (await import('node:fs')).readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8');
    const res = await request(`${first.api}/edge/management/v1/authenticate?method=password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root-user', password }),
      dispatcher: new Agent({ connect: { ca } }),
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(await first.stop()).toBe(0);
    const second = await start(['--data-dir', dataDir, '--api-address', '127.0.0.1:0'], env);
    expect(second.lines.join('\n')).not.toContain('admin password');
    expect(await second.stop()).toBe(0);
    // stdout is not a terminal here: the log on stderr is JSON lines
    expect(
      JSON.parse(
        first
          .stderr()
          .split('\n')
          .find((l) => l.includes('weft started'))!,
      ),
    ).toMatchObject({ msg: 'weft started', level: 30 });
  });

  it('api.brand: ziti in a config file: the MFA auth query of a login names the provider "ziti"', async () => {
    const dir = tempDir();
    const config = join(dir, 'weft.yml');
    writeFileSync(config, 'api:\n  address: 127.0.0.1:0\n  brand: ziti\nconsole:\n  address: 127.0.0.1:0\n');
    const weft = await start(['--data-dir', join(dir, 'd'), '--config', config], {
      WEFT_ADMIN_USERNAME: 'admin',
      WEFT_ADMIN_PASSWORD: 'brand-admin-password-1',
    });
    const admin = await weft.login('admin', 'brand-admin-password-1');
    const user = new ApiClient(weft.api, weft.caPem());
    try {
      // an auth policy requiring TOTP makes every password login partial, with the MFA auth query (no enrollment needed)
      const policy = await admin.create(
        '/auth-policies',
        authPolicyBody('totp-required', { cert: { allowed: false, allowExpiredCerts: false }, extJwt: { allowed: false } }, { requireTotp: true }),
      );
      const id = await admin.create('/identities', { name: 'brand-user', type: 'User', isAdmin: false, authPolicyId: policy });
      await admin.create('/authenticators', { method: 'updb', identityId: id, username: 'brand-user', password: 'brand-user-password' });
      for (const api of ['client', 'management'] as const) {
        const session = (await user.login('brand-user', 'brand-user-password', api)).body.data;
        expect(session, api).toMatchObject({ isMfaRequired: true, isMfaComplete: false });
        expect(session.authQueries, api).toEqual([expect.objectContaining({ typeId: 'MFA', provider: 'ziti', isTotpEnrolled: false })]);
      }
    } finally {
      await user.close();
      await admin.close();
      expect(await weft.stop()).toBe(0);
    }
  });

  it('--log-format pretty prints readable log lines; json keeps JSON; a bad value is refused', async () => {
    const dataDir = join(tempDir(), 'd');
    const pretty = await start(['--data-dir', dataDir, '--api-address', '127.0.0.1:0', '--log-format', 'pretty']);
    expect(await pretty.stop()).toBe(0);
    const line = pretty
      .stderr()
      .split('\n')
      .find((l) => l.includes('weft started'))!;
    expect(line).toMatch(/^\d\d:\d\d:\d\d INFO {2}weft started api=https:\/\/127\.0\.0\.1:\d+/);
    expect(() => JSON.parse(line)).toThrow();
    expect(run(['--log-format', 'loud', '--data-dir', dataDir]).stderr).toContain('--log-format: must be auto, pretty or json');
  });
});
