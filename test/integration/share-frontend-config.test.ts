// The `frontend` section of Weft's configuration: every bad field stops start-up with one line naming it
// ("config file x.yml: frontend.oauth.signing_key: ..."), before anything is written.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../src/main/config';
import { tempDir } from '../support/app';
import { frontendSection, ROOT, WEFT_BIN, writeConfigFile } from '../support/shares';

const OIDC = {
  name: 'corp',
  type: 'oidc',
  client_id: 'id',
  client_secret: 'secret',
  scopes: ['openid', 'email'],
  issuer: 'https://idp.example.com',
  supports_pkce: true,
};

function validFrontend(): any {
  const f: any = frontendSection();
  f.oauth.providers.push({ ...OIDC });
  f.tls = { cert_file: '/etc/weft/cert.pem', key_file: '/etc/weft/key.pem' };
  f.public_url = 'https://share.weft.test';
  return f;
}

/** The error lines loadConfig reports for a frontend section changed by `mutate`. */
function errorLines(mutate: (f: any) => void): string[] {
  const f = validFrontend();
  mutate(f);
  const file = writeConfigFile({ frontend: f });
  try {
    loadConfig(file);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message.split('\n').map((l) => l.replace(`config file ${file}: `, ''));
  }
}

// [field, change, expected line (after "config file <file>: ")]
const cases: Array<[string, (f: any) => void, string | RegExp]> = [
  [
    'frontend',
    (f) => Object.assign(f, { listen: 1 }),
    /^frontend\.listen: unknown field \(allowed: bind_address, share_domain, public_url, tls, oauth\)$/,
  ],
  ['bind_address', (f) => delete f.bind_address, 'frontend.bind_address: is required'],
  ['bind_address', (f) => (f.bind_address = 'localhost:8080'), /^frontend\.bind_address: "localhost" is not an IP address/],
  ['share_domain', (f) => delete f.share_domain, 'frontend.share_domain: is required'],
  ['share_domain', (f) => (f.share_domain = 'https://share.weft.test'), /^frontend\.share_domain: must be a DNS name/],
  ['public_url', (f) => (f.public_url = 'share.weft.test'), /^frontend\.public_url: must be an absolute http\(s\) URL/],
  ['tls.cert_file', (f) => delete f.tls.cert_file, 'frontend.tls.cert_file: is required'],
  ['tls.key_file', (f) => (f.tls.key_file = ''), 'frontend.tls.key_file: must not be empty'],
  ['tls', (f) => (f.tls.ca_file = 'x'), /^frontend\.tls\.ca_file: unknown field/],
  ['oauth.bind_address', (f) => delete f.oauth.bind_address, 'frontend.oauth.bind_address: is required'],
  ['oauth.bind_address', (f) => (f.oauth.bind_address = '8181'), /^frontend\.oauth\.bind_address: must be "ip:port"/],
  ['oauth.endpoint_url', (f) => delete f.oauth.endpoint_url, 'frontend.oauth.endpoint_url: is required'],
  ['oauth.endpoint_url', (f) => (f.oauth.endpoint_url = 'ftp://auth.weft.test'), 'frontend.oauth.endpoint_url: must use http or https (got "ftp")'],
  ['oauth.cookie_name', (f) => delete f.oauth.cookie_name, 'frontend.oauth.cookie_name: is required'],
  ['oauth.cookie_name', (f) => (f.oauth.cookie_name = 'a b'), /^frontend\.oauth\.cookie_name: must be a non-empty cookie name/],
  ['oauth.cookie_domain', (f) => delete f.oauth.cookie_domain, 'frontend.oauth.cookie_domain: is required'],
  ['oauth.cookie_domain', (f) => (f.oauth.cookie_domain = 'share.weft.test'), /^frontend\.oauth\.cookie_domain: must be the endpoint_url host/],
  ['oauth.session_lifetime', (f) => delete f.oauth.session_lifetime, 'frontend.oauth.session_lifetime: is required'],
  [
    'oauth.session_lifetime',
    (f) => (f.oauth.session_lifetime = '0s'),
    'frontend.oauth.session_lifetime: invalid duration "0s": must be greater than zero',
  ],
  ['oauth.intermediate_lifetime', (f) => delete f.oauth.intermediate_lifetime, 'frontend.oauth.intermediate_lifetime: is required'],
  [
    'oauth.intermediate_lifetime',
    (f) => (f.oauth.intermediate_lifetime = '5'),
    /^frontend\.oauth\.intermediate_lifetime: invalid duration "5": missing unit/,
  ],
  ['oauth.signing_key', (f) => delete f.oauth.signing_key, 'frontend.oauth.signing_key: is required'],
  ['oauth.signing_key', (f) => (f.oauth.signing_key = 'short-signing-key'), 'frontend.oauth.signing_key: must be at least 32 characters (got 17)'],
  ['oauth.encryption_key', (f) => delete f.oauth.encryption_key, 'frontend.oauth.encryption_key: is required'],
  ['oauth.encryption_key', (f) => (f.oauth.encryption_key = ''), 'frontend.oauth.encryption_key: must be at least 24 characters (got 0)'],
  ['oauth.encryption_key', (f) => (f.oauth.encryption_key = f.oauth.signing_key), 'frontend.oauth.encryption_key: must differ from signing_key'],
  ['oauth.providers', (f) => delete f.oauth.providers, 'frontend.oauth.providers: is required'],
  ['oauth.providers', (f) => (f.oauth.providers = []), 'frontend.oauth.providers: must list at least one provider'],
  ['oauth', (f) => (f.oauth.cookie_secure = true), /^frontend\.oauth\.cookie_secure: unknown field/],
  ['providers.name', (f) => delete f.oauth.providers[0].name, 'frontend.oauth.providers.0.name: is required'],
  ['providers.name', (f) => (f.oauth.providers[1].name = 'GitHub'), 'frontend.oauth.providers.1.name: duplicates the name of providers.0 ("GitHub")'],
  ['providers.type', (f) => (f.oauth.providers[0].type = 'github'), 'frontend.oauth.providers.0.type: must be one of idp_a, idp_b, oidc'],
  ['providers.client_id', (f) => delete f.oauth.providers[0].client_id, 'frontend.oauth.providers.0.client_id: is required'],
  ['providers.client_secret', (f) => (f.oauth.providers[1].client_secret = ' '), 'frontend.oauth.providers.1.client_secret: must not be empty'],
  ['providers.scopes', (f) => delete f.oauth.providers[2].scopes, 'frontend.oauth.providers.2.scopes: is required for providers of type oidc'],
  [
    'providers.scopes',
    (f) => (f.oauth.providers[2].scopes = ['email']),
    'frontend.oauth.providers.2.scopes: must include "openid" for an OpenID Connect provider',
  ],
  ['providers.issuer', (f) => delete f.oauth.providers[2].issuer, 'frontend.oauth.providers.2.issuer: is required for providers of type oidc'],
  [
    'providers.issuer',
    (f) => (f.oauth.providers[2].issuer = 'http://idp.example.com'),
    'frontend.oauth.providers.2.issuer: must use https (plain http is accepted only for loopback issuers)',
  ],
  [
    'providers.supports_pkce',
    (f) => delete f.oauth.providers[2].supports_pkce,
    'frontend.oauth.providers.2.supports_pkce: is required for providers of type oidc',
  ],
  [
    'providers.supports_pkce',
    (f) => (f.oauth.providers[2].supports_pkce = 'yes'),
    'frontend.oauth.providers.2.supports_pkce: must be true or false (got string)',
  ],
  [
    'providers (idp_a)',
    (f) => (f.oauth.providers[0].issuer = 'https://github.com'),
    'frontend.oauth.providers.0.issuer: is only allowed for providers of type oidc (this provider is idp_a)',
  ],
];

