import { z } from 'zod';
import { parseDuration } from '../../shared/duration';
import { domainMatches, isDomainName, isLoopbackHost, parseBindAddress } from './address';

// Every issue carries the path of the offending field and a message that reads well after
// "frontend.<path>: ". Unknown fields are errors, never silently ignored.

export const PROVIDER_TYPES = ['idp_a', 'idp_b', 'oidc'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];

export const MIN_SIGNING_KEY_LENGTH = 32;
export const MIN_ENCRYPTION_KEY_LENGTH = 24;

const typeName = (input: unknown) => (input === null ? 'null' : Array.isArray(input) ? 'array' : typeof input);

const requiredString = () =>
  z.string({ error: (iss) => (iss.input === undefined ? 'is required' : `must be a string (got ${typeName(iss.input)})`) });

const nonEmptyString = () => requiredString().refine((v) => v.trim().length > 0, { error: 'must not be empty' });

const requiredBoolean = () =>
  z.boolean({ error: (iss) => (iss.input === undefined ? 'is required' : `must be true or false (got ${typeName(iss.input)})`) });

const bindAddress = () =>
  requiredString().superRefine((value, ctx) => {
    try {
      parseBindAddress(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message, input: value });
    }
  });

const positiveDuration = () =>
  requiredString().superRefine((value, ctx) => {
    try {
      parseDuration(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message, input: value });
    }
  });

const httpUrl = (what: string) =>
  requiredString().superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: `must be an absolute ${what} URL such as "https://auth.example.com"`, input: value });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      ctx.addIssue({ code: 'custom', message: `must use http or https (got "${url.protocol.replace(/:$/, '')}")`, input: value });
    } else if (url.username || url.password) {
      ctx.addIssue({ code: 'custom', message: 'must not contain credentials', input: value });
    } else if (url.search || url.hash) {
      ctx.addIssue({ code: 'custom', message: 'must not contain a query or fragment', input: value });
    }
  });

/** An http(s) URL the frontend calls: https, or plain http only on loopback (tests, local IdPs). */
const secureUrl = (what: string, loopback: string) =>
  httpUrl(what).superRefine((value, ctx) => {
    const url = URL.canParse(value) ? new URL(value) : undefined;
    if (url?.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      ctx.addIssue({ code: 'custom', message: `must use https (plain http is accepted only for loopback ${loopback})`, input: value });
    }
  });

const domainName = (example: string) =>
  requiredString().superRefine((value, ctx) => {
    if (!isDomainName(value)) {
      ctx.addIssue({ code: 'custom', message: `must be a DNS name such as "${example}" (no scheme, port or path)`, input: value });
    }
  });

type Refinement = (value: Record<string, unknown>, ctx: z.RefinementCtx) => void;

/**
 * An object schema that reports unknown keys at their own path, alongside all other issues.
 * `refine` runs even when fields have issues, so cross-field rules are reported in the same pass.
 */
function closedObject<T extends z.ZodRawShape>(shape: T, refine?: Refinement) {
  const allowed = Object.keys(shape);
  return z
    .looseObject(shape)
    .superRefine(
      (value, ctx) => {
        for (const key of Object.keys(value)) {
          if (!allowed.includes(key)) {
            ctx.addIssue({ code: 'custom', path: [key], message: `unknown field (allowed: ${allowed.join(', ')})`, input: value[key] });
          }
        }
        refine?.(value, ctx);
      },
      { when: (payload) => typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value) },
    )
    .transform((value) => value as z.output<z.ZodObject<T>>);
}

const providerNamePattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

