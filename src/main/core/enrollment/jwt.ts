import { randomUUID } from 'node:crypto';
import type { Core } from '../core';

/** The `em` (enrollment method) values of the JWTs the controller signs. */
export type EnrollmentMethod = 'ott' | 'ottca' | 'updb' | 'erott' | 'trott' | 'ca' | 'network';

export interface EnrollmentClaims {
  em: EnrollmentMethod;
  sub: string;
  jti: string;
  exp?: Date;
  aud?: string[];
  /** the controllers' addresses (default: the API's public URL); router enrollments name the control channels */
  ctrls?: string[];
}

/**
 * An enrollment JWT signed with the controller's JWT key (the API server certificate's, which is what SDKs verify
 * it with). `iss` is the API's public URL, and so is `ctrls` unless the claims name the controllers otherwise.
 */
export function signEnrollmentJwt(core: Core, claims: EnrollmentClaims): string {
  const iss = core.config.apiPublicUrl;
  const payload: Record<string, unknown> = {
    em: claims.em,
    iss,
    sub: claims.sub,
    jti: claims.jti,
    iat: Math.floor(core.clock.now().getTime() / 1000),
    ctrls: claims.ctrls?.length ? claims.ctrls : [iss],
  };
  if (claims.exp) payload.exp = Math.floor(claims.exp.getTime() / 1000);
  if (claims.aud) payload.aud = claims.aud;
  return core.jwt.sign(payload);
}

/** The trust ("network") JWT: lets a client bootstrap trust in this controller before it has an enrollment. */
export function networkJwt(core: Core): string {
  return signEnrollmentJwt(core, { em: 'network', sub: core.config.apiPublicUrl, jti: randomUUID(), aud: ['openziti-enroller'] });
}

/** JWKS of the controller's JWT key (public part only), with its certificate chain in x5c. */
export function enrollmentJwks(core: Core): { keys: Record<string, unknown>[] } {
  return { keys: core.jwt.jwks() };
}

/** Signs a client's nonce with the key named by `kid`: proof that this controller holds the enrollment key. */
export function signNonce(core: Core, nonce: string): { algorithm: string; caPool: string; kid: string; signature: string } {
  return { algorithm: core.jwt.alg, caPool: core.pki.caBundlePem, kid: core.jwt.kid, signature: core.jwt.signBytes(nonce).toString('base64') };
}

/**
 * The outstanding enrollment JWTs of identities and routers that name `fromIss` (the API's previous public URL), signed
 * again naming the current one in `iss` (and in `ctrls` where they named it): same token, expiry and method, so a
 * device enrolls at the address the network advertises now. Call inside a transaction. Returns how many changed.
 */
export async function reissueEnrollmentJwts(core: Core, fromIss: string): Promise<number> {
  const iss = core.config.apiPublicUrl;
  const resign = (jwt: string): string | undefined => {
    let claims: Record<string, unknown>;
    try {
      claims = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    if (claims.iss !== fromIss) return undefined;
    const ctrls = Array.isArray(claims.ctrls) ? claims.ctrls.map((c) => (c === fromIss ? iss : c)) : claims.ctrls;
    return core.jwt.sign({ ...claims, iss, ctrls });
  };
  let changed = 0;
  const tables = [
    { table: 'enrollments', column: 'jwt' },
    { table: 'edge_routers', column: 'enrollment_jwt' },
    { table: 'routers', column: 'enrollment_jwt' },
  ];
  for (const { table, column } of tables) {
    const rows = await core.store.allSql<{ id: string; jwt: string }>(`SELECT id, ${column} AS jwt FROM ${table} WHERE ${column} IS NOT NULL`);
    for (const r of rows) {
      const next = resign(r.jwt);
      if (!next) continue;
      await core.store.runSql(`UPDATE ${table} SET ${column} = ? WHERE id = ? AND ${column} = ?`, next, r.id, r.jwt);
      changed++;
    }
  }
  return changed;
}
