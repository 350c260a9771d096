import { randomInt } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseDuration } from '../../shared/duration';
import { DEFAULT_SHARE_CHECK_INTERVAL, SHARE_TOKEN, type ShareConfigData, type ShareFieldIssue } from '../core/shares/index';
import { checkGithubOrg, checkGithubTeam, checkGoogleDomain, parseClaimRule } from '../frontend/accessRules';
import { checkEmailPattern } from '../frontend/emailPatterns';
import { checkPathPattern } from '../frontend/pathRules';
import { shareDomainsIssue } from '../frontend/shareOAuth';
import type { PathRule } from '../frontend/types';
import { badInput } from './errors';

/** `weft share public` after local validation: nothing about it needs the running Weft. */
export interface SharePublicRequest {
  dataDir: string;
  reserved: boolean;
  /**
   * local: the frontend reaches the target itself (the default); overlay: this process binds the share's service
   * through the router and serves the target; remote: an overlay share hosted by `weft share host` elsewhere.
   */
  mode: 'local' | 'overlay' | 'remote';
  share: Omit<ShareConfigData, 'token'>;
}

/** `weft share host <grant> [<target>] [--backend-mode proxy|web]`. */
export interface ShareHostRequest {
  grant: string;
  /** absent: what the grant was created for */
  backend?: { backendMode: 'proxy' | 'web'; target: string };
}

export const DEFAULT_DATA_DIR = '.weft';

const OPTION_OF_OAUTH_FIELD: Record<string, string> = {
  provider: '--oauth-provider',
  providers: '--oauth-provider',
  emailPatterns: '--oauth-email-address-pattern',
  checkInterval: '--oauth-check-interval',
  githubOrgs: '--oauth-github-org',
  githubTeams: '--oauth-github-team',
  claims: '--oauth-claim',
  googleDomains: '--oauth-google-domain',
  skipPaths: '--oauth-skip-path',
  pathRules: '--oauth-path-rule',
};

const OPTION_OF_DATA_FIELD: Record<string, string> = {
  target: '<target>',
  backendMode: '--backend-mode',
  domains: '--domain',
  domainTls: '--domain-cert',
  'domainTls.cert': '--domain-cert',
  'domainTls.key': '--domain-key',
};

/** The command-line option an OAuth issue is about ("emailPatterns.1" -> --oauth-email-address-pattern). */
export function optionOfOAuthIssue(issue: ShareFieldIssue): string {
  return OPTION_OF_OAUTH_FIELD[issue.field.split('.')[0]!] ?? '--oauth-provider';
}

/** The command-line option of a field of a share's data ("oauth.claims.0" -> --oauth-claim, "domains.0" -> --domain). */
export function optionOfDataField(field: string): string {
  if (field === 'oauth' || field.startsWith('oauth.')) return optionOfOAuthIssue({ field: field.slice('oauth.'.length), reason: '' });
  const parts = field.split('.');
  return OPTION_OF_DATA_FIELD[parts.slice(0, 2).join('.')] ?? OPTION_OF_DATA_FIELD[parts[0]!] ?? field;
}

/** The command-line name of a field of a svc.proxy.v1 config ("data.oauth.emailPatterns.0" -> option). */
export function optionOfConfigField(field: string): string {
  return field.startsWith('data.') ? optionOfDataField(field.slice('data.'.length)) : field;
}

/** The kinds of conditions of --oauth-path-rule, and the rule field each fills. */
const CONDITIONS = {
  email: 'emailPatterns',
  'github-org': 'githubOrgs',
  'github-team': 'githubTeams',
  claim: 'claims',
  'google-domain': 'googleDomains',
} as const;
const PATH_RULE_SYNTAX =
  'REGEX=CONDITION[;CONDITION...] with conditions email:GLOB, github-org:ORG, github-team:ORG/TEAM, claim:NAME=VALUE, google-domain:DOMAIN';

