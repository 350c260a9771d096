import { createHash, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireAdminRead } from '../permissions';
import { perCore, type Core, type Ctx } from '../core';
import { daysLeft, parseCertificate, renewServerCertificateIfDue, renewsAt, splitPemBundle, warningLevel } from '../pki/index';
import { allRows, rowShape } from '../store/rows';
import { builtinRouterRow } from '../policy/index';
import { controllerId, updateControllerCertificate } from './controllerNodes';

export interface CertificateExpiry {
  name: string;
  subject: string;
  notAfter: string;
  daysLeft: number;
  state: CertificateState;
}

/** Expiry of the controller's own certificates (root, intermediate, signing and TLS server). */
export function controllerCertificates(ctx: Ctx): CertificateExpiry[] {
  requireAdminRead(ctx.caller);
  return ownCertificates(ctx.core).map((c) => {
    const e = describe(ctx.core, c, ctx.core.clock.now());
    return { name: e.name, subject: e.subject, notAfter: e.notAfter, daysLeft: e.daysLeft, state: e.state };
  });
}

export type CertificateKind =
  | 'root-ca'
  | 'intermediate-ca'
  | 'signing-ca'
  | 'server'
  | 'builtin-router-server'
  | 'builtin-router-client'
  | 'router'
  | 'identity'
  | 'admin-client'
  | 'third-party-ca';

/**
 * Who keeps a certificate current: Weft itself (`automatic`), the identity's SDK through OpenZiti's extend flow (Weft
 * flags it, `extend-requested` once flagged), the router itself (`/enroll/extend/router`), or an operator (`manual`:
 * Weft's CAs, third-party CAs, certificates not issued by Weft).
 */
export type RenewalBy = 'automatic' | 'extend' | 'extend-requested' | 'router' | 'manual';
export type CertificateState = 'ok' | 'warning-30' | 'warning-7' | 'warning-1' | 'expired';

export interface CertificateEntry {
  name: string;
  kind: CertificateKind;
  /** the entity it belongs to (identity, router or CA id), when one does */
  ownerId?: string;
  subject: string;
  issuer: string;
  serial: string;
  /** lowercase hex SHA-1 of the DER, as OpenZiti names certificates */
  fingerprint: string;
  notBefore: string;
  notAfter: string;
  daysLeft: number;
  renewal: RenewalBy;
  /** when Weft renews it or asks for its extension (pki/renewal.ts); none for those renewed by hand */
  renewsAt?: string;
  state: CertificateState;
}

interface Source {
  name: string;
  kind: CertificateKind;
  pem: string;
  ownerId?: string;
  renewal: RenewalBy;
}

const LABELS: Record<string, string> = { root: 'Root CA', intermediate: 'Intermediate CA', signing: 'Signing CA (enrollment)', server: 'TLS server' };

function ownCertificates(core: Core): Source[] {
  const p = core.pki;
  return [
    { name: LABELS.root!, kind: 'root-ca', pem: p.root.certPem, renewal: 'manual' },
    { name: LABELS.intermediate!, kind: 'intermediate-ca', pem: p.intermediate.certPem, renewal: 'manual' },
    { name: LABELS.signing!, kind: 'signing-ca', pem: p.signing.certPem, renewal: 'manual' },
    { name: LABELS.server!, kind: 'server', pem: p.server.certPem, renewal: 'automatic' },
  ];
}

/** Where the built-in router keeps its keys and certificates: <data dir>/router. */
export function builtinRouterDir(core: Core): string {
  return join(core.config.dataDir, 'router');
}

function builtinRouterCertificates(core: Core, routerId: string | undefined): Source[] {
  const out: Source[] = [];
  for (const [kind, file, name] of [
    ['builtin-router-server', 'server.chain.pem', 'Built-in router (server)'],
    ['builtin-router-client', 'client.chain.pem', 'Built-in router (client)'],
  ] as const) {
    const path = join(builtinRouterDir(core), file);
    const leaf = existsSync(path) ? splitPemBundle(readFileSync(path, 'utf8'))[0] : undefined;
    if (leaf) out.push({ name, kind, pem: leaf, ownerId: routerId, renewal: 'automatic' });
  }
  return out;
}

const ROUTER = rowShape({ id: 'string', name: 'string', cert_pem: 'string' });
const AUTHENTICATOR = rowShape({
  id: 'string',
  identity_id: 'string',
  identity_name: 'string',
  cert_pem: 'string',
  is_issued_by_network: 'bool',
  is_extend_requested: 'bool',
  tags: 'string',
});
const CA = rowShape({ id: 'string', name: 'string', cert_pem: 'string' });
const NODE = rowShape({ id: 'string', name: 'string', cert_pem: 'string' });

