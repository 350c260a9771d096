import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { perCore, type Core } from '../core';
import type { Ctx } from '../context';
import { conflict, validationError } from '../errors';
import { reissueEnrollmentJwts } from '../enrollment/index';
import { updateControllerApiOrigin } from '../ops/index';
import { requirePermission } from '../permissions';
import { coverServerHost } from '../pki/index';
import { SerialQueue } from '../serialQueue';
import { parseInput } from '../validation';
import { coverBuiltinRouterHost, setBuiltinRouterState, tlsUrl, type BuiltinRouterTls } from './builtinRouter';

/** The operator's choice of address, in the node's data directory: the next start advertises it again. */
export const NETWORK_ADDRESS_FILE = 'network-address.json';

/**
 * What the app's listeners (src/main/networkAddress.ts) do for the core when the advertised address changes: the
 * core decides, checks the caller and keeps the records; they listen.
 */
export interface AddressListeners {
  /** the host the API listener is bound to (a wildcard listens everywhere) and its port */
  readonly api: { host: string; port: number };
  /** the built-in router, when it runs: its id, the host its listener is bound to, its port and advertised URL */
  readonly router?: { id: string; host: string; port: number; url(): string; online(): boolean };
  /** Listens at `host` too, at the API's and the router's ports (where their listeners do not cover it yet); throws as `listen` does. */
  open(host: string): Promise<void>;
  /** Closes the extra listeners of every host but `keep` (connections they accepted stay open). */
  closeOthers(keep: string | undefined): Promise<void>;
  /** New connections get the core's current server certificate, and the router's when given. */
  present(router: BuiltinRouterTls | undefined): void;
  /** The router names `host` in its URL from now on. */
  advertiseRouter(host: string): void;
}

export interface NetworkAddressView {
  /** the API's public URL: what enrollment JWTs name in `iss` and `ctrls` */
  api: { url: string; host: string; loopback: boolean };
  /** the built-in router's URL offered in sessions (none when it does not run) */
  router: { url: string; host: string; loopback: boolean } | null;
  /** a device elsewhere cannot reach what is advertised */
  loopbackOnly: boolean;
  /** this machine's addresses other devices may reach (its non-loopback IPv4 addresses) */
  candidates: Array<{ interface: string; address: string; family: 'IPv4' | 'IPv6' }>;
  /** the address chosen earlier (network-address.json), if any */
  saved: string | null;
}

/** 127.0.0.0/8, ::1, localhost: only this machine reaches it. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

const hostOf = (url: string) => new URL(url).hostname.replace(/^\[|\]$/g, '');

/** The IPv4 addresses of this machine's interfaces another device may reach. */
export function lanAddresses(): NetworkAddressView['candidates'] {
  const out: NetworkAddressView['candidates'] = [];
  for (const [name, addrs] of Object.entries(networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.internal || isLoopbackHost(a.address) || a.family !== 'IPv4') continue;
      out.push({ interface: name, address: a.address, family: 'IPv4' });
    }
  }
  return out;
}

/** The address chosen earlier in this data directory, if any (an unreadable file counts as none). */
export function savedNetworkAddress(dataDir: string): string | null {
  const file = join(dataDir, NETWORK_ADDRESS_FILE);
  if (!existsSync(file)) return null;
  try {
    const host = (JSON.parse(readFileSync(file, 'utf8')) as { host?: unknown }).host;
    return typeof host === 'string' && isIP(host) ? host : null;
  } catch {
    return null;
  }
}