describe('frontend configuration errors', () => {
  it('a complete frontend section (with oauth, TLS and public_url) is accepted', () => {
    expect(errorLines(() => undefined)).toEqual([]);
    expect(errorLines((f) => delete f.oauth)).toEqual([]);
  });

  for (const [field, mutate, expected] of cases) {
    it(`${field}: ${typeof expected === 'string' ? expected.replace(/^[^:]+: /, '') : expected.source}`, () => {
      const lines = errorLines(mutate);
      expect(lines).toHaveLength(1);
      if (typeof expected === 'string') expect(lines[0]).toBe(expected);
      else expect(lines[0]).toMatch(expected);
    });
  }

  it('several bad fields give one line each', () => {
    const lines = errorLines((f) => {
      f.oauth.signing_key = 'short';
      delete f.oauth.cookie_name;
      f.bind_address = 'nowhere';
    });
    expect(lines).toHaveLength(3);
    expect(lines).toEqual(
      expect.arrayContaining([
        'frontend.oauth.signing_key: must be at least 32 characters (got 5)',
        'frontend.oauth.cookie_name: is required',
        expect.stringMatching(/^frontend\.bind_address: /),
      ]),
    );
  });

  it('keys never appear in error messages', () => {
    expect(errorLines((f) => (f.oauth.signing_key = 'my-secret-value')).join('\n')).not.toContain('my-secret-value');
  });
});

describe('weft start with a bad frontend section', () => {
  function start(args: string[], cmd: 'node' | 'npm' = 'node') {
    const argv = cmd === 'node' ? [WEFT_BIN, ...args] : ['start', '--silent', '--', ...args];
    return spawnSync(cmd === 'node' ? process.execPath : 'npm', argv, { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  }
  const stderrLines = (s: string) =>
    s
      .trim()
      .split('\n')
      .filter((l) => l && !/Warning|trace-warnings|npm warn/.test(l));

  it('prints one line naming the field, exits 2 and writes nothing (npm start -- --config and weft)', { timeout: 180_000 }, () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const runs: Array<[(f: any) => void, RegExp, 'node' | 'npm']> = [
      [
        (f) => (f.oauth.signing_key = 'too-short'),
        /^weft: config file .*weft\.yml: frontend\.oauth\.signing_key: must be at least 32 characters \(got 9\)$/,
        'npm',
      ],
      [
        (f) => delete f.oauth.providers[2].issuer,
        /^weft: config file .*: frontend\.oauth\.providers\.2\.issuer: is required for providers of type oidc$/,
        'node',
      ],
      [(f) => (f.oauth.session_lifetime = 'soon'), /^weft: config file .*: frontend\.oauth\.session_lifetime: invalid duration "soon"/, 'node'],
    ];
    for (const [mutate, pattern, cmd] of runs) {
      const f = validFrontend();
      mutate(f);
      const r = start(['--config', writeConfigFile({ frontend: f }, dir), '--data-dir', dataDir], cmd);
      expect(r.status, r.stderr).toBe(2);
      const lines = stderrLines(r.stderr);
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(pattern);
      expect(existsSync(dataDir)).toBe(false);
    }
  });
});