async function storedCertificates(core: Core): Promise<{ sources: Source[]; builtinRouterId?: string }> {
  const store = core.store;
  const builtinId = (await builtinRouterRow(core))?.id;
  const routers = await allRows(
    store,
    ROUTER,
    `SELECT id, name, cert_pem FROM edge_routers WHERE cert_pem IS NOT NULL
     UNION ALL SELECT id, name, cert_pem FROM routers WHERE cert_pem IS NOT NULL`,
  );
  const auths = await allRows(
    store,
    AUTHENTICATOR,
    `SELECT a.id, a.identity_id, i.name AS identity_name, a.cert_pem, a.is_issued_by_network, a.is_extend_requested, a.tags
       FROM authenticators a JOIN identities i ON i.id = a.identity_id WHERE a.method = 'cert' AND a.cert_pem IS NOT NULL`,
  );
  const cas = await allRows(store, CA, 'SELECT id, name, cert_pem FROM cas');
  // the other nodes' server certificates (on a shared database): each node renews its own
  const nodes = await allRows(store, NODE, 'SELECT id, name, cert_pem FROM controllers WHERE id <> ?', await controllerId(core));
  const sources: Source[] = [
    ...nodes.map((n): Source => ({ name: `TLS server (node ${n.name})`, kind: 'server', pem: n.cert_pem, ownerId: n.id, renewal: 'automatic' })),
    // the built-in router's client certificate is listed from its files, with its server certificate
    ...routers
      .filter((r) => r.id !== builtinId)
      .map((r): Source => ({ name: `Router ${r.name}`, kind: 'router', pem: r.cert_pem, ownerId: r.id, renewal: 'router' })),
    ...auths.map((a): Source => {
      const admin = a.tags.includes('"weft.adminClientCert"');
      return {
        name: admin ? `Admin client certificate (${a.identity_name})` : `Identity ${a.identity_name}`,
        kind: admin ? 'admin-client' : 'identity',
        pem: a.cert_pem,
        ownerId: a.identity_id,
        renewal: !a.is_issued_by_network ? 'manual' : a.is_extend_requested ? 'extend-requested' : 'extend',
      };
    }),
    ...cas.map((c): Source => ({ name: `Third-party CA ${c.name}`, kind: 'third-party-ca', pem: c.cert_pem, ownerId: c.id, renewal: 'manual' })),
  ];
  return { sources, builtinRouterId: builtinId };
}

function stateOf(days: number): CertificateState {
  if (days < 0) return 'expired';
  const level = warningLevel(days);
  return level ? `warning-${level}` : 'ok';
}

interface Parsed {
  subject: string;
  issuer: string;
  serial: string;
  fingerprint: string;
  notBefore: Date;
  notAfter: Date;
}

/**
 * What the inventory reads of a certificate, by Node's own parser (a fraction of a full parse's cost) and kept per core
 * by a digest of the PEM: an inventory may hold every identity's certificate, and they seldom change between checks.
 */
const parsedCache = perCore(() => new Map<string, Parsed>());

function parsed(core: Core, pem: string, seen?: Set<string>): Parsed {
  const cache = parsedCache(core);
  const key = createHash('sha1').update(pem).digest('base64');
  seen?.add(key);
  let p = cache.get(key);
  if (!p) {
    const cert = new X509Certificate(pem);
    p = {
      subject: cert.subject.split('\n').join(', '),
      issuer: cert.issuer.split('\n').join(', '),
      serial: cert.serialNumber.toLowerCase(),
      fingerprint: cert.fingerprint.replace(/:/g, '').toLowerCase(),
      notBefore: new Date(cert.validFrom),
      notAfter: new Date(cert.validTo),
    };
    cache.set(key, p);
  }
  return p;
}

/** Entries of certificates no longer held are dropped from the cache after each full inventory. */
function pruneParsed(core: Core, keep: Set<string>): void {
  const cache = parsedCache(core);
  for (const k of cache.keys()) if (!keep.has(k)) cache.delete(k);
}

function describe(core: Core, s: Source, now: Date, seen?: Set<string>): CertificateEntry {
  const c = parsed(core, s.pem, seen);
  const left = daysLeft(c.notAfter, now);
  const renews = s.renewal === 'manual' || s.renewal === 'router' ? undefined : renewsAt(c.notBefore, c.notAfter).toISOString();
  return {
    name: s.name,
    kind: s.kind,
    ...(s.ownerId ? { ownerId: s.ownerId } : {}),
    subject: c.subject,
    issuer: c.issuer,
    serial: c.serial,
    fingerprint: c.fingerprint,
    notBefore: c.notBefore.toISOString(),
    notAfter: c.notAfter.toISOString(),
    daysLeft: left,
    renewal: s.renewal,
    ...(renews ? { renewsAt: renews } : {}),
    state: stateOf(left),
  };
}