const providerShape = {
  name: requiredString().superRefine((value, ctx) => {
    if (!providerNamePattern.test(value)) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be 1-64 characters of letters, digits, "-" or "_", starting with a letter or digit (it becomes part of URLs)',
        input: value,
      });
    }
  }),
  type: z.enum(PROVIDER_TYPES, {
    error: (iss) => (iss.input === undefined ? 'is required' : `must be one of ${PROVIDER_TYPES.join(', ')}`),
  }),
  client_id: nonEmptyString(),
  client_secret: nonEmptyString(),
  scopes: z.array(nonEmptyString(), { error: (iss) => (iss.input === undefined ? 'is required' : 'must be a list of strings') }).optional(),
  issuer: secureUrl('issuer', 'issuers').optional(),
  supports_pkce: requiredBoolean().optional(),
  token_endpoint_auth_method: z
    .enum(TOKEN_ENDPOINT_AUTH_METHODS, { error: () => `must be one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(', ')}` })
    .optional(),
  end_session: requiredBoolean().optional(),
  auth_url: secureUrl('authorization', 'hosts').optional(),
  token_url: secureUrl('token endpoint', 'hosts').optional(),
  api_url: secureUrl('API', 'hosts').optional(),
  userinfo_url: secureUrl('userinfo', 'hosts').optional(),
  revoke_url: secureUrl('revocation', 'hosts').optional(),
};

/**
 * Keys only some provider types take; `required` ones must be present for those types. The optional ones of idp_a
 * and idp_b are endpoint overrides (GitHub Enterprise, a server speaking Google's format), given all or none.
 */
const TYPE_KEYS: Record<string, { types: ProviderType[]; required?: boolean }> = {
  scopes: { types: ['oidc'], required: true },
  issuer: { types: ['oidc'], required: true },
  supports_pkce: { types: ['oidc'], required: true },
  token_endpoint_auth_method: { types: ['oidc'] },
  end_session: { types: ['oidc'] },
  auth_url: { types: ['idp_a', 'idp_b'] },
  token_url: { types: ['idp_a', 'idp_b'] },
  api_url: { types: ['idp_a'] },
  userinfo_url: { types: ['idp_b'] },
  revoke_url: { types: ['idp_b'] },
};

function refineProvider(p: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const type = p.type as ProviderType;
  if (!PROVIDER_TYPES.includes(type)) return;
  for (const [key, rule] of Object.entries(TYPE_KEYS)) {
    if (rule.types.includes(type)) {
      if (rule.required && p[key] === undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: `is required for providers of type ${type}`, input: undefined });
    } else if (p[key] !== undefined) {
      const why = type === 'oidc' && rule.types.includes('idp_a') ? "; oidc providers take their endpoints from the issuer's discovery document" : '';
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `is only allowed for providers of type ${rule.types.join(' or ')} (this provider is ${type}${why})`,
        input: p[key],
      });
    }
  }
  if (type === 'oidc' && Array.isArray(p.scopes)) {
    if (p.scopes.length === 0) ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'must not be empty', input: p.scopes });
    else if (!p.scopes.includes('openid')) {
      ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'must include "openid" for an OpenID Connect provider', input: p.scopes });
    }
  }
  if (type !== 'oidc') {
    const endpoints = Object.keys(TYPE_KEYS).filter((k) => TYPE_KEYS[k].types.includes(type));
    const given = endpoints.filter((k) => p[k] !== undefined);
    if (given.length > 0) {
      for (const key of endpoints.filter((k) => p[k] === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `is required when ${given.join(', ')} ${given.length === 1 ? 'is' : 'are'} set (${type} endpoints are overridden together)`,
          input: undefined,
        });
      }
    }
  }
}

const providerSchema = closedObject(providerShape, refineProvider);

function refineOAuth(o: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (typeof o.signing_key === 'string' && o.signing_key.length > 0 && o.signing_key === o.encryption_key) {
    ctx.addIssue({ code: 'custom', path: ['encryption_key'], message: 'must differ from signing_key', input: '<redacted>' });
  }
  if (Array.isArray(o.providers)) {
    const seen = new Map<string, number>();
    o.providers.forEach((p: unknown, i: number) => {
      const name = (p as { name?: unknown } | null)?.name;
      if (typeof name !== 'string') return;
      const key = name.toLowerCase(); // names are URL path segments; keep them unambiguous
      const first = seen.get(key);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['providers', i, 'name'],
          message: `duplicates the name of providers.${first} ("${name}")`,
          input: name,
        });
      } else seen.set(key, i);
    });
  }
}

