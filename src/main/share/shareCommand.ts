import type { ShareConfigData } from '../core/shares';
import { badInput, ShareCliError } from './errors';
import { ApiAnswerError, ManagementClient, type ShareIds } from './managementClient';
import { checkShareOAuth } from './oauthOptions';
import { readRuntimeFile, TOKEN_PLACEHOLDER, type RuntimeInfo } from './runtimeFile';
import { newShareToken, optionOfConfigField, optionOfOAuthIssue, parseSharePublic, parseShareRelease } from './shareOptions';

export const SHARE_HELP = `Usage:
  weft share public <target> --backend-mode proxy|web [options]
                                  share a local URL (proxy) or directory (web) on the public frontend
  weft share release <token> [--data-dir DIR]
                                  remove a share created with --reserved

Options for share public:
  --backend-mode proxy|web        proxy: forward to the http(s) URL <target>; web: serve the directory <target>
  --oauth-provider NAME           require a login with this provider of the frontend's oauth section
  --oauth-email-address-pattern GLOB
                                  allow only matching verified emails (repeatable; case-insensitive; e.g. '*@example.com')
  --oauth-check-interval DURATION re-verify the login this often (default 3h)
  --reserved                      keep the share after this command exits and print how to remove it
  --data-dir DIR                  data dir of the running Weft (default ./.weft)

weft share finds the running Weft through <data dir>/runtime.json and logs in as the default admin with the
data dir's admin client certificate: run it as the user who started Weft. Without --reserved it keeps running
and removes the share on Ctrl-C (SIGINT) or SIGTERM.
`;

export interface ShareIo {
  out(line: string): void;
  err(line: string): void;
  /** Resolves with the signal's name on SIGINT or SIGTERM (signals are caught from the command's start). */
  stopped: Promise<string>;
}

/** `weft share <subcommand> ...`; returns the exit code (0 ok, 1 failure, 2 bad input). */
export async function runShareCommand(argv: string[], io: ShareIo): Promise<number> {
  const [sub, ...args] = argv;
  try {
    if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h') {
      io.out(SHARE_HELP);
      return 0;
    }
    if (sub === 'public') return await sharePublic(args, io);
    if (sub === 'release') return await shareRelease(args, io);
    throw badInput(`unknown share command "${sub}" (see weft share --help)`);
  } catch (err) {
    const prefix = `weft share${sub && !sub.startsWith('-') ? ` ${sub}` : ''}`;
    if (err instanceof ShareCliError) {
      io.err(`${prefix}: ${err.message}`);
      return err.exitCode;
    }
    if (err instanceof ApiAnswerError) {
      io.err(`${prefix}: Weft refused: ${err.message} (HTTP ${err.status})`);
      return 1;
    }
    io.err(`${prefix}: unexpected error: ${(err as Error)?.stack ?? String(err)}`);
    return 1;
  }
}

async function sharePublic(args: string[], io: ShareIo): Promise<number> {
  const request = parseSharePublic(args);
  if (request === 'help') {
    io.out(SHARE_HELP);
    return 0;
  }
  const runtime = readRuntimeFile(request.dataDir);
  checkAgainstFrontend(runtime, request.share);
  const data: ShareConfigData = { token: newShareToken(), ...request.share };

  const client = await ManagementClient.login(request.dataDir);
  let ids: ShareIds;
  try {
    ids = await client.createShare(data).catch(explainShareRefusal);
  } finally {
    await client.close();
  }
  const url = runtime.frontend!.shareUrl.replace(TOKEN_PLACEHOLDER, data.token);
  io.out(`Sharing ${data.target} (backend mode ${data.backendMode})`);
  io.out(`  public URL:  ${url}`);
  if (data.oauth) {
    const emails = data.oauth.emailPatterns?.length ? `emails matching ${data.oauth.emailPatterns.join(', ')}` : 'any verified email';
    io.out(`  OAuth:       provider ${data.oauth.provider}; ${emails}; re-verified every ${data.oauth.checkInterval}`);
  }
  const release = `weft share release ${data.token} --data-dir ${request.dataDir}`;
  if (request.reserved) {
    io.out(`Reserved: the share stays until you remove it with:\n  ${release}`);
    return 0;
  }
  io.out('Press Ctrl-C to stop sharing; the share is removed then.');

  const signal = await io.stopped;
  try {
    // A fresh login: the API session of the start may have timed out, and Weft may have restarted on a new port.
    const again = await ManagementClient.login(request.dataDir);
    try {
      await again.deleteShare(ids.configId);
    } finally {
      await again.close();
    }
  } catch (err) {
    const why = err instanceof ShareCliError || err instanceof ApiAnswerError ? err.message : String(err);
    throw new ShareCliError(`${signal}: could not remove share ${data.token} (${why}); remove it with: ${release}`);
  }
  io.out(`Share ${data.token} removed.`);
  return 0;
}

async function shareRelease(args: string[], io: ShareIo): Promise<number> {
  const request = parseShareRelease(args);
  if (request === 'help') {
    io.out(SHARE_HELP);
    return 0;
  }
  const client = await ManagementClient.login(request.dataDir);
  try {
    const configId = await client.findShareConfig(request.token);
    if (!configId) throw new ShareCliError(`no share with token ${request.token}`);
    await client.deleteShare(configId);
  } finally {
    await client.close();
  }
  io.out(`Share ${request.token} removed.`);
  return 0;
}

/** The checks the running Weft would make, done first so a refusal creates nothing and needs no login. */
function checkAgainstFrontend(runtime: RuntimeInfo, share: Omit<ShareConfigData, 'token'>): void {
  if (!runtime.frontend) {
    throw badInput('this Weft has no frontend configured: add a "frontend" section to its configuration to publish shares');
  }
  if (!share.oauth) return;
  const issue = checkShareOAuth(runtime.frontend, share.oauth);
  if (issue) throw badInput(`${optionOfOAuthIssue(issue)}: ${issue.reason}`);
}

function explainShareRefusal(err: unknown): never {
  if (err instanceof ApiAnswerError && err.status === 400) {
    throw badInput(err.field ? `${optionOfConfigField(err.field)}: ${err.reason}` : err.reason);
  }
  if (err instanceof ApiAnswerError) throw new ShareCliError(`Weft refused to create the share: ${err.message} (HTTP ${err.status})`);
  throw err;
}

/** The process's IO for `weft share`: stdout/stderr and SIGINT/SIGTERM, keeping Node alive while waiting. */
export function processShareIo(out: (line: string) => void, err: (line: string) => void): ShareIo & { dispose(): void } {
  let onSignal: (signal: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => (onSignal = resolve));
  // Pending promises do not keep Node running; this timer does until dispose().
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const handler = (signal: NodeJS.Signals) => onSignal(signal);
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  return {
    out,
    err,
    stopped,
    dispose() {
      clearInterval(keepAlive);
      process.removeListener('SIGINT', handler);
      process.removeListener('SIGTERM', handler);
    },
  };
}
