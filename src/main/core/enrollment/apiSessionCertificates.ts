import { z } from 'zod';
import type { Ctx } from '../context';
import { notFound } from '../errors';
import { newId } from '../ids';
import type { ListParams } from '../query/list';
import type { Row } from '../store/db';
import { parseInput } from '../validation';
import { issueFromCsr, spiffeId } from './certificates';
import { defineResource } from '../entities/define';
import { listRows, present } from '../entities/resource';
import { API_SESSION, apiSessionsOf } from '../auth/index';
import { getRow } from '../store/rows';

const createSchema = z.object({ csr: z.string() });

/** Ephemeral client certificates of an API session (Client API, owned by the session; no management view). */
export const apiSessionCertificates = defineResource({
  entity: 'current-api-session/certificates',
  table: 'api_session_certificates',
  permission: 'ops',
  writable: false,
  fields: {
    subject: { codec: 'string', filter: true },
    fingerprint: { codec: 'string', filter: true },
    validFrom: { codec: 'datetime', filter: true },
    validTo: { codec: 'datetime', filter: true },
    certificate: { codec: 'string', column: 'cert_pem' },
  },
  defaultSort: 't.created_at ASC, t.id ASC',
  schemas: { create: createSchema },
});

const sessionOf = (ctx: Ctx): string => {
  if (!ctx.caller.apiSessionId) throw notFound('api session');
  return ctx.caller.apiSessionId;
};

export async function listSessionCertificates(ctx: Ctx, params: ListParams) {
  const { rows, meta } = await listRows(ctx, apiSessionCertificates, params, { where: 't.api_session_id = ?', params: [sessionOf(ctx)] });
  return { data: await present(ctx, apiSessionCertificates, rows), meta };
}

async function ownRow(ctx: Ctx, id: string): Promise<Row> {
  const row = await ctx.core.store.getSql<Row>('SELECT * FROM api_session_certificates WHERE id = ? AND api_session_id = ?', id, sessionOf(ctx));
  if (!row) throw notFound('certificate');
  return row;
}

export const getSessionCertificate = async (ctx: Ctx, id: string) => (await present(ctx, apiSessionCertificates, [await ownRow(ctx, id)]))[0]!;

export async function deleteSessionCertificate(ctx: Ctx, id: string): Promise<void> {
  await ownRow(ctx, id);
  await ctx.core.store.runSql('DELETE FROM api_session_certificates WHERE id = ?', id);
}

/** Signs a CSR for the caller's API session: valid until the session would expire now, SPIFFE id names the session. */
export async function createSessionCertificate(ctx: Ctx, body: unknown): Promise<{ id: string; certificate: string; cas: string }> {
  const input = parseInput(createSchema, body);
  const sessionId = sessionOf(ctx);
  const session = await getRow(ctx.core.store, API_SESSION, 'SELECT * FROM api_sessions WHERE id = ?', sessionId);
  if (!session) throw notFound('api session');
  const id = newId();
  const cert = await issueFromCsr(ctx.core, {
    csrPem: input.csr,
    field: 'csr',
    fallbackCommonName: ctx.caller.identityId,
    notAfter: apiSessionsOf(ctx.core).expiresAt(session),
    uriSans: [spiffeId(ctx.core, 'identity', ctx.caller.identityId, 'apiSession', sessionId, 'apiSessionCertificate', id)],
  });
  const now = ctx.core.clock.now().toISOString();
  const store = ctx.core.store;
  // the session is checked again with the write: one that ended while the certificate was issued is 404
  await store.tx(async () => {
    if (!(await store.getSql('SELECT 1 FROM api_sessions WHERE id = ?', sessionId))) throw notFound('api session');
    await store.runSql(
      `INSERT INTO api_session_certificates (id, api_session_id, subject, fingerprint, valid_from, valid_to, cert_pem, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      sessionId,
      cert.subject,
      cert.fingerprint,
      cert.notBefore.toISOString(),
      cert.notAfter.toISOString(),
      cert.certPem,
      now,
      now,
    );
  });
  return { id, certificate: cert.chainPem, cas: ctx.core.pki.caBundlePem };
}
