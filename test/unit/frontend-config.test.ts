// Frontend configuration validation: every oauth field required, every rule reported with the
// path of the field and a readable message ("frontend.<path>: <message>").
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { startFrontend } from '../../src/main/frontend';
import { describeConfigIssues, frontendConfigSchema, type FrontendConfig } from '../../src/main/frontend/config';

function validConfig(): any {
  return {
    bind_address: '0.0.0.0:8080',
    share_domain: 'share.example.com',
    oauth: {
      bind_address: '127.0.0.1:8181',
      endpoint_url: 'https://oauth.example.com',
      cookie_name: 'svc-auth-session',
      cookie_domain: 'example.com',
      session_lifetime: '6h',
      intermediate_lifetime: '5m',
      signing_key: 's'.repeat(32),
      encryption_key: 'e'.repeat(24),
      providers: [
        { name: 'github', type: 'idp_a', client_id: 'id', client_secret: 'secret' },
        {
          name: 'corp',
          type: 'oidc',
          client_id: 'id',
          client_secret: 'secret',
          scopes: ['openid', 'email'],
          issuer: 'https://idp.example.com',
          supports_pkce: true,
        },
      ],
    },
  };
}

function issues(mutate: (c: any) => void): string[] {
  const config = validConfig();
  mutate(config);
  const result = frontendConfigSchema.safeParse(config);
  return result.success ? [] : describeConfigIssues(result.error);
}