/**
 * Every certificate Weft issued or trusts, soonest expiry first: its CAs, this node's TLS server certificate, the
 * built-in router's certificates, stock routers', identities' (the admin client certificate among them) and the
 * third-party CAs. No permission check: for metrics and the lifecycle check; callers use listCertificates.
 * Certificates that do not parse are left out.
 */
export async function certificateInventory(core: Core): Promise<CertificateEntry[]> {
  const now = core.clock.now();
  const stored = await storedCertificates(core);
  const sources = [...ownCertificates(core), ...builtinRouterCertificates(core, stored.builtinRouterId), ...stored.sources];
  const out: CertificateEntry[] = [];
  const seen = new Set<string>();
  for (const [i, s] of sources.entries()) {
    try {
      out.push(describe(core, s, now, seen));
    } catch {
      // not a certificate: integrity checks report such rows
    }
    if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve)); // requests go on meanwhile
  }
  pruneParsed(core, seen);
  return out.sort((a, b) => a.notAfter.localeCompare(b.notAfter) || a.name.localeCompare(b.name));
}

/** The certificate inventory for an admin (or read-only admin) caller. */
export async function listCertificates(ctx: Ctx): Promise<CertificateEntry[]> {
  requireAdminRead(ctx.caller);
  return certificateInventory(ctx.core);
}

/** Which warning each certificate was last reported at, per core: each threshold is logged once per certificate. */
const reported = perCore(() => new Map<string, CertificateState>());

/**
 * Logs a warning the first time a certificate reaches 30, 7 and 1 days before expiry (and when it has expired), not
 * at every check. Returns the entries it reported.
 */
export function reportCertificateWarnings(core: Core, inventory: CertificateEntry[]): CertificateEntry[] {
  const seen = reported(core);
  const out: CertificateEntry[] = [];
  const current = new Set<string>();
  for (const e of inventory) {
    current.add(e.fingerprint);
    if (e.state === 'ok' || seen.get(e.fingerprint) === e.state) continue;
    seen.set(e.fingerprint, e.state);
    out.push(e);
    const what = e.state === 'expired' ? 'has expired' : `expires in ${e.daysLeft} day(s)`;
    core.log.warn(
      { certificate: e.name, kind: e.kind, fingerprint: e.fingerprint, notAfter: e.notAfter, daysLeft: e.daysLeft, renewal: e.renewal },
      `certificate ${e.name} ${what}`,
    );
  }
  for (const fp of seen.keys()) if (!current.has(fp)) seen.delete(fp);
  return out;
}

/**
 * Renews this node's TLS server certificate when due: the same key and names, a new serial and validity, committed to
 * the PKI directory and taken by the core (JWTs keep verifying). Then this node's /controllers row is brought to the
 * core's certificate (again at the next check when the database was away). Returns whether it renewed.
 */
export async function renewServerCertificate(core: Core): Promise<boolean> {
  const renewed = await renewServerCertificateIfDue(core.pki, core.clock.now());
  if (renewed) {
    core.replaceServerCertificate(renewed);
    core.log.info({ fingerprint: parseCertificate(renewed.server.certPem).fingerprint }, 'TLS server certificate renewed');
  }
  await updateControllerCertificate(core);
  return !!renewed;
}

const DUE_EXTENSION = rowShape({ id: 'string', cert_pem: 'string' });

/**
 * Identities' certificates issued by Weft that reached their renewal time are flagged for extension (OpenZiti's
 * `isExtendRequested`, what `request-extend` sets): SDKs see the flag on their API session and extend through
 * `/current-identity/authenticators/{id}/extend`. Returns how many were flagged.
 */
export async function requestDueExtensions(core: Core): Promise<number> {
  const now = core.clock.now();
  const rows = await allRows(
    core.store,
    DUE_EXTENSION,
    "SELECT id, cert_pem FROM authenticators WHERE method = 'cert' AND cert_pem IS NOT NULL AND is_issued_by_network = 1 AND is_extend_requested = 0",
  );
  const due = rows.filter((r) => {
    try {
      const c = parsed(core, r.cert_pem);
      return now >= renewsAt(c.notBefore, c.notAfter);
    } catch {
      return false;
    }
  });
  const at = now.toISOString();
  let flagged = 0;
  for (const r of due) {
    // only while the certificate is still the one read (an extension verified meanwhile made a new one)
    const { changes } = await core.store.runSql(
      'UPDATE authenticators SET is_extend_requested = 1, extend_requested_at = ?, updated_at = ? WHERE id = ? AND cert_pem = ? AND is_extend_requested = 0',
      at,
      at,
      r.id,
      r.cert_pem,
    );
    flagged += changes;
  }
  return flagged;
}
