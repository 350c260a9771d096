/**
 * The JSON schema of svc.proxy.v1, Weft's public share config (bootstrap writes it into the config type at every
 * start, so a share written by any tool — Weft's CLI, the ziti CLI, ZAC — is checked against this version). Fields are
 * added, never renamed: a config written for an older version stays valid. What a schema cannot say (the token is
 * free, the target fits the mode, the OAuth options name providers the frontend offers, regular expressions compile,
 * a custom domain's certificate covers it) is checked by core/shares/config.ts.
 */
const stringList = (maxItems: number, maxLength = 1000) => ({
  type: 'array',
  maxItems,
  items: { type: 'string', minLength: 1, maxLength },
});

/** Who may enter beyond a verified email (the share's own rules, and each path rule's). */
const accessRules = {
  /** globs of allowed verified emails, case-insensitive */
  emailPatterns: stringList(100, 320),
  /** GitHub organization logins (idp_a providers) */
  githubOrgs: stringList(100, 39),
  /** GitHub teams as "org/team-slug" (idp_a providers) */
  githubTeams: stringList(100, 140),
  /** ID token / userinfo claims (oidc providers): a string claim equal to value, or a list claim containing it */
  claims: {
    type: 'array',
    maxItems: 100,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'value'],
      properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, value: { type: 'string', minLength: 1, maxLength: 1000 } },
    },
  },
  /** Google Workspace domains, the `hd` claim (idp_b and oidc providers) */
  googleDomains: stringList(100, 253),
};

export const svcProxyV1 = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  required: ['token', 'backendMode', 'target'],
  properties: {
    token: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{2,62}$' },
    backendMode: { type: 'string', enum: ['proxy', 'web'] },
    target: { type: 'string', minLength: 1 },
    /** true: the frontend dials the share's service through the edge router; a `weft share` process binds it */
    overlay: { type: 'boolean' },
    /** host names the share also answers at, besides <token>.<share domain> */
    domains: { type: 'array', maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 253 } },
    /** the certificate and key (PEM) the https frontend presents for `domains` (SNI) */
    domainTls: {
      type: 'object',
      additionalProperties: false,
      required: ['cert', 'key'],
      properties: { cert: { type: 'string', minLength: 1, maxLength: 65536 }, key: { type: 'string', minLength: 1, maxLength: 65536 } },
    },
    oauth: {
      type: 'object',
      additionalProperties: false,
      properties: {
        /** one provider; with `providers`, the first of them (configs written before several were possible have only this) */
        provider: { type: 'string', minLength: 1 },
        /** every provider a user may sign in with (a chooser page when there are several) */
        providers: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', minLength: 1 } },
        ...accessRules,
        checkInterval: { type: 'string', pattern: '^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$' },
        /** regular expressions (anchored) of paths served without a login */
        skipPaths: stringList(100),
        /** paths (an anchored regular expression) with a stricter rule, in addition to the share's */
        pathRules: {
          type: 'array',
          maxItems: 100,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['path'],
            properties: { path: { type: 'string', minLength: 1, maxLength: 1000 }, ...accessRules },
          },
        },
      },
    },
  },
};
