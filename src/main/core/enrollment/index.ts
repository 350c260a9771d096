import { z } from 'zod';
import type { Core } from '../core';
import { validationError } from '../errors';
import { parseInput } from '../validation';
import { invalidEnrollMethod } from '../enrollmentErrors';
import { enrollCa, enrollOtt, enrollOttCa, enrollUpdb } from './identityEnroll';
import { signNonce } from './jwt';
import { ROUTER_KINDS, enrollRouter } from './routers';

// The enrollment engine's facade: every enroll flow (identities, routers, tokens), enrollment records and JWTs, CAs
// and their verification, certificate extension, identity import. Adapters import enrollment from here, not from the
// modules behind it.
export { extendCertificate, reEnrollAuthenticator, requestExtend, verifyExtendedCertificate } from './authenticators';
export { caJwt, verifyCa } from './cas';
export { enrollCa, enrollOtt, enrollOttCa, enrollUpdb } from './identityEnroll';
export { enrollmentArchive, importIdentities } from './identityImport';
export { createEnrollment, refreshEnrollment } from './records';
export { confirmRouterExtension, enrollRouter, extendRouter, issueRouterExtension, reEnrollRouter, type RouterExtension } from './routers';
export { enrollToken, TOKEN_ISSUER_HEADERS } from './tokenEnroll';
import { enrollWithSetupKey, isSetupKey } from './setupKeys';
export { createSetupKey, enrollWithSetupKey, isSetupKey, redeemSetupKey, setupKeys } from './setupKeys';
export { enrollmentJwks, networkJwt, reissueEnrollmentJwts } from './jwt';

/** The enrollment method a token belongs to (identity enrollments, then routers); undefined if unknown. */
export async function methodOfToken(core: Core, token: string | undefined): Promise<string | undefined> {
  if (!token) return undefined;
  const e = await core.store.getSql<{ method: string }>('SELECT method FROM enrollments WHERE token = ?', token);
  if (e) return e.method;
  for (const { table, em } of Object.values(ROUTER_KINDS)) {
    if (await core.store.getSql(`SELECT 1 FROM ${table} WHERE enrollment_token = ?`, token)) return em;
  }
  return undefined;
}

export interface LegacyEnrollRequest {
  method?: string;
  token?: string;
  body: unknown;
  peerCertificates: Buffer[];
}

/**
 * POST /enroll?method=&token=: OpenZiti's original enrollment endpoint. The method comes from the query or, when
 * absent, from the token; a CSR may be sent as the raw PEM body or as JSON. Returns the flow's result.
 */
export async function legacyEnroll(core: Core, r: LegacyEnrollRequest): Promise<{ method: string; result: object }> {
  const method = r.method || (await methodOfToken(core, r.token));
  const json = r.body && typeof r.body === 'object' ? (r.body as Record<string, unknown>) : {};
  const token = r.token ?? json.token;
  switch (method) {
    case 'ott': {
      const csr = typeof r.body === 'string' ? r.body : json.clientCsr;
      const field = typeof r.body === 'string' ? '(body)' : 'clientCsr';
      // a setup key's JWT: a new device for each enrollment
      if (isSetupKey(token)) return { method, result: await enrollWithSetupKey(core, token, csr, field) };
      return { method, result: await enrollOtt(core, token, csr, field) };
    }
    case 'ottca':
      return { method, result: await enrollOttCa(core, token, r.peerCertificates) };
    case 'updb':
      return { method, result: await enrollUpdb(core, token, r.body) };
    case 'ca':
      return { method, result: await enrollCa(core, r.peerCertificates, r.body) };
    case 'erott':
    case 'trott':
      return { method, result: await enrollRouter(core, token, json) };
    default:
      throw invalidEnrollMethod({ field: 'method', reason: 'must be one of ott, ottca, updb, ca, erott, trott', value: r.method ?? null });
  }
}

const challengeSchema = z.object({ keyId: z.string(), nonce: z.uuid() });

/** POST /enroll/challenge: signs the client's nonce with the enrollment key named by keyId. */
export function enrollmentChallenge(core: Core, body: unknown) {
  const input = parseInput(challengeSchema, body);
  if (!core.jwt.kids.has(input.keyId)) throw validationError('keyId', 'no enrollment signing key has this id', input.keyId);
  return signNonce(core, input.nonce);
}
