// `weft share public` / `weft share release`: local validation before anything is created, finding the running
// Weft through runtime.json, password-less login with the admin client certificate, removal on interrupt.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SVC_PROXY_CONFIG_TYPE_ID } from '../../src/main/core/entities/builtinConfigTypes';
import { fingerprintSha1 } from '../../src/main/core/pki';
import { runShareCommand } from '../../src/main/share/shareCommand';
import { ADMIN_PASSWORD, startTestApp, tempDir, type TestApp } from '../support/app';
import { HttpUserAgent, SHARE_DOMAIN, type EchoBackend } from '../support/browser';
import { selfSignedCert, writeCert } from '../support/certs';
import type { ApiClient } from '../support/client';
import { frontendSection, MemoryShareIo, ROOT, shareUrl, startShareApp, startShareCli, WEFT_BIN, useShareApp } from '../support/shares';

let app: TestApp;
let admin: ApiClient;
let backend: EchoBackend;
const agent = new HttpUserAgent();

useShareApp((s) => ({ app, admin, backend } = s));

async function share(args: string[], dataDir = app.dataDir): Promise<{ code: number; io: MemoryShareIo }> {
  const io = new MemoryShareIo();
  const code = await runShareCommand([...args, '--data-dir', dataDir], io);
  return { code, io };
}

const shareRows = async (a: TestApp) =>
  (await a.core.store.getSql<{ n: number }>(
    `SELECT (SELECT count(*) FROM configs WHERE config_type_id = '${SVC_PROXY_CONFIG_TYPE_ID}') + (SELECT count(*) FROM services WHERE name LIKE 'share-%') AS n`,
  ))!.n;

describe('admin client certificate and runtime file', () => {
  it('first start issues the default admin a client certificate registered as a network-issued cert authenticator', async () => {
    const pki = join(app.dataDir, 'pki');
    for (const f of ['admin-client.key.pem', 'admin-client.cert.pem']) expect(statSync(join(pki, f)).mode & 0o777).toBe(0o600);
    const certPem = readFileSync(join(pki, 'admin-client.cert.pem'), 'utf8');
    const row = (await app.core.store.getSql<Record<string, unknown>>(
      "SELECT a.* FROM authenticators a JOIN identities i ON i.id = a.identity_id WHERE i.is_default_admin = 1 AND a.method = 'cert'",
    ))!;
    expect(row).toMatchObject({ is_issued_by_network: 1, fingerprint: fingerprintSha1(certPem) });
    expect(row.fingerprint).toMatch(/^[0-9a-f]{40}$/);

    const c = app.client().withCert(certPem, readFileSync(join(pki, 'admin-client.key.pem'), 'utf8'));
    const login = await c.post('/authenticate?method=cert', {});
    expect(login.status, login.text).toBe(200);
    c.token = login.body.data.token;
    expect((await c.get('/current-identity')).body.data).toMatchObject({ isDefaultAdmin: true, isAdmin: true });
    await c.del('/current-api-session');
    await c.close();
  });

  it('runtime.json (0600) names the API and the frontend, and goes away on close; the certificate is issued once', async () => {
    const other = await startShareApp({ frontend: frontendSection({ noOAuth: true }) });
    const file = join(other.dataDir, 'runtime.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      pid: process.pid,
      api: other.urls.api,
      // what weft share checks its options against: the share domain, whether it serves https (no oauth section here)
      frontend: { shareUrl: other.urls.frontend!.shareUrl, shareDomain: 'share.weft.test', tls: false },
      // the built-in router runs too: overlay shares can be made (see share-overlay.test.ts)
      overlay: { router: other.urls.router, routerId: other.router!.id, frontendIdentityId: expect.any(String) },
    });
    expect(other.urls.frontend!.shareUrl).toMatch(/^http:\/\/\{token\}\.share\.weft\.test:\d+\/$/);
    const cert = readFileSync(join(other.dataDir, 'pki', 'admin-client.cert.pem'), 'utf8');
    // An operator who deletes the authenticator keeps it deleted: restarts do not issue another.
    await other.core.store.runSql("DELETE FROM authenticators WHERE method = 'cert'");
    await other.stop({ keepData: true });
    expect(() => statSync(file)).toThrow();

    const again = await startTestApp({ dataDir: other.dataDir });
    try {
      expect(readFileSync(join(other.dataDir, 'pki', 'admin-client.cert.pem'), 'utf8')).toBe(cert);
      expect(await again.core.store.getSql("SELECT 1 FROM authenticators WHERE method = 'cert'")).toBeUndefined();
      expect(JSON.parse(readFileSync(file, 'utf8')).frontend).toBeUndefined();
      const refused = await share(['public', backend.url, '--backend-mode', 'proxy'], again.dataDir);
      expect(refused.code).toBe(2);
      expect(refused.io.errors).toEqual([
        'weft share public: this Weft has no frontend configured: add a "frontend" section to its configuration to publish shares',
      ]);
    } finally {
      await again.stop();
    }
  });
});

