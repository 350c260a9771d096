import { X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import type { Core } from '../core';
import { enrollRouter, extendRouter, reEnrollRouter } from '../enrollment/index';
import { builtinRouterIdFile, builtinRouterRow, edgeRouters } from '../policy/index';
import { applyCreate } from '../entities/resource';
import { validationError } from '../errors';
import { certificateDer, createCsr, fingerprintSha1, importPrivateKey, parseCertificate, renewsAt } from '../pki/index';
import type { Row } from '../store/db';
import { clearRouterTerminators } from './terminators';
import { builtinRouterDir, controllerId, controlNodesGone } from '../ops/index';

const FILES = { serverKey: 'server.key.pem', serverChain: 'server.chain.pem', clientKey: 'client.key.pem', clientChain: 'client.chain.pem' };

export interface BuiltinRouterTls {
  id: string;
  name: string;
  /** private key and certificate chain (server certificate + issuer) the listener presents */
  keyPem: string;
  certChainPem: string;
}

/**
 * The edge router Weft runs itself: an ordinary edge router entity (tunneler-enabled, so it also has a router
 * identity that can host services), enrolled to Weft's own PKI at first start through the same enrollment as any
 * router. Its certificate is reissued (a re-enrollment) when it does not cover the advertised host or is about to
 * expire. If an admin deleted it (DELETE /edge-routers/{id}), it stays gone while Weft runs (the running router drops
 * its connections and refuses new ones) and the next start enrolls a new one under the configured name: a new id, so
 * policies that named the old one by id (`@id`) no longer match; role attributes (`#all`) do.
 */
export async function provisionBuiltinRouter(core: Core, opts: { name: string; advertisedHost: string; dir?: string }): Promise<BuiltinRouterTls> {
  const dir = opts.dir ?? builtinRouterDir(core);
  const store = core.store;
  let row = await builtinRouterRow(core);
  if (!row) {
    if (await store.getSql('SELECT 1 FROM edge_routers WHERE name = ?', opts.name)) {
      throw validationError('router.name', `an edge router named ${opts.name} exists already and is not Weft's built-in router`, opts.name);
    }
    const id = await store.tx(() => applyCreate(core.system, edgeRouters, { name: opts.name, isTunnelerEnabled: true, roleAttributes: [] }));
    mkdirSync(dirname(builtinRouterIdFile(core)), { recursive: true, mode: 0o700 });
    writeFileSync(builtinRouterIdFile(core), id + '\n', { mode: 0o600 });
    row = (await builtinRouterRow(core))!;
  }
  const id = row.id;
  await clearRouterTerminators(core, id);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const keyFile = join(dir, FILES.serverKey);
  const chainFile = join(dir, FILES.serverChain);
  const clientFile = join(dir, FILES.clientChain);
  const usable =
    row.is_verified &&
    row.fingerprint &&
    existsSync(keyFile) &&
    existsSync(chainFile) &&
    existsSync(clientFile) &&
    // a renewal that stopped between the database and the files: enrolled again
    fingerprintSha1(readFileSync(clientFile, 'utf8')) === row.fingerprint &&
    keyMatches(readFileSync(chainFile, 'utf8'), readFileSync(keyFile, 'utf8')) &&
    certificateCovers(readFileSync(chainFile, 'utf8'), opts.advertisedHost, core.clock.now()) &&
    !renewalDue(dir, core.clock.now());
  if (!usable) {
    if (!row.enrollment_token) await reEnrollRouter(core.system, 'edge', id);
    const token = (await store.getSql<{ t: string }>('SELECT enrollment_token AS t FROM edge_routers WHERE id = ?', id))!.t;
    const host = opts.advertisedHost;
    const server = await createCsr({
      commonName: id,
      dnsSans: isIP(host) ? ['localhost'] : [host, 'localhost'],
      ipSans: isIP(host) ? [host] : ['127.0.0.1'],
    });
    const client = await createCsr({ commonName: id });
    const issued = await enrollRouter(core, token, { certCsr: client.csrPem, serverCertCsr: server.csrPem });
    writeFileSync(keyFile, server.keyPem, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    writeFileSync(chainFile, issued.serverCert);
    writeFileSync(join(dir, FILES.clientKey), client.keyPem, { mode: 0o600 });
    writeFileSync(clientFile, issued.cert);
  }
  return {
    id,
    name: (await builtinRouterRow(core))!.name,
    keyPem: readFileSync(keyFile, 'utf8'),
    certChainPem: readFileSync(chainFile, 'utf8'),
  };
}

function certificateCovers(chainPem: string, host: string, now: Date): boolean {
  try {
    const info = parseCertificate(chainPem);
    const names = isIP(host) ? info.ipAddresses : info.dnsNames.map((d) => d.toLowerCase());
    return names.includes(isIP(host) ? host : host.toLowerCase()) && info.notAfter > now;
  } catch {
    return false;
  }
}

function keyMatches(certPem: string, keyPem: string): boolean {
  try {
    return new X509Certificate(certificateDer(certPem)).checkPrivateKey(importPrivateKey(keyPem));
  } catch {
    return false;
  }
}

/** Whether the earlier of the router's two certificates has reached its renewal time (pki/renewal.ts). */
function renewalDue(dir: string, now: Date): boolean {
  for (const file of [FILES.serverChain, FILES.clientChain]) {
    try {
      const info = parseCertificate(readFileSync(join(dir, file), 'utf8'));
      if (now >= renewsAt(info.notBefore, info.notAfter)) return true;
    } catch {
      return true;
    }
  }
  return false;
}

/**
 * Renews the built-in router's certificates when due, through the same extension stock routers use
 * (`/enroll/extend/router`: its current client certificate vouches for the CSRs; new keys, the same names). The new
 * files replace the old ones; returns what the listener is to present now, or undefined when nothing was due.
 */
export async function renewBuiltinRouterIfDue(core: Core): Promise<BuiltinRouterTls | undefined> {
  const dir = builtinRouterDir(core);
  const row = await builtinRouterRow(core);
  if (!row || !existsSync(join(dir, FILES.clientChain)) || !renewalDue(dir, core.clock.now())) return undefined;
  const current = parseCertificate(readFileSync(join(dir, FILES.serverChain), 'utf8'));
  return reissueBuiltinRouter(core, row, { dns: current.dnsNames, ip: current.ipAddresses });
}

/**
 * The built-in router's server certificate made to cover one more host (an address the operator chose to advertise,
 * ops/networkAddress.ts), through the same extension as a renewal; undefined when it covers `host` already.
 */
export async function coverBuiltinRouterHost(core: Core, host: string): Promise<BuiltinRouterTls | undefined> {
  const dir = builtinRouterDir(core);
  const row = await builtinRouterRow(core);
  if (!row || !existsSync(join(dir, FILES.clientChain))) return undefined;
  const chain = readFileSync(join(dir, FILES.serverChain), 'utf8');
  if (certificateCovers(chain, host, core.clock.now())) return undefined;
  const current = parseCertificate(chain);
  const names = isIP(host)
    ? { dns: current.dnsNames, ip: [...current.ipAddresses, host] }
    : { dns: [...current.dnsNames, host], ip: current.ipAddresses };
  return reissueBuiltinRouter(core, row, names);
}

async function reissueBuiltinRouter(
  core: Core,
  row: { id: string; name: string },
  names: { dns: string[]; ip: string[] },
): Promise<BuiltinRouterTls> {
  const dir = builtinRouterDir(core);
  const server = await createCsr({ commonName: row.id, dnsSans: names.dns, ipSans: names.ip });
  const client = await createCsr({ commonName: row.id });
  const clientDer = certificateDer(readFileSync(join(dir, FILES.clientChain), 'utf8'));
  const issued = await extendRouter(core, [clientDer], { certCsr: client.csrPem, serverCertCsr: server.csrPem });
  // the database holds the new client certificate now; a stop before the files are all in makes the next start enroll
  // the router again (provisionBuiltinRouter compares them)
  writeAtomically(join(dir, FILES.serverKey), server.keyPem, 0o600);
  writeAtomically(join(dir, FILES.serverChain), issued.serverCert, 0o644);
  writeAtomically(join(dir, FILES.clientKey), client.keyPem, 0o600);
  writeAtomically(join(dir, FILES.clientChain), issued.cert, 0o644);
  return { id: row.id, name: row.name, keyPem: server.keyPem, certChainPem: issued.serverCert };
}

/** The built-in router's enrolled client certificate chain and key as they are now (a renewal replaces them). */
export function builtinRouterClientTls(dir: string): { keyPem: string; certChainPem: string } {
  return { keyPem: readFileSync(join(dir, FILES.clientKey), 'utf8'), certChainPem: readFileSync(join(dir, FILES.clientChain), 'utf8') };
}

function writeAtomically(path: string, content: string, mode: number): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, content, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/**
 * The router is reachable at `url` (`tls://host:port`, what sessions offer SDKs) and online, or offline. It is the only
 * router that ever comes online: Weft runs no fabric, and every router starts offline (markRoutersOffline).
 */
export async function setBuiltinRouterState(
  core: Core,
  id: string,
  state: { online: true; host: string; port: number } | { online: false },
): Promise<void> {
  const now = core.clock.now().toISOString();
  if (state.online) {
    // the node that runs it: its router goes offline with it (core/ops/controllerNodes.ts)
    await core.store.runSql('UPDATE controllers SET router_id = ? WHERE id = ?', id, await controllerId(core));
    await core.store.runSql(
      `UPDATE edge_routers SET is_online = 1, hostname = ?, supported_protocols = ?, sync_status = 'SYNC_DONE', updated_at = ? WHERE id = ?`,
      state.host,
      JSON.stringify({ tls: tlsUrl(state.host, state.port) }),
      now,
      id,
    );
  } else {
    await core.store.runSql('UPDATE edge_routers SET is_online = 0, updated_at = ? WHERE id = ?', now, id);
  }
}

/** Where a router's row stands: enabled, disabled, or deleted (no row). */
export async function routerState(core: Core, id: string): Promise<'enabled' | 'disabled' | 'deleted'> {
  const row = await core.store.getSql<Row>('SELECT disabled FROM edge_routers WHERE id = ?', id);
  return !row ? 'deleted' : row.disabled ? 'disabled' : 'enabled';
}

/** Whether the router's row says it is online. */
export async function routerIsOnline(core: Core, id: string): Promise<boolean> {
  return !!(await core.store.getSql('SELECT 1 FROM edge_routers WHERE id = ? AND is_online = 1', id));
}

/** The built-in router stopped: its terminators go and, unless it was deleted, it is offline. */
export async function recordBuiltinRouterStopped(core: Core, id: string): Promise<void> {
  await clearRouterTerminators(core, id);
  if (await core.store.getSql('SELECT 1 FROM edge_routers WHERE id = ?', id)) await setBuiltinRouterState(core, id, { online: false });
}

/**
 * At start nothing is connected yet: every edge router is offline until the built-in router (when enabled) is
 * listening. Clears what a process that died without stopping left behind.
 */
export async function markRoutersOffline(core: Core): Promise<void> {
  const now = core.clock.now().toISOString();
  if (core.store.dialect === 'sqlite') {
    await core.store.tx(async () => {
      await core.store.runSql('UPDATE edge_routers SET is_online = 0, updated_at = ? WHERE is_online = 1', now);
      await core.store.runSql('DELETE FROM edge_router_nodes');
    });
    return;
  }
  // on a shared database the other nodes' routers are theirs to report: this node's own, and the stock routers that
  // were connected to it alone when it stopped or died
  const own = (await builtinRouterRow(core))?.id;
  await core.store.tx(async () => {
    if (own) await core.store.runSql('UPDATE edge_routers SET is_online = 0, updated_at = ? WHERE is_online = 1 AND id = ?', now, own);
    await controlNodesGone(core, '(?)', [await controllerId(core)]);
  });
}

/**
 * tls://host:port (an IPv6 address in brackets): a URL, as OpenZiti's controller offers routers to SDKs (the C SDK parses
 * it as one: `tls:host:port` would make `tls` its host).
 */
export const tlsUrl = (host: string, port: number): string => `tls://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