/**
 * `--oauth-path-rule 'REGEX=CONDITION[;CONDITION...]'`, e.g. `'^/admin(/.*)?=github-team:acme/platform;email:*@acme.com'`.
 * The expression ends at the first "=" followed by a condition kind and ":"; conditions are separated by ";".
 */
export function parsePathRule(text: string): PathRule {
  const m = /^(.*?)=((?:email|github-org|github-team|claim|google-domain):[\s\S]*)$/.exec(text);
  if (!m || !m[1]) throw new Error(`"${text}" must be ${PATH_RULE_SYNTAX}`);
  const rule: PathRule = { path: m[1] };
  checkPathPattern(rule.path);
  for (const condition of m[2]!.split(';')) {
    const colon = condition.indexOf(':');
    const kind = condition.slice(0, colon) as keyof typeof CONDITIONS;
    const value = condition.slice(colon + 1);
    if (colon < 0 || !(kind in CONDITIONS)) throw new Error(`"${condition}" is not a condition (${PATH_RULE_SYNTAX})`);
    if (kind === 'email') checkEmailPattern(value);
    if (kind === 'github-org') checkGithubOrg(value);
    if (kind === 'github-team') checkGithubTeam(value);
    if (kind === 'google-domain') checkGoogleDomain(value);
    const field = CONDITIONS[kind];
    if (field === 'claims') (rule.claims ??= []).push(parseClaimRule(value));
    else (rule[field] ??= []).push(value);
  }
  return rule;
}

function parse<T extends Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (err) {
    throw badInput(`${(err as Error).message} (see weft share --help)`);
  }
}