describe('weft share public: bad input is refused before anything is created (exit 2)', () => {
  const site = tempDir('weft-site-');
  writeFileSync(join(site, 'file.txt'), 'x');
  const B = 'BACKEND/'; // replaced by the echo backend's URL once it runs
  const cases: Array<[string, string[], RegExp]> = [
    [
      'unknown provider',
      [B, '--backend-mode', 'proxy', '--oauth-provider', 'gitlab'],
      /^weft share public: --oauth-provider: unknown OAuth provider "gitlab" \(configured providers: github, google\)$/,
    ],
    [
      'bad glob',
      [
        B,
        '--backend-mode',
        'proxy',
        '--oauth-provider',
        'github',
        '--oauth-email-address-pattern',
        '*@ok.com',
        '--oauth-email-address-pattern',
        'example.com',
      ],
      /^weft share public: --oauth-email-address-pattern: email address pattern "example\.com" has no "@"/,
    ],
    [
      'bad duration',
      [B, '--backend-mode', 'proxy', '--oauth-provider', 'github', '--oauth-check-interval', '3 hours'],
      /^weft share public: --oauth-check-interval: invalid duration "3 hours"/,
    ],
    [
      'zero duration',
      [B, '--backend-mode', 'proxy', '--oauth-provider', 'github', '--oauth-check-interval', '0s'],
      /--oauth-check-interval: invalid duration "0s": must be greater than zero$/,
    ],
    ['missing directory', [join(site, 'nope'), '--backend-mode', 'web'], /^weft share public: <target>: directory .*nope does not exist$/],
    ['a file for web', [join(site, 'file.txt'), '--backend-mode', 'web'], /<target>: .*file\.txt is not a directory/],
    ['proxy target without scheme', ['localhost:3000', '--backend-mode', 'proxy'], /<target>: .*did you mean http:\/\/localhost:3000\?/],
    ['missing backend mode', [B], /--backend-mode is required: proxy .* or web/],
    ['bad backend mode', [B, '--backend-mode', 'tcp'], /--backend-mode: must be proxy or web \(got "tcp"\)/],
    [
      'pattern without provider',
      [B, '--backend-mode', 'proxy', '--oauth-email-address-pattern', '*@x.com'],
      /--oauth-email-address-pattern needs --oauth-provider/,
    ],
    ['unknown option', [B, '--backend-mode', 'proxy', '--oauth-providr', 'github'], /Unknown option '--oauth-providr'/],
    [
      'organization with a slash',
      [B, '--backend-mode', 'proxy', '--oauth-provider', 'github', '--oauth-github-org', 'acme/platform'],
      /^weft share public: --oauth-github-org: /,
    ],
    [
      'team without its organization',
      [B, '--backend-mode', 'proxy', '--oauth-provider', 'github', '--oauth-github-team', 'platform'],
      /^weft share public: --oauth-github-team: /,
    ],
    [
      'claim without a value',
      [B, '--backend-mode', 'proxy', '--oauth-provider', 'github', '--oauth-claim', 'groups'],
      /^weft share public: --oauth-claim: /,
    ],
    [
      'invalid regular expression',
      [B, '--backend-mode', 'proxy', '--oauth-provider', 'github', '--oauth-skip-path', '^/(healthz$'],
      /^weft share public: --oauth-skip-path: "\^\/\(healthz\$" is not a valid regular expression/,
    ],
    [
      'catastrophic regular expression',
      [B, '--backend-mode', 'proxy', '--oauth-provider', 'github', '--oauth-skip-path', '/(a+)+'],
      /^weft share public: --oauth-skip-path: .*exponential time/,
    ],
    [
      'path rule without a condition',
      [B, '--backend-mode', 'proxy', '--oauth-provider', 'github', '--oauth-path-rule', '^/admin'],
      /^weft share public: --oauth-path-rule: /,
    ],
    [
      'GitHub rule with only Google',
      [B, '--backend-mode', 'proxy', '--oauth-provider', 'google', '--oauth-github-org', 'acme'],
      /^weft share public: --oauth-provider: nobody signing in with "google" \(idp_b\) could pass: GitHub organization and team rules/,
    ],
    ['skip path without a provider', [B, '--backend-mode', 'proxy', '--oauth-skip-path', '^/healthz$'], /--oauth-skip-path needs --oauth-provider/],
    ['domain that is no DNS name', [B, '--backend-mode', 'proxy', '--domain', 'https://app.example.com/'], /^weft share public: --domain: /],
    [
      'domain inside the share domain',
      [B, '--backend-mode', 'proxy', '--domain', 'x.share.weft.test'],
      /^weft share public: --domain: .*inside the share domain/,
    ],
    [
      'certificate without a domain',
      [B, '--backend-mode', 'proxy', '--domain-cert', 'cert.pem', '--domain-key', 'key.pem'],
      /^weft share public: --domain-cert needs --domain$/,
    ],
    [
      'certificate without its key',
      [B, '--backend-mode', 'proxy', '--domain', 'app.example.com', '--domain-cert', 'cert.pem'],
      /^weft share public: --domain-key: is required with --domain-cert$/,
    ],
    [
      'unreadable certificate',
      [B, '--backend-mode', 'proxy', '--domain', 'app.example.com', '--domain-cert', '/nonexistent/cert.pem', '--domain-key', '/nonexistent/key.pem'],
      /^weft share public: --domain-cert: cannot read \/nonexistent\/cert\.pem \(ENOENT\)$/,
    ],
    ['two targets', ['http://a/', 'http://b/', '--backend-mode', 'proxy'], /expected one <target>, got 2/],
  ];
  for (const [what, args, pattern] of cases) {
    it(what, async () => {
      const before = await shareRows(app);
      const { code, io } = await share(['public', ...args.map((a) => a.replace('BACKEND', backend.url))]);
      expect(code).toBe(2);
      expect(io.errors).toHaveLength(1);
      expect(io.errors[0]).toMatch(pattern);
      expect(io.lines).toEqual([]);
      expect(await shareRows(app)).toBe(before);
    });
  }

  it('no oauth section on the frontend', async () => {
    const other = await startShareApp({ frontend: frontendSection({ noOAuth: true }) });
    try {
      const { code, io } = await share(['public', backend.url, '--backend-mode', 'proxy', '--oauth-provider', 'github'], other.dataDir);
      expect(code).toBe(2);
      expect(io.errors).toEqual(['weft share public: --oauth-provider: OAuth is not available: the frontend configuration has no "oauth" section']);
      expect(await shareRows(other)).toBe(0);
    } finally {
      await other.stop();
    }
  });

  it('an https frontend: a custom domain needs its certificate; one that does not cover the name is refused', async () => {
    const dir = tempDir('weft-domain-tls-');
    const tls = writeCert(dir, selfSignedCert([SHARE_DOMAIN, `*.${SHARE_DOMAIN}`]), 'frontend-');
    const other = await startShareApp({ frontend: { ...frontendSection(), tls } });
    try {
      const plain = await share(['public', backend.url, '--backend-mode', 'proxy', '--domain', 'app.example.com'], other.dataDir);
      expect(plain.code).toBe(2);
      expect(plain.io.errors).toHaveLength(1);
      expect(plain.io.errors[0]).toMatch(/^weft share public: --domain-cert: is required: this frontend serves https .* app\.example\.com$/);
      const wrong = writeCert(dir, selfSignedCert(['other.example.com']), 'wrong-');
      const mismatch = await share(
        [
          'public',
          backend.url,
          '--backend-mode',
          'proxy',
          '--domain',
          'app.example.com',
          '--domain-cert',
          wrong.cert_file,
          '--domain-key',
          wrong.key_file,
        ],
        other.dataDir,
      );
      expect(mismatch.code).toBe(2);
      expect(mismatch.io.errors).toHaveLength(1);
      expect(mismatch.io.errors[0]).toMatch(/^weft share public: --domain-cert: .*app\.example\.com/);
      expect(await shareRows(other)).toBe(0);
    } finally {
      await other.stop();
    }
  });

  it('Weft not running for the data dir (exit 1)', async () => {
    const dir = tempDir();
    const { code, io } = await share(['public', backend.url, '--backend-mode', 'proxy'], dir);
    expect(code).toBe(1);
    expect(io.errors[0]).toMatch(/^weft share public: Weft is not running for data dir .*; runtime\.json not found$/);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'runtime.json'), JSON.stringify({ pid: 2 ** 22 + 7, api: 'https://127.0.0.1:1' }));
    expect((await share(['public', backend.url, '--backend-mode', 'proxy'], dir)).io.errors[0]).toMatch(/runtime\.json is left over from process/);
  });

  it('the real CLI: one line on stderr, exit 2', () => {
    const r = spawnSync(
      process.execPath,
      [WEFT_BIN, 'share', 'public', backend.url, '--backend-mode', 'proxy', '--oauth-provider', 'nope', '--data-dir', app.dataDir],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(r.status).toBe(2);
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => !/Warning|trace-warnings/.test(l)),
    ).toEqual(['weft share public: --oauth-provider: unknown OAuth provider "nope" (configured providers: github, google)']);
    expect(r.stdout).toBe('');
  });
});

