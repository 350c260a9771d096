import { randomUUID } from 'node:crypto';
import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import type { Core } from '../core';
import { notFound, unauthorized, validationError } from '../errors';
import { fingerprintSha1, isCurrentlyValid, peerPems } from '../pki/index';
import { getRow, rowShape, selectList, type Decoded } from '../store/rows';
import { csrRequestedSans, checkCsr, issueFromCsr, spiffeId } from './certificates';
import { enrollmentExpired, invalidEnrollmentToken, missingCsr, routerCommonNameInvalid } from '../enrollmentErrors';
import { signEnrollmentJwt } from './jwt';
import { defaultExpiry } from './records';

/** Edge routers and transit routers enroll the same way; only the table and the JWT's `em` differ. */
export const ROUTER_KINDS = {
  edge: { table: 'edge_routers', em: 'erott' },
  transit: { table: 'routers', em: 'trott' },
} as const;
export type RouterKind = keyof typeof ROUTER_KINDS;

/**
 * What router enrollment JWTs name in `ctrls`: every controller node's control channel address (`tls:host:port`, what
 * the router's config takes as its ctrl endpoint), as OpenZiti lists its controllers' ctrl addresses. None (no
 * control channel): the JWT names the API's URL, as before.
 */
async function controlChannelAddresses(core: Core): Promise<string[]> {
  const rows = await core.store.allSql<{ a: string }>(
    'SELECT ctrl_address AS a FROM controllers WHERE ctrl_address IS NOT NULL ORDER BY is_online DESC, created_at, id',
  );
  return [...new Set(rows.map((r) => r.a))];
}

/** Gives a router a fresh enrollment token and JWT (replacing any outstanding one). Call inside a transaction. */
export async function issueRouterEnrollment(ctx: Ctx, kind: RouterKind, id: string): Promise<void> {
  const { table, em } = ROUTER_KINDS[kind];
  const token = randomUUID();
  const expiresAt = defaultExpiry(ctx.core);
  await ctx.core.store.runSql(
    `UPDATE ${table} SET enrollment_token = ?, enrollment_jwt = ?, enrollment_created_at = ?, enrollment_expires_at = ? WHERE id = ?`,
    token,
    signEnrollmentJwt(ctx.core, { em, sub: id, jti: token, exp: expiresAt, ctrls: await controlChannelAddresses(ctx.core) }),
    ctx.core.clock.now().toISOString(),
    expiresAt.toISOString(),
    id,
  );
}

/** Re-enroll: the router's certificate stops working and a new enrollment JWT replaces any outstanding one. */
export async function reEnrollRouter(ctx: Ctx, kind: RouterKind, id: string): Promise<void> {
  requirePermission(ctx.caller, 'router', 'update');
  const { table } = ROUTER_KINDS[kind];
  const store = ctx.core.store;
  if (!(await store.getSql(`SELECT 1 FROM ${table} WHERE id = ?`, id))) throw notFound('router');
  const extra = kind === 'transit' ? ', unverified_cert_pem = NULL, unverified_fingerprint = NULL' : '';
  await store.tx(async () => {
    await store.runSql(
      `UPDATE ${table} SET fingerprint = NULL, cert_pem = NULL, is_verified = 0, is_online = 0${extra}, updated_at = ? WHERE id = ?`,
      ctx.core.clock.now().toISOString(),
      id,
    );
    await issueRouterEnrollment(ctx, kind, id);
  });
}

/** What enrollment and extension read of an edge or transit router. */
const ROUTER = rowShape({ id: 'string', fingerprint: 'string?', enrollment_expires_at: 'datetime?' });

interface FoundRouter {
  kind: RouterKind;
  row: Decoded<typeof ROUTER>;
}

async function findRouter(core: Core, column: 'enrollment_token' | 'fingerprint', value: string): Promise<FoundRouter | undefined> {
  for (const kind of Object.keys(ROUTER_KINDS) as RouterKind[]) {
    const row = await getRow(core.store, ROUTER, `SELECT ${selectList(ROUTER)} FROM ${ROUTER_KINDS[kind].table} WHERE ${column} = ?`, value);
    if (row) return { kind, row };
  }
  return undefined;
}

export interface RouterCsrs {
  certCsr?: unknown;
  clientCsr?: unknown;
  serverCertCsr?: unknown;
  serverCsr?: unknown;
}

/** Issues the router's client certificate (CN = router id) and its server certificate (SANs as requested). */
async function issueRouterCertificates(core: Core, id: string, body: RouterCsrs, fields: { client: string; server: string }) {
  const clientCsr = body.certCsr ?? body.clientCsr;
  const serverCsr = body.serverCertCsr ?? body.serverCsr;
  if (typeof serverCsr !== 'string' || !serverCsr)
    throw missingCsr({ field: fields.server, reason: 'server CSR is required', value: serverCsr ?? null });
  if (typeof clientCsr !== 'string' || !clientCsr)
    throw missingCsr({ field: fields.client, reason: 'client CSR is required', value: clientCsr ?? null });
  const client = await checkCsr(clientCsr, fields.client);
  if (client.commonName !== id)
    throw routerCommonNameInvalid({ field: fields.client, reason: 'common name must be the router id', value: client.commonName });
  await checkCsr(serverCsr, fields.server); // before reading its requested SANs
  const sans = csrRequestedSans(serverCsr);
  const server = await issueFromCsr(core, {
    csrPem: serverCsr,
    field: fields.server,
    usage: 'server',
    dnsSans: sans.dns,
    ipSans: sans.ip,
    uriSans: [spiffeId(core, 'router', id)],
  });
  const cert = await issueFromCsr(core, { csrPem: clientCsr, field: fields.client, commonName: id, uriSans: [spiffeId(core, 'router', id)] });
  return { cert, server };
}