/** Writes the choice (atomically); returns how to put back what the file held before. */
function saveNetworkAddress(dataDir: string, host: string): () => void {
  const file = join(dataDir, NETWORK_ADDRESS_FILE);
  const before = existsSync(file) ? readFileSync(file) : undefined;
  const write = (content: string | Buffer) => {
    writeFileSync(`${file}.tmp`, content, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  };
  write(JSON.stringify({ host }) + '\n');
  return () => (before ? write(before) : rmSync(file, { force: true }));
}

/** Where the API and the router are reachable, whether only from this machine, and the addresses that would fix it. */
export function networkAddressView(ctx: Ctx, live: AddressListeners | undefined): NetworkAddressView {
  requirePermission(ctx.caller, 'ops', 'read');
  const core = ctx.core;
  const apiHost = hostOf(core.config.apiPublicUrl);
  const routerUrl = live?.router?.url();
  const router = routerUrl ? { url: routerUrl, host: hostOf(routerUrl.replace(/^tls:/, 'https:')), loopback: false } : null;
  if (router) router.loopback = isLoopbackHost(router.host);
  const api = { url: core.config.apiPublicUrl, host: apiHost, loopback: isLoopbackHost(apiHost) };
  return {
    api,
    router,
    loopbackOnly: api.loopback || !!router?.loopback,
    candidates: lanAddresses(),
    saved: savedNetworkAddress(core.config.dataDir),
  };
}

const changeSchema = z.object({ host: z.string().trim().min(1, 'is required').max(64) }).strict();
/** One change at a time per core: a change reads what the previous one left. */
const changes = perCore(() => new SerialQueue());

/**
 * Advertises `host` (an IP address of this machine) for the API and the built-in router: both listen there too (their
 * ports unchanged, the data untouched), their certificates name it, the API's URL in enrollment JWTs (outstanding ones
 * are signed again), /version and /controllers and the router's URL in sessions name it, and the choice is saved in
 * the data directory for the next start. An address this machine does not have is refused, and nothing changes.
 */
export function advertiseNetworkAddress(ctx: Ctx, live: AddressListeners | undefined, body: unknown): Promise<NetworkAddressView> {
  requirePermission(ctx.caller, 'ops', 'update');
  const { host } = parseInput(changeSchema, body);
  if (!isIP(host)) throw validationError('host', 'must be an IP address of this machine', host);
  if (host === '0.0.0.0' || host === '::') throw validationError('host', 'must be one address, not a wildcard', host);
  // SDKs are given the router as tls://host:port, which Weft offers for IPv4 only (README, The edge router)
  if (isIP(host) === 6) throw validationError('host', 'must be an IPv4 address (router URLs are IPv4 only)', host);
  if (!live) throw conflict('INVALID_STATE', 'this Weft runs no listeners whose address could change');
  return changes(ctx.core).run(async () => {
    await applyNetworkAddress(ctx.core, live, host);
    return networkAddressView(ctx, live);
  });
}

async function applyNetworkAddress(core: Core, live: AddressListeners, host: string): Promise<void> {
  try {
    await live.open(host);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const reason =
      code === 'EADDRNOTAVAIL'
        ? 'is not an address of this machine'
        : code === 'EADDRINUSE'
          ? 'has the API or router port taken by another program'
          : `cannot be listened on (${code ?? (e as Error).message})`;
    throw validationError('host', reason, host);
  }
  const previousUrl = core.config.apiPublicUrl;
  const url = new URL(previousUrl);
  url.hostname = isIP(host) === 6 ? `[${host}]` : host;
  const origin = url.origin;
  let routerTls: BuiltinRouterTls | undefined;
  try {
    const pki = await coverServerHost(core.pki, host, core.clock.now());
    if (pki) core.replaceServerCertificate(pki);
    if (live.router) routerTls = await coverBuiltinRouterHost(core, host);
    live.present(routerTls);
    // the file first: a failed transaction puts it back, so the records and the file agree either way
    const restoreFile = saveNetworkAddress(core.config.dataDir, host);
    core.setApiPublicUrl(origin);
    try {
      await core.store.tx(async () => {
        await reissueEnrollmentJwts(core, previousUrl);
        await updateControllerApiOrigin(core, origin);
        if (live.router?.online()) await setBuiltinRouterState(core, live.router.id, { online: true, host, port: live.router.port });
      });
    } catch (e) {
      core.setApiPublicUrl(previousUrl);
      restoreFile();
      throw e;
    }
  } catch (e) {
    await live.closeOthers(hostOf(core.config.apiPublicUrl));
    throw e;
  }
  live.advertiseRouter(host);
  await live.closeOthers(host);
  core.log.info({ api: origin, router: live.router && tlsUrl(host, live.router.port) }, 'advertised address changed');
}
