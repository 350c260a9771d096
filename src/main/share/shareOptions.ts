import { randomInt } from 'node:crypto';
import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseDuration } from '../../shared/duration';
import { DEFAULT_SHARE_CHECK_INTERVAL, SHARE_TOKEN, type ShareConfigData, type ShareFieldIssue } from '../core/shares/index';
import { checkEmailPattern } from '../frontend/emailPatterns';
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
  emailPatterns: '--oauth-email-address-pattern',
  checkInterval: '--oauth-check-interval',
};

/** The command-line option an OAuth issue is about ("emailPatterns.1" -> --oauth-email-address-pattern). */
export function optionOfOAuthIssue(issue: ShareFieldIssue): string {
  return OPTION_OF_OAUTH_FIELD[issue.field.split('.')[0]!] ?? '--oauth-provider';
}

/** The command-line name of a field of a svc.proxy.v1 config ("data.oauth.emailPatterns.0" -> option). */
export function optionOfConfigField(field: string): string {
  if (field === 'data.target') return '<target>';
  if (field === 'data.backendMode') return '--backend-mode';
  if (field === 'data.oauth') return '--oauth-provider';
  const oauthField = /^data\.oauth\.(.+)$/.exec(field)?.[1];
  return oauthField ? optionOfOAuthIssue({ field: oauthField, reason: '' }) : field;
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
    'oauth-provider': { type: 'string' },
    'oauth-email-address-pattern': { type: 'string', multiple: true },
    'oauth-check-interval': { type: 'string' },
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

  const provider = values['oauth-provider'];
  const patterns = values['oauth-email-address-pattern'] ?? [];
  const interval = values['oauth-check-interval'];
  if (provider === undefined && (patterns.length || interval !== undefined)) {
    throw badInput(`${patterns.length ? '--oauth-email-address-pattern' : '--oauth-check-interval'} needs --oauth-provider`);
  }
  const share: SharePublicRequest['share'] = { backendMode, target };
  if (provider !== undefined) {
    if (provider.trim() === '') throw badInput('--oauth-provider: must not be empty');
    for (const p of patterns) {
      try {
        checkEmailPattern(p);
      } catch (err) {
        throw badInput(`--oauth-email-address-pattern: ${(err as Error).message}`);
      }
    }
    const checkInterval = interval ?? DEFAULT_SHARE_CHECK_INTERVAL;
    try {
      parseDuration(checkInterval);
    } catch (err) {
      throw badInput(`--oauth-check-interval: ${(err as Error).message}`);
    }
    share.oauth = { provider, emailPatterns: patterns, checkInterval };
  }
  return { dataDir: resolve(values['data-dir'] ?? DEFAULT_DATA_DIR), reserved: !!values.reserved, mode, share };
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