/** POST /enroll/erott (and the legacy /enroll?method=erott|trott): a router enrolls with its one-time token. */
export async function enrollRouter(core: Core, token: unknown, body: RouterCsrs): Promise<{ ca: string; cert: string; serverCert: string }> {
  const found = typeof token === 'string' && token ? await findRouter(core, 'enrollment_token', token) : undefined;
  if (!found) throw invalidEnrollmentToken();
  const { kind, row } = found;
  if (row.enrollment_expires_at !== null && row.enrollment_expires_at <= core.clock.now().toISOString()) throw enrollmentExpired();
  const { cert, server } = await issueRouterCertificates(core, row.id, body, { client: 'certCsr', server: 'serverCertCsr' });
  const changed = (
    await core.store.runSql(
      `UPDATE ${ROUTER_KINDS[kind].table} SET cert_pem = ?, fingerprint = ?, is_verified = 1, enrollment_token = NULL, enrollment_jwt = NULL,
       enrollment_created_at = NULL, enrollment_expires_at = NULL, updated_at = ? WHERE id = ? AND enrollment_token = ?`,
      cert.certPem,
      cert.fingerprint,
      core.clock.now().toISOString(),
      row.id,
      token,
    )
  ).changes;
  if (!changed) throw invalidEnrollmentToken(); // used concurrently, or replaced by a re-enroll meanwhile
  return { ca: core.pki.caBundlePem, cert: cert.chainPem, serverCert: server.chainPem };
}

/**
 * POST /enroll/extend/router: made with the router's current client certificate; returns new certificates and the
 * old client certificate stops working at once.
 */
export async function extendRouter(core: Core, peerCertificates: Buffer[], body: unknown): Promise<{ ca: string; cert: string; serverCert: string }> {
  const [leaf] = peerPems(peerCertificates);
  const found = leaf ? await findRouter(core, 'fingerprint', fingerprintSha1(leaf)) : undefined;
  if (!found || !isCurrentlyValid(leaf!, core.clock.now())) throw unauthorized();
  if (body === null || typeof body !== 'object')
    throw validationError('(root)', 'a JSON object with certCsr and serverCertCsr is required', body ?? null);
  const b = body as RouterCsrs;
  if (b.certCsr === undefined) throw validationError('certCsr', 'is required');
  if (b.serverCertCsr === undefined) throw validationError('serverCertCsr', 'is required');
  const { kind, row } = found;
  const { cert, server } = await issueRouterCertificates(
    core,
    row.id,
    { certCsr: b.certCsr, serverCertCsr: b.serverCertCsr },
    { client: 'certCsr', server: 'serverCertCsr' },
  );
  if (!(await replaceRouterCertificate(core, kind, row.id, row.fingerprint!, cert))) throw unauthorized();
  return { ca: core.pki.caBundlePem, cert: cert.chainPem, serverCert: server.chainPem };
}

/** The router's record takes its new client certificate, unless its certificate changed meanwhile. */
async function replaceRouterCertificate(
  core: Core,
  kind: keyof typeof ROUTER_KINDS,
  id: string,
  oldFingerprint: string,
  cert: { certPem: string; fingerprint: string },
): Promise<boolean> {
  const now = core.clock.now().toISOString();
  const sql = `UPDATE ${ROUTER_KINDS[kind].table} SET cert_pem = ?, fingerprint = ?, updated_at = ? WHERE id = ? AND fingerprint = ?`;
  return (await core.store.runSql(sql, cert.certPem, cert.fingerprint, now, id, oldFingerprint)).changes > 0;
}

/** Certificates issued to a connected router over its control channel, not yet taken by its record. */
export interface RouterExtension {
  /** which table holds the router */
  kind: keyof typeof ROUTER_KINDS;
  certPem: string;
  fingerprint: string;
  /** the client and server certificates with their intermediates, as the router writes them */
  clientChainPem: string;
  serverChainPem: string;
}

/**
 * A router connected with its enrolled certificate (`fingerprint`) asks for new ones over its control channel
 * (OpenZiti's EnrollmentExtendRouterRequest, always with requireVerification): new client and server certificates
 * for its CSRs (the client CSR's common name must be its id). Its record keeps the old certificate until the router
 * shows it holds the new one (confirmRouterExtension).
 */
export async function issueRouterExtension(core: Core, routerId: string, fingerprint: string, csrs: RouterCsrs): Promise<RouterExtension> {
  const found = await findRouter(core, 'fingerprint', fingerprint);
  if (!found || found.row.id !== routerId) throw unauthorized();
  const { cert, server } = await issueRouterCertificates(core, routerId, csrs, { client: 'clientCertCsr', server: 'serverCertCsr' });
  return { kind: found.kind, certPem: cert.certPem, fingerprint: cert.fingerprint, clientChainPem: cert.chainPem, serverChainPem: server.chainPem };
}

/** The router holds the extension's certificate: its record takes it (false when its certificate changed meanwhile). */
export function confirmRouterExtension(core: Core, routerId: string, oldFingerprint: string, extension: RouterExtension): Promise<boolean> {
  return replaceRouterCertificate(core, extension.kind, routerId, oldFingerprint, extension);
}