export const oauthConfigSchema = closedObject(
  {
    bind_address: bindAddress(),
    endpoint_url: httpUrl('http(s)'),
    cookie_name: requiredString().superRefine((value, ctx) => {
      if (!/^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/.test(value)) {
        ctx.addIssue({ code: 'custom', message: "must be a non-empty cookie name (letters, digits and !#$%&'*+-.^_`|~)", input: value });
      }
    }),
    cookie_domain: requiredString().superRefine((value, ctx) => {
      if (!isDomainName(value.replace(/^\./, ''))) {
        ctx.addIssue({ code: 'custom', message: 'must be a DNS name such as "example.com"', input: value });
      }
    }),
    session_lifetime: positiveDuration(),
    intermediate_lifetime: positiveDuration(),
    signing_key: requiredString().superRefine((value, ctx) => {
      if (value.length < MIN_SIGNING_KEY_LENGTH) {
        ctx.addIssue({ code: 'custom', message: `must be at least ${MIN_SIGNING_KEY_LENGTH} characters (got ${value.length})`, input: '<redacted>' });
      }
    }),
    encryption_key: requiredString().superRefine((value, ctx) => {
      if (value.length < MIN_ENCRYPTION_KEY_LENGTH) {
        ctx.addIssue({
          code: 'custom',
          message: `must be at least ${MIN_ENCRYPTION_KEY_LENGTH} characters (got ${value.length})`,
          input: '<redacted>',
        });
      }
    }),
    providers: z
      .array(providerSchema, { error: (iss) => (iss.input === undefined ? 'is required' : 'must be a list of provider entries') })
      .min(1, { error: 'must list at least one provider' }),
  },
  refineOAuth,
);

function refineFrontend(c: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const oauth = c.oauth as Record<string, unknown> | undefined;
  if (!oauth || typeof oauth !== 'object') return;
  const cookieDomain =
    typeof oauth.cookie_domain === 'string' && isDomainName(oauth.cookie_domain.replace(/^\./, '')) ? oauth.cookie_domain : undefined;
  if (!cookieDomain) return;
  // The login-binding cookie is set on share hosts and read on the OAuth endpoint host, and the
  // session cookie travels the other way, so both hosts must be inside cookie_domain.
  if (typeof c.share_domain === 'string' && isDomainName(c.share_domain) && !domainMatches(c.share_domain, cookieDomain)) {
    ctx.addIssue({
      code: 'custom',
      path: ['oauth', 'cookie_domain'],
      message: `must be share_domain ("${c.share_domain}") or a parent of it, or browsers will not send the session cookie to shares`,
      input: cookieDomain,
    });
  }
  if (typeof oauth.endpoint_url === 'string' && URL.canParse(oauth.endpoint_url)) {
    const host = new URL(oauth.endpoint_url).hostname;
    if (!domainMatches(host, cookieDomain)) {
      ctx.addIssue({
        code: 'custom',
        path: ['oauth', 'cookie_domain'],
        message: `must be the endpoint_url host ("${host}") or a parent of it, or logins cannot complete`,
        input: cookieDomain,
      });
    }
  }
}

export const frontendConfigSchema = closedObject(
  {
    bind_address: bindAddress(),
    share_domain: domainName('share.example.com'),
    public_url: httpUrl('http(s)').optional(),
    tls: closedObject({ cert_file: nonEmptyString(), key_file: nonEmptyString() }).optional(),
    oauth: oauthConfigSchema.optional(),
  },
  refineFrontend,
);

export type FrontendConfig = z.infer<typeof frontendConfigSchema>;
export type OAuthConfig = NonNullable<FrontendConfig['oauth']>;
export type ProviderConfig = OAuthConfig['providers'][number];

/** One line per issue, "frontend.<path>: <message>" — what the CLI prints. */
export function describeConfigIssues(error: z.ZodError, prefix = 'frontend'): string[] {
  return error.issues.map((issue) => `${[prefix, ...issue.path.map(String)].join('.')}: ${issue.message}`);
}