/** Parses and checks `share public` arguments; throws a bad-input ShareCliError naming the option. */
export function parseSharePublic(args: string[]): SharePublicRequest | 'help' {
  const { values, positionals } = parse(args, {
    'backend-mode': { type: 'string' },
    'oauth-provider': { type: 'string', multiple: true },
    'oauth-email-address-pattern': { type: 'string', multiple: true },
    'oauth-check-interval': { type: 'string' },
    'oauth-github-org': { type: 'string', multiple: true },
    'oauth-github-team': { type: 'string', multiple: true },
    'oauth-claim': { type: 'string', multiple: true },
    'oauth-google-domain': { type: 'string', multiple: true },
    'oauth-skip-path': { type: 'string', multiple: true },
    'oauth-path-rule': { type: 'string', multiple: true },
    domain: { type: 'string', multiple: true },
    'domain-cert': { type: 'string' },
    'domain-key': { type: 'string' },
    reserved: { type: 'boolean' },
    overlay: { type: 'boolean' },
    remote: { type: 'boolean' },
    'data-dir': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';
  if (values.overlay && values.remote) throw badInput('--overlay and --remote do not go together: --remote is an overlay share hosted elsewhere');
  if (values.overlay && values.reserved) {
    throw badInput(
      '--overlay --reserved: nobody would host the share after this command exits; use --remote --reserved and run weft share host with the grant it prints',
    );
  }
  const mode = values.remote ? 'remote' : values.overlay ? 'overlay' : 'local';
  if (positionals.length !== 1) {
    throw badInput(
      positionals.length
        ? `expected one <target>, got ${positionals.length}: ${positionals.join(' ')}`
        : 'missing <target> (a URL for --backend-mode proxy, a directory for web)',
    );
  }
  const backendMode = parseBackendMode(values['backend-mode']);
  if (backendMode === undefined) throw badInput('--backend-mode is required: proxy (forward to a URL) or web (serve a directory)');
  // a remote host's directory is on its machine: only its form can be checked here
  const target =
    backendMode === 'proxy' ? proxyTarget(positionals[0]!) : mode === 'remote' ? remoteWebTarget(positionals[0]!) : webTarget(positionals[0]!);

  const providers = values['oauth-provider'] ?? [];
  const share: SharePublicRequest['share'] = { backendMode, target };
  const oauthOnly = [
    'oauth-email-address-pattern',
    'oauth-check-interval',
    'oauth-github-org',
    'oauth-github-team',
    'oauth-claim',
    'oauth-google-domain',
    'oauth-skip-path',
    'oauth-path-rule',
  ] as const;
  const without = oauthOnly.find((o) => values[o] !== undefined && (typeof values[o] === 'string' || values[o].length));
  if (!providers.length && without) throw badInput(`--${without} needs --oauth-provider`);
  if (providers.length) {
    for (const p of providers) {
      if (p.trim() === '') throw badInput('--oauth-provider: must not be empty');
      if (providers.indexOf(p) !== providers.lastIndexOf(p)) throw badInput(`--oauth-provider: "${p}" is given twice`);
    }
    const each = <T>(option: (typeof oauthOnly)[number], parseOne: (v: string) => T): T[] =>
      ((values[option] as string[] | undefined) ?? []).map((v) => {
        try {
          return parseOne(v);
        } catch (err) {
          throw badInput(`--${option}: ${(err as Error).message}`);
        }
      });
    const patterns = each('oauth-email-address-pattern', (p) => (checkEmailPattern(p), p));
    const checkInterval = values['oauth-check-interval'] ?? DEFAULT_SHARE_CHECK_INTERVAL;
    try {
      parseDuration(checkInterval);
    } catch (err) {
      throw badInput(`--oauth-check-interval: ${(err as Error).message}`);
    }
    const oauth: NonNullable<ShareConfigData['oauth']> = { provider: providers[0]!, emailPatterns: patterns, checkInterval };
    if (providers.length > 1) oauth.providers = providers;
    const orgs = each('oauth-github-org', (o) => (checkGithubOrg(o), o));
    const teams = each('oauth-github-team', (t) => (checkGithubTeam(t), t));
    const claims = each('oauth-claim', parseClaimRule);
    const googleDomains = each('oauth-google-domain', (d) => (checkGoogleDomain(d), d.toLowerCase()));
    const skipPaths = each('oauth-skip-path', (p) => (checkPathPattern(p), p));
    const pathRules = each('oauth-path-rule', parsePathRule);
    if (orgs.length) oauth.githubOrgs = orgs;
    if (teams.length) oauth.githubTeams = teams;
    if (claims.length) oauth.claims = claims;
    if (googleDomains.length) oauth.googleDomains = googleDomains;
    if (skipPaths.length) oauth.skipPaths = skipPaths;
    if (pathRules.length) oauth.pathRules = pathRules;
    share.oauth = oauth;
  }
  Object.assign(share, customDomains(values.domain ?? [], values['domain-cert'], values['domain-key']));
  return { dataDir: resolve(values['data-dir'] ?? DEFAULT_DATA_DIR), reserved: !!values.reserved, mode, share };
}

/** `--domain NAME` (repeatable) with `--domain-cert FILE --domain-key FILE` (one certificate covering every name). */
function customDomains(names: string[], certFile: string | undefined, keyFile: string | undefined): Pick<ShareConfigData, 'domains' | 'domainTls'> {
  if (!names.length) {
    if (certFile !== undefined || keyFile !== undefined) throw badInput(`--${certFile !== undefined ? 'domain-cert' : 'domain-key'} needs --domain`);
    return {};
  }
  const domains = names.map((n) => n.toLowerCase().replace(/\.$/, ''));
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw badInput(
      `--${certFile === undefined ? 'domain-cert' : 'domain-key'}: is required with --${certFile === undefined ? 'domain-key' : 'domain-cert'}`,
    );
  }
  const read = (option: string, file: string) => {
    try {
      return readFileSync(resolve(file), 'utf8');
    } catch (err) {
      throw badInput(`--${option}: cannot read ${resolve(file)} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  };
  const domainTls = certFile !== undefined ? { cert: read('domain-cert', certFile), key: read('domain-key', keyFile!) } : undefined;
  // what needs no running frontend: names, the certificate, its key, the names it covers
  const issue = shareDomainsIssue({}, { domains, domainTls });
  if (issue) throw badInput(`${optionOfDataField(issue.field)}: ${issue.reason}`);
  return domainTls ? { domains, domainTls } : { domains };
}

function parseBackendMode(mode: string | undefined): 'proxy' | 'web' | undefined {
  if (mode !== undefined && mode !== 'proxy' && mode !== 'web') throw badInput(`--backend-mode: must be proxy or web (got "${mode}")`);
  return mode;
}

/** Parses `share host <grant> [<target>] [--backend-mode proxy|web]` (the grant is decoded by the command). */
export function parseShareHost(args: string[]): ShareHostRequest | 'help' {
  const { values, positionals } = parse(args, { 'backend-mode': { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) return 'help';
  if (positionals.length < 1) throw badInput('missing <grant> (the line printed by weft share public --remote)');
  if (positionals.length > 2) throw badInput(`expected <grant> and at most one <target>, got ${positionals.length} arguments`);
  const backendMode = parseBackendMode(values['backend-mode']);
  const raw = positionals[1];
  if (raw === undefined) {
    if (backendMode !== undefined) throw badInput("--backend-mode needs a <target> (without both, the grant's are used)");
    return { grant: positionals[0]! };
  }
  if (backendMode === undefined) throw badInput('--backend-mode is required with a <target>: proxy (forward to a URL) or web (serve a directory)');
  return { grant: positionals[0]!, backend: { backendMode, target: backendMode === 'proxy' ? proxyTarget(raw) : webTarget(raw) } };
}

/** Checks a target the grant carries, on the machine that hosts it. */
export function checkHostTarget(backend: { backendMode: 'proxy' | 'web'; target: string }): { backendMode: 'proxy' | 'web'; target: string } {
  return { backendMode: backend.backendMode, target: backend.backendMode === 'proxy' ? proxyTarget(backend.target) : webTarget(backend.target) };
}

/** Parses `share release <token>`. */
export function parseShareRelease(args: string[]): { dataDir: string; token: string } | 'help' {
  const { values, positionals } = parse(args, { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) return 'help';
  if (positionals.length !== 1) throw badInput('expected exactly one <token> (the share token printed by weft share public --reserved)');
  const token = positionals[0]!;
  if (!SHARE_TOKEN.test(token)) throw badInput(`"${token}" is not a share token (3-63 lowercase letters, digits or "-")`);
  return { dataDir: resolve(values['data-dir'] ?? DEFAULT_DATA_DIR), token };
}

function proxyTarget(raw: string): string {
  const hint = /^[\w.-]+:\d+(\/.*)?$/.test(raw) || /^\d+$/.test(raw) ? ` (did you mean http://${/^\d+$/.test(raw) ? `localhost:${raw}` : raw}?)` : '';
  if (!URL.canParse(raw)) throw badInput(`<target>: "${raw}" is not a URL; --backend-mode proxy forwards to an http(s) URL${hint}`);
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw badInput(`<target>: "${raw}" must be an http or https URL for --backend-mode proxy${hint}`);
  }
  if (url.username || url.password) throw badInput('<target>: the URL must not contain credentials');
  return url.href;
}

function remoteWebTarget(raw: string): string {
  if (!isAbsolute(raw)) throw badInput(`<target>: "${raw}" must be the directory's absolute path on the machine that hosts the share (--remote)`);
  return raw;
}

function webTarget(raw: string): string {
  const dir = resolve(raw);
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw badInput(`<target>: directory ${dir} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`}`);
  }
  if (!isDir) throw badInput(`<target>: ${dir} is not a directory; --backend-mode web serves a directory`);
  return dir;
}

const TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A random share token: 12 characters, about 62 bits. */
export function newShareToken(): string {
  let token = '';
  for (let i = 0; i < 12; i++) token += TOKEN_ALPHABET[randomInt(TOKEN_ALPHABET.length)];
  return token;
}