describe('weft share public: creating and removing shares', () => {
  it('creates config + service, prints the URL, and removes both when stopped', async () => {
    const io = new MemoryShareIo();
    const running = runShareCommand(
      [
        'public',
        `${backend.url}/base`,
        '--backend-mode',
        'proxy',
        '--oauth-provider',
        'google',
        '--oauth-email-address-pattern',
        '*@example.com',
        '--data-dir',
        app.dataDir,
      ],
      io,
    );
    const url = await io.publicUrl();
    const token = new URL(url).hostname.split('.')[0]!;
    expect(url).toBe(shareUrl(app, token));
    expect(io.lines).toContain(`  OAuth:       provider google; emails matching *@example.com; re-verified every 3h`);

    const config = (await admin.get(`/configs?filter=${encodeURIComponent(`name = "share-${token}"`)}`)).body.data[0];
    expect(config).toMatchObject({
      configTypeId: SVC_PROXY_CONFIG_TYPE_ID,
      tags: { 'weft.share': true },
      data: {
        token,
        backendMode: 'proxy',
        target: `${backend.url}/base`,
        oauth: { provider: 'google', emailPatterns: ['*@example.com'], checkInterval: '3h' },
      },
    });
    const services = (await admin.get(`/configs/${config.id}/services`)).body.data;
    expect(services).toMatchObject([{ name: `share-${token}`, tags: { 'weft.share': true } }]);
    // The CLI's API session was closed once the share existed.
    const certSessions = (await app.core.store.getSql<{ n: number }>(
      "SELECT count(*) AS n FROM api_sessions WHERE authenticator_id IN (SELECT id FROM authenticators WHERE method = 'cert')",
    ))!.n;
    expect(certSessions).toBe(0);

    io.stop('SIGINT');
    expect(await running).toBe(0);
    expect(io.lines.at(-1)).toBe(`Share ${token} removed.`);
    expect((await admin.get(`/configs/${config.id}`)).status).toBe(404);
    expect((await admin.get(`/services/${services[0].id}`)).status).toBe(404);
    expect((await agent.request(url)).status).toBe(404);
  });

  it('--reserved keeps the share after exiting; weft share release removes it', async () => {
    const site = tempDir('weft-site-');
    writeFileSync(join(site, 'index.html'), '<h1>reserved</h1>');
    writeFileSync(join(site, '.env'), 'SECRET=1');
    const { code, io } = await share(['public', site, '--backend-mode', 'web', '--reserved']);
    expect(code).toBe(0);
    const url = await io.publicUrl();
    const token = new URL(url).hostname.split('.')[0]!;
    expect(io.lines).toContain(`  weft share release ${token} --data-dir ${app.dataDir}`);
    const page = await agent.request(url);
    expect(page.status).toBe(200);
    expect(page.body).toBe('<h1>reserved</h1>');
    expect((await agent.request(shareUrl(app, token, '/.env'))).status).toBe(404);
    expect((await agent.request(shareUrl(app, token, '/x'), { rawPath: '/../../etc/passwd' })).status).not.toBe(200);

    const released = await share(['release', token]);
    expect(released.code).toBe(0);
    expect(released.io.lines).toEqual([`Share ${token} removed.`]);
    expect((await agent.request(url)).status).toBe(404);
    expect((await admin.get(`/configs?filter=${encodeURIComponent(`name = "share-${token}"`)}`)).body.data).toEqual([]);

    const again = await share(['release', token]);
    expect(again.code).toBe(1);
    expect(again.io.errors).toEqual([`weft share release: no share with token ${token}`]);
    expect((await share(['release', 'Not_A_Token'])).code).toBe(2);
  });

  it('a refused login is a clear error and creates nothing', async () => {
    const other = await startShareApp({ frontend: frontendSection() });
    try {
      await other.core.store.runSql("DELETE FROM authenticators WHERE method = 'cert'");
      const { code, io } = await share(['public', backend.url, '--backend-mode', 'proxy'], other.dataDir);
      expect(code).toBe(1);
      expect(io.errors).toEqual([
        'weft share public: certificate login refused: the admin client certificate of this data dir is no longer registered with Weft',
      ]);
      expect(await shareRows(other)).toBe(0);
      // The password still works for the admin; only the certificate is gone.
      const c = other.client();
      await c.login('admin', ADMIN_PASSWORD);
      await c.close();
    } finally {
      await other.stop();
    }
  });

  it('the real CLI removes its share on SIGTERM', async () => {
    const cli = await startShareCli([backend.url, '--backend-mode', 'proxy', '--data-dir', app.dataDir]);
    const res = await agent.request(`${cli.url}hello?x=1`);
    expect(res.status).toBe(200);
    expect(res.json().url).toBe('/hello?x=1');
    expect(await cli.stop('SIGTERM')).toBe(0);
    expect(cli.stdout.at(-1)).toBe(`Share ${cli.token} removed.`);
    expect((await agent.request(cli.url)).status).toBe(404);
  });
});