describe('frontend config', () => {
  it('accepts a complete configuration', () => {
    expect(issues(() => undefined)).toEqual([]);
    const parsed: FrontendConfig = frontendConfigSchema.parse(validConfig());
    expect(parsed.oauth?.providers[1]).toMatchObject({ type: 'oidc', supports_pkce: true });
  });

  it('accepts a configuration without oauth', () => {
    expect(issues((c) => delete c.oauth)).toEqual([]);
  });

  describe('every oauth field is required', () => {
    for (const field of [
      'bind_address',
      'endpoint_url',
      'cookie_name',
      'cookie_domain',
      'session_lifetime',
      'intermediate_lifetime',
      'signing_key',
      'encryption_key',
      'providers',
    ]) {
      it(field, () => {
        expect(issues((c) => delete c.oauth[field])).toContain(`frontend.oauth.${field}: is required`);
      });
    }
    for (const field of ['name', 'type', 'client_id', 'client_secret']) {
      it(`providers.*.${field}`, () => {
        expect(issues((c) => delete c.oauth.providers[0][field])).toContain(`frontend.oauth.providers.0.${field}: is required`);
      });
    }
  });

  describe('keys', () => {
    it('signing_key needs 32 characters', () => {
      expect(issues((c) => (c.oauth.signing_key = 's'.repeat(31)))).toEqual(['frontend.oauth.signing_key: must be at least 32 characters (got 31)']);
    });
    it('encryption_key needs 24 characters', () => {
      expect(issues((c) => (c.oauth.encryption_key = 'e'.repeat(23)))).toEqual([
        'frontend.oauth.encryption_key: must be at least 24 characters (got 23)',
      ]);
    });
    it('empty keys are refused', () => {
      expect(issues((c) => (c.oauth.signing_key = ''))).toContain('frontend.oauth.signing_key: must be at least 32 characters (got 0)');
      expect(issues((c) => (c.oauth.encryption_key = ''))).toContain('frontend.oauth.encryption_key: must be at least 24 characters (got 0)');
    });
    it('keys must differ', () => {
      expect(issues((c) => (c.oauth.encryption_key = c.oauth.signing_key))).toEqual(['frontend.oauth.encryption_key: must differ from signing_key']);
    });
    it('messages never contain the key', () => {
      const text = issues((c) => (c.oauth.signing_key = 'my-secret-value')).join('\n');
      expect(text).not.toContain('my-secret-value');
    });
  });

  describe('providers', () => {
    it('must not be empty', () => {
      expect(issues((c) => (c.oauth.providers = []))).toEqual(['frontend.oauth.providers: must list at least one provider']);
    });
    it('must be a list', () => {
      expect(issues((c) => (c.oauth.providers = { name: 'x' }))).toEqual(['frontend.oauth.providers: must be a list of provider entries']);
    });
    it('names are unique (case-insensitively)', () => {
      expect(issues((c) => (c.oauth.providers[1].name = 'github'))).toEqual([
        'frontend.oauth.providers.1.name: duplicates the name of providers.0 ("github")',
      ]);
      expect(issues((c) => (c.oauth.providers[1].name = 'GitHub'))).toEqual([
        'frontend.oauth.providers.1.name: duplicates the name of providers.0 ("GitHub")',
      ]);
    });
    it('names are URL-safe', () => {
      expect(issues((c) => (c.oauth.providers[0].name = 'git hub'))[0]).toMatch(/^frontend\.oauth\.providers\.0\.name: must be 1-64 characters/);
      expect(issues((c) => (c.oauth.providers[0].name = '../x'))[0]).toMatch(/^frontend\.oauth\.providers\.0\.name: /);
    });
    it('type is one of idp_a, idp_b, oidc', () => {
      expect(issues((c) => (c.oauth.providers[0].type = 'github'))).toEqual(['frontend.oauth.providers.0.type: must be one of idp_a, idp_b, oidc']);
    });
    for (const field of ['issuer', 'scopes', 'supports_pkce']) {
      it(`oidc requires ${field}`, () => {
        expect(issues((c) => delete c.oauth.providers[1][field])).toEqual([
          `frontend.oauth.providers.1.${field}: is required for providers of type oidc`,
        ]);
      });
      it(`idp_a and idp_b refuse ${field}`, () => {
        const value = validConfig().oauth.providers[1][field];
        expect(issues((c) => (c.oauth.providers[0][field] = value))).toEqual([
          `frontend.oauth.providers.0.${field}: is only allowed for providers of type oidc (this provider is idp_a)`,
        ]);
        expect(issues((c) => ((c.oauth.providers[0].type = 'idp_b'), (c.oauth.providers[0][field] = value)))).toEqual([
          `frontend.oauth.providers.0.${field}: is only allowed for providers of type oidc (this provider is idp_b)`,
        ]);
      });
    }
    it('oidc scopes include openid', () => {
      expect(issues((c) => (c.oauth.providers[1].scopes = ['email']))).toEqual([
        'frontend.oauth.providers.1.scopes: must include "openid" for an OpenID Connect provider',
      ]);
      expect(issues((c) => (c.oauth.providers[1].scopes = []))).toEqual(['frontend.oauth.providers.1.scopes: must not be empty']);
    });
    it('oidc issuer is an https URL (http only on loopback)', () => {
      expect(issues((c) => (c.oauth.providers[1].issuer = 'idp.example.com'))[0]).toMatch(
        /^frontend\.oauth\.providers\.1\.issuer: must be an absolute issuer URL/,
      );
      expect(issues((c) => (c.oauth.providers[1].issuer = 'http://idp.example.com'))).toEqual([
        'frontend.oauth.providers.1.issuer: must use https (plain http is accepted only for loopback issuers)',
      ]);
      expect(issues((c) => (c.oauth.providers[1].issuer = 'http://127.0.0.1:9000'))).toEqual([]);
    });
    it('supports_pkce is a boolean', () => {
      expect(issues((c) => (c.oauth.providers[1].supports_pkce = 'yes'))).toEqual([
        'frontend.oauth.providers.1.supports_pkce: must be true or false (got string)',
      ]);
    });
    it('oidc token_endpoint_auth_method is client_secret_basic or client_secret_post, and only for oidc', () => {
      expect(issues((c) => (c.oauth.providers[1].token_endpoint_auth_method = 'client_secret_post'))).toEqual([]);
      expect(issues((c) => (c.oauth.providers[1].token_endpoint_auth_method = 'client_secret_basic'))).toEqual([]);
      expect(issues((c) => (c.oauth.providers[1].token_endpoint_auth_method = 'private_key_jwt'))).toEqual([
        'frontend.oauth.providers.1.token_endpoint_auth_method: must be one of client_secret_basic, client_secret_post',
      ]);
      expect(issues((c) => (c.oauth.providers[0].token_endpoint_auth_method = 'client_secret_post'))).toEqual([
        'frontend.oauth.providers.0.token_endpoint_auth_method: is only allowed for providers of type oidc (this provider is idp_a)',
      ]);
    });
    describe('endpoint overrides (GitHub Enterprise and the like)', () => {
      const ghe = {
        auth_url: 'https://ghe.example.com/login/oauth/authorize',
        token_url: 'https://ghe.example.com/login/oauth/access_token',
        api_url: 'https://ghe.example.com/api/v3',
      };
      const idpB = {
        auth_url: 'https://sso.example.com/auth',
        token_url: 'https://sso.example.com/token',
        userinfo_url: 'https://sso.example.com/userinfo',
        revoke_url: 'https://sso.example.com/revoke',
      };
      it('idp_a takes auth_url, token_url and api_url; idp_b auth_url, token_url, userinfo_url and revoke_url', () => {
        expect(issues((c) => Object.assign(c.oauth.providers[0], ghe))).toEqual([]);
        expect(issues((c) => Object.assign(c.oauth.providers[0], { type: 'idp_b' }, idpB))).toEqual([]);
        const parsed = frontendConfigSchema.parse({
          ...validConfig(),
          oauth: { ...validConfig().oauth, providers: [{ ...validConfig().oauth.providers[0], ...ghe }] },
        });
        expect(parsed.oauth?.providers[0]).toMatchObject(ghe);
      });
      it('are URLs, https unless on loopback', () => {
        expect(issues((c) => Object.assign(c.oauth.providers[0], ghe, { api_url: 'ghe.example.com/api/v3' }))[0]).toMatch(
          /^frontend\.oauth\.providers\.0\.api_url: must be an absolute API URL/,
        );
        expect(issues((c) => Object.assign(c.oauth.providers[0], ghe, { token_url: 'http://ghe.example.com/login/oauth/access_token' }))).toEqual([
          'frontend.oauth.providers.0.token_url: must use https (plain http is accepted only for loopback hosts)',
        ]);
        expect(issues((c) => Object.assign(c.oauth.providers[0], ghe, { auth_url: 'ftp://ghe.example.com/' }))).toEqual([
          'frontend.oauth.providers.0.auth_url: must use http or https (got "ftp")',
        ]);
        expect(
          issues((c) =>
            Object.assign(c.oauth.providers[0], {
              auth_url: 'http://127.0.0.1:9000/a',
              token_url: 'http://localhost:9000/t',
              api_url: 'http://[::1]:9000/api',
            }),
          ),
        ).toEqual([]);
      });
      it('are given together', () => {
        expect(issues((c) => (c.oauth.providers[0].api_url = ghe.api_url))).toEqual([
          'frontend.oauth.providers.0.auth_url: is required when api_url is set (idp_a endpoints are overridden together)',
          'frontend.oauth.providers.0.token_url: is required when api_url is set (idp_a endpoints are overridden together)',
        ]);
        expect(issues((c) => Object.assign(c.oauth.providers[0], { type: 'idp_b', auth_url: idpB.auth_url, token_url: idpB.token_url }))).toEqual([
          'frontend.oauth.providers.0.userinfo_url: is required when auth_url, token_url are set (idp_b endpoints are overridden together)',
          'frontend.oauth.providers.0.revoke_url: is required when auth_url, token_url are set (idp_b endpoints are overridden together)',
        ]);
      });
      it('belong to their provider type; oidc uses discovery', () => {
        expect(issues((c) => Object.assign(c.oauth.providers[0], ghe, { userinfo_url: idpB.userinfo_url }))).toEqual([
          'frontend.oauth.providers.0.userinfo_url: is only allowed for providers of type idp_b (this provider is idp_a)',
        ]);
        expect(issues((c) => Object.assign(c.oauth.providers[0], { type: 'idp_b' }, idpB, { api_url: ghe.api_url }))).toEqual([
          'frontend.oauth.providers.0.api_url: is only allowed for providers of type idp_a (this provider is idp_b)',
        ]);
        expect(issues((c) => (c.oauth.providers[1].token_url = idpB.token_url))).toEqual([
          "frontend.oauth.providers.1.token_url: is only allowed for providers of type idp_a or idp_b (this provider is oidc; oidc providers take their endpoints from the issuer's discovery document)",
        ]);
      });
    });
    it('client credentials are non-empty', () => {
      expect(issues((c) => (c.oauth.providers[0].client_secret = ' '))).toEqual(['frontend.oauth.providers.0.client_secret: must not be empty']);
    });
  });

  describe('durations', () => {
    for (const field of ['session_lifetime', 'intermediate_lifetime']) {
      it(`${field} must be a positive duration`, () => {
        expect(issues((c) => (c.oauth[field] = '0'))).toEqual([`frontend.oauth.${field}: invalid duration "0": must be greater than zero`]);
        expect(issues((c) => (c.oauth[field] = '0s'))).toEqual([`frontend.oauth.${field}: invalid duration "0s": must be greater than zero`]);
        expect(issues((c) => (c.oauth[field] = '-5m'))).toEqual([`frontend.oauth.${field}: invalid duration "-5m": must not be negative`]);
        expect(issues((c) => (c.oauth[field] = '10'))[0]).toMatch(new RegExp(`^frontend\\.oauth\\.${field}: invalid duration "10": missing unit`));
        expect(issues((c) => (c.oauth[field] = '1 day'))[0]).toMatch(new RegExp(`^frontend\\.oauth\\.${field}: invalid duration`));
        expect(issues((c) => (c.oauth[field] = 300))).toEqual([`frontend.oauth.${field}: must be a string (got number)`]);
      });
    }
  });

  describe('URLs, addresses and names', () => {
    it('endpoint_url is an absolute http(s) URL', () => {
      expect(issues((c) => (c.oauth.endpoint_url = 'oauth.example.com'))[0]).toMatch(/^frontend\.oauth\.endpoint_url: must be an absolute/);
      expect(issues((c) => (c.oauth.endpoint_url = 'ftp://oauth.example.com'))).toEqual([
        'frontend.oauth.endpoint_url: must use http or https (got "ftp")',
      ]);
      expect(issues((c) => (c.oauth.endpoint_url = 'https://oauth.example.com/?x=1'))).toEqual([
        'frontend.oauth.endpoint_url: must not contain a query or fragment',
      ]);
      expect(issues((c) => (c.oauth.endpoint_url = 'https://example.com/sso'))).toEqual([]); // served under the path
    });
    it('bind addresses are ip:port', () => {
      expect(issues((c) => (c.oauth.bind_address = 'localhost:80'))).toEqual([
        'frontend.oauth.bind_address: "localhost" is not an IP address (use "ip:port", for example "0.0.0.0:8080")',
      ]);
      expect(issues((c) => (c.bind_address = '1.2.3.4'))[0]).toMatch(/^frontend\.bind_address: must be "ip:port"/);
      expect(issues((c) => (c.bind_address = '1.2.3.4:70000'))).toEqual(['frontend.bind_address: port 70000 is out of range (0-65535)']);
      expect(issues((c) => (c.bind_address = '[::1]:0'))).toEqual([]);
    });
    it('cookie_name is a cookie token', () => {
      expect(issues((c) => (c.oauth.cookie_name = 'a b'))[0]).toMatch(/^frontend\.oauth\.cookie_name: must be a non-empty cookie name/);
    });
    it('cookie_domain covers the shares and the OAuth endpoint', () => {
      expect(issues((c) => (c.oauth.cookie_domain = 'other.com'))).toEqual([
        'frontend.oauth.cookie_domain: must be share_domain ("share.example.com") or a parent of it, or browsers will not send the session cookie to shares',
        'frontend.oauth.cookie_domain: must be the endpoint_url host ("oauth.example.com") or a parent of it, or logins cannot complete',
      ]);
      expect(issues((c) => (c.oauth.cookie_domain = '.example.com'))).toEqual([]);
    });
    it('share_domain is a DNS name', () => {
      expect(issues((c) => (c.share_domain = 'https://share.example.com'))[0]).toMatch(/^frontend\.share_domain: must be a DNS name/);
    });
    it('unknown fields are errors at their own path', () => {
      expect(issues((c) => (c.oauth.providers[0].scope = 'x'))[0]).toMatch(/^frontend\.oauth\.providers\.0\.scope: unknown field/);
      expect(issues((c) => (c.oauth.cookie_secure = true))[0]).toMatch(/^frontend\.oauth\.cookie_secure: unknown field/);
      expect(issues((c) => (c.listen = 'x'))[0]).toMatch(/^frontend\.listen: unknown field/);
    });
  });

  it('reports every problem in one pass', () => {
    const all = issues((c) => {
      delete c.oauth.cookie_name;
      c.oauth.signing_key = 'short';
      c.oauth.providers[1].issuer = 'nope';
      c.oauth.providers.push({ name: 'github', type: 'idp_b', client_id: 'a', client_secret: 'b' });
    });
    expect(all).toEqual(
      expect.arrayContaining([
        'frontend.oauth.cookie_name: is required',
        'frontend.oauth.signing_key: must be at least 32 characters (got 5)',
        expect.stringMatching(/^frontend\.oauth\.providers\.1\.issuer: /),
        'frontend.oauth.providers.2.name: duplicates the name of providers.0 ("github")',
      ]),
    );
  });

  it('startFrontend refuses an invalid configuration with the same lines', async () => {
    const config = validConfig();
    config.oauth.session_lifetime = '0';
    await expect(startFrontend({ config, resolver: { resolve: () => undefined }, logger: pino({ level: 'silent' }) })).rejects.toThrow(
      'frontend.oauth.session_lifetime: invalid duration "0": must be greater than zero',
    );
  });
});
