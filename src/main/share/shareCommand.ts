import type { ShareConfigData } from '../core/shares/index';
import { badInput, ShareCliError } from './errors';
import { decodeGrant, encodeGrant } from './grant';
import { ApiAnswerError, ManagementClient, type ShareIds } from './managementClient';
import { createOverlayShare, type OverlayShare } from './overlayShare';
import { checkShare } from './oauthOptions';
import { readRuntimeFile, TOKEN_PLACEHOLDER, type RuntimeInfo } from './runtimeFile';
import { ShareHost } from './shareHost';
import {
  checkHostTarget,
  newShareToken,
  optionOfConfigField,
  optionOfDataField,
  parseShareHost,
  parseSharePublic,
  parseShareRelease,
} from './shareOptions';

export const SHARE_HELP = `Usage:
  weft share public <target> --backend-mode proxy|web [options]
                                  share a local URL (proxy) or directory (web) on the public frontend
  weft share release <token> [--data-dir DIR]
                                  remove a share created with --reserved
  weft share host <grant> [<target> --backend-mode proxy|web]
                                  host an overlay share created with --remote, on any machine that reaches
                                  Weft's edge router (nothing else: no data dir, no controller API)

Options for share public:
  --backend-mode proxy|web        proxy: forward to the http(s) URL <target>; web: serve the directory <target>
  --oauth-provider NAME           require a login with this provider of the frontend's oauth section (repeatable:
                                  several show a chooser page)
  --oauth-email-address-pattern GLOB
                                  allow only matching verified emails (repeatable; case-insensitive; e.g. '*@example.com')
  --oauth-github-org ORG          GitHub logins: allow only members of this organization (repeatable)
  --oauth-github-team ORG/TEAM    GitHub logins: allow only members of this team (repeatable; with orgs: any of them)
  --oauth-claim NAME=VALUE        OIDC logins: allow only an ID token or userinfo claim equal to VALUE, or a list claim
                                  containing it (repeatable: any of them)
  --oauth-google-domain DOMAIN    Google and OIDC logins: allow only this Google Workspace domain (the hd claim; repeatable)
  --oauth-skip-path REGEX         serve matching paths without a login (repeatable; matched against the whole
                                  decoded path, e.g. '^/healthz$')
  --oauth-path-rule 'REGEX=CONDITION[;CONDITION...]'
                                  matching paths also need these conditions (repeatable): email:GLOB, github-org:ORG,
                                  github-team:ORG/TEAM, claim:NAME=VALUE, google-domain:DOMAIN
  --oauth-check-interval DURATION re-verify the login (memberships and claims too) this often (default 3h)
  --domain NAME                   the share also answers at this host name (repeatable; point its DNS at the frontend)
  --domain-cert FILE --domain-key FILE
                                  the PEM certificate (covering every --domain) and key the https frontend presents
                                  for them (required when the frontend serves https)
  --overlay                       overlay mode: this process binds the share's service through Weft's edge router
                                  and serves <target> itself; the frontend reaches it only through the router
  --remote                        overlay mode, hosted elsewhere: print a share grant for weft share host on the
                                  machine that can reach <target> (a web directory: its absolute path there)
  --reserved                      keep the share after this command exits and print how to remove it
  --data-dir DIR                  data dir of the running Weft (default ./.weft)

Without --overlay or --remote the share is local: the frontend itself proxies to <target> (which Weft's machine
must reach) or serves the directory. weft share public finds the running Weft through <data dir>/runtime.json and
logs in as the default admin with the data dir's admin client certificate: run it as the user who started Weft.
Without --reserved it keeps running and removes the share on Ctrl-C (SIGINT) or SIGTERM.

A share grant holds a client certificate, its private key and an API session: treat it as a secret. The API
session expires when no host has been connected for the API session timeout (api.session_timeout, 30m by default).
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
    if (sub === 'host') return await shareHost(args, io);
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
  if (request.mode !== 'local' && !runtime.overlay) {
    throw badInput(`--${request.mode}: this Weft runs no edge router (router.enabled is false), so shares cannot go through the overlay`);
  }
  const data: ShareConfigData = { token: newShareToken(), ...request.share };
  const url = runtime.frontend!.shareUrl.replace(TOKEN_PLACEHOLDER, data.token);

  const client = await ManagementClient.login(request.dataDir);
  let ids: ShareIds;
  let overlay: OverlayShare | undefined;
  try {
    if (request.mode === 'local') ids = await client.createShare(data).catch(explainShareRefusal);
    else ({ ids } = overlay = await createOverlayShare(client, data, runtime.overlay!, url).catch(explainShareRefusal));
  } finally {
    await client.close();
  }
  const release = `weft share release ${data.token} --data-dir ${request.dataDir}`;
  const remove = () => removeShare(request.dataDir, ids.configId);

  // overlay: this process hosts the share; the URL is printed once the router has the terminator
  let host: ShareHost | undefined;
  let expired: Promise<Error> | undefined;
  if (request.mode === 'overlay') {
    host = new ShareHost(overlay!.grant, data);
    const first = await firstBind(host);
    if (first) {
      await host.close();
      await remove().catch(() => undefined);
      throw new ShareCliError(`cannot host the share through the edge router ${runtime.overlay!.router}: ${first.message}`);
    }
    expired = new Promise((resolve) => host!.once('expired', resolve));
    reportAvailability(host, io);
  }

  io.out(
    `Sharing ${data.target} (backend mode ${data.backendMode}${request.mode === 'local' ? '' : request.mode === 'overlay' ? ', through the overlay' : ', through the overlay, hosted elsewhere'})`,
  );
  io.out(`  public URL:  ${url}`);
  for (const domain of data.domains ?? []) {
    const at = new URL(url);
    at.hostname = domain;
    io.out(`  domain URL:  ${at.href}`);
  }
  if (data.oauth) describeOAuth(data.oauth, io);
  if (request.mode === 'remote') {
    const grant = encodeGrant(overlay!.grant);
    const within = overlay!.sessionSeconds ? ` within ${Math.round(overlay!.sessionSeconds / 60)} minutes` : '';
    io.out(`  share grant: ${grant}`);
    io.out(`Host it${within} on the machine that reaches ${data.target}; it needs only the grant and the edge router at ${runtime.overlay!.router}:`);
    io.out(`  weft share host ${grant}`);
    io.out('(add "<target> --backend-mode proxy|web" to serve something else). The grant holds a private key: keep it secret.');
  }
  if (request.reserved) {
    io.out(`Reserved: the share stays until you remove it with:\n  ${release}`);
    return 0;
  }
  io.out('Press Ctrl-C to stop sharing; the share is removed then.');

  const stop = await Promise.race([io.stopped, ...(expired ? [expired] : [])]);
  await host?.close();
  try {
    await remove();
  } catch (err) {
    const why = err instanceof ShareCliError || err instanceof ApiAnswerError ? err.message : String(err);
    throw new ShareCliError(
      `${typeof stop === 'string' ? stop : 'the share stopped'}: could not remove share ${data.token} (${why}); remove it with: ${release}`,
    );
  }
  if (stop instanceof Error) throw new ShareCliError(`share ${data.token} can no longer be hosted (${stop.message}); it was removed`);
  io.out(`Share ${data.token} removed.`);
  return 0;
}

/** A fresh login (the API session of the start may have timed out, and Weft may have restarted on a new port). */
async function removeShare(dataDir: string, configId: string): Promise<void> {
  const again = await ManagementClient.login(dataDir);
  try {
    await again.deleteShare(configId);
  } finally {
    await again.close();
  }
}

/** Resolves with nothing once the first bind succeeded, or with the error of the first failure. */
function firstBind(host: ShareHost): Promise<Error | undefined> {
  return new Promise((resolve) => {
    const done = (err?: Error) => {
      host.off('bound', ok);
      host.off('unavailable', done);
      host.off('expired', done);
      resolve(err);
    };
    const ok = () => done();
    host.once('bound', ok);
    host.once('unavailable', done);
    host.once('expired', done);
  });
}

/** Tells when hosting is interrupted and when it is back (not every retry). */
function reportAvailability(host: ShareHost, io: ShareIo): void {
  let down = false;
  host.on('unavailable', (err: Error) => {
    if (down) return;
    down = true;
    io.err(`weft share: the share is not reachable through the edge router right now (${err.message}); retrying`);
  });
  host.on('bound', () => {
    if (!down) return;
    down = false;
    io.err('weft share: the share is reachable again');
  });
}

/** `weft share host <grant> [<target> --backend-mode ...]`: host an overlay share with only its grant. */
async function shareHost(args: string[], io: ShareIo): Promise<number> {
  const request = parseShareHost(args);
  if (request === 'help') {
    io.out(SHARE_HELP);
    return 0;
  }
  const grant = decodeGrant(request.grant);
  const backend = request.backend ?? checkHostTarget(grant);
  const host = new ShareHost(grant, backend);
  const expired = new Promise<Error>((resolve) => host.once('expired', resolve));
  let announced = false;
  host.on('bound', () => {
    if (announced) return;
    announced = true;
    io.out(`Hosting share ${grant.share} through the edge router ${grant.router}: ${backend.target} (backend mode ${backend.backendMode})`);
    io.out(`  public URL:  ${grant.url}`);
    io.out('Press Ctrl-C to stop hosting (the share stays; remove it on the Weft machine).');
  });
  reportAvailability(host, io);
  const stop = await Promise.race([io.stopped, expired]);
  await host.close();
  if (stop instanceof Error)
    throw new ShareCliError(
      `the share grant no longer works (${stop.message}): the share was removed, or no host was connected for longer than the API session timeout`,
    );
  io.out(`Stopped hosting share ${grant.share}.`);
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
    if (configId) await client.deleteShare(configId);
    // an overlay share whose config and service were removed elsewhere (the console) may have left its identity and policies
    else if (!(await client.deleteOverlayParts(request.token))) throw new ShareCliError(`no share with token ${request.token}`);
  } finally {
    await client.close();
  }
  io.out(`Share ${request.token} removed.`);
  return 0;
}

/** The share's OAuth line, and a line per skip path and path rule. */
function describeOAuth(oauth: NonNullable<ShareConfigData['oauth']>, io: ShareIo): void {
  const providers = oauth.providers?.length ? `providers ${oauth.providers.join(', ')}` : `provider ${oauth.provider}`;
  const parts = [providers, oauth.emailPatterns?.length ? `emails matching ${oauth.emailPatterns.join(', ')}` : 'any verified email'];
  if (oauth.githubOrgs?.length) parts.push(`GitHub organizations ${oauth.githubOrgs.join(', ')}`);
  if (oauth.githubTeams?.length) parts.push(`GitHub teams ${oauth.githubTeams.join(', ')}`);
  if (oauth.claims?.length) parts.push(`claims ${oauth.claims.map((c) => `${c.name}=${c.value}`).join(', ')}`);
  if (oauth.googleDomains?.length) parts.push(`Google Workspace domains ${oauth.googleDomains.join(', ')}`);
  parts.push(`re-verified every ${oauth.checkInterval}`);
  io.out(`  OAuth:       ${parts.join('; ')}`);
  for (const path of oauth.skipPaths ?? []) io.out(`  no login:    ${path}`);
  for (const rule of oauth.pathRules ?? []) {
    const conditions = [
      ...(rule.emailPatterns ?? []).map((v) => `email:${v}`),
      ...(rule.githubOrgs ?? []).map((v) => `github-org:${v}`),
      ...(rule.githubTeams ?? []).map((v) => `github-team:${v}`),
      ...(rule.claims ?? []).map((c) => `claim:${c.name}=${c.value}`),
      ...(rule.googleDomains ?? []).map((v) => `google-domain:${v}`),
    ];
    io.out(`  path rule:   ${rule.path} needs ${conditions.join('; ')}`);
  }
}

/** The checks the running Weft would make, done first so a refusal creates nothing and needs no login. */
function checkAgainstFrontend(runtime: RuntimeInfo, share: Omit<ShareConfigData, 'token'>): void {
  if (!runtime.frontend) {
    throw badInput('this Weft has no frontend configured: add a "frontend" section to its configuration to publish shares');
  }
  if (!share.oauth && !share.domains?.length) return;
  const issue = checkShare(runtime.frontend, share);
  if (issue) throw badInput(`${optionOfDataField(issue.field)}: ${issue.reason}`);
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
