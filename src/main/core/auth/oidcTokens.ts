import { createHash, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { compactVerify, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { perCore, type Core } from '../core';
import { allRows, getRow, rowShape } from '../store/rows';

/**
 * The JWTs of OpenZiti's OIDC authentication (common/oidc_tokens.go in OpenZiti): access, refresh and ID tokens,
 * signed with the controller's JWT key (core.jwt: the API server certificate's key, `kid` = its SHA-1 fingerprint).
 * Verification accepts this node's key and those of the other nodes sharing the database (their certificates in
 * `controllers`), as OpenZiti's controllers accept their peers'. No import of the API sessions: they import this.
 */

/** OpenZiti's two native clients: `openziti` (the C SDK, new SDKs) and `native` (the Go SDK, early HA SDKs). */
export const OIDC_CLIENT_IDS: readonly string[] = ['openziti', 'native'];
/** Audiences an access token must carry one of (OpenZiti's ClaimAudienceOpenZiti, ClaimLegacyNative). */
const AUDIENCES = ['openziti', 'native'];

/** OpenZiti's default lifetimes (common.DefaultAccessTokenDuration and friends). */
export const OIDC_LIFETIMES_MS = { access: 30 * 60_000, id: 30 * 60_000, refresh: 24 * 3600_000 } as const;

/** The lifetimes of a core's tokens (api.oidc), OpenZiti's defaults unless configured. */
export function oidcLifetimes(core: Core): { access: number; id: number; refresh: number } {
  const o = core.config.oidc;
  return o ? { access: o.accessTokenMs, id: o.idTokenMs, refresh: o.refreshTokenMs } : OIDC_LIFETIMES_MS;
}

export const TOKEN_TYPE_ACCESS = 'a';
export const TOKEN_TYPE_REFRESH = 'r';

/** OpenZiti's CustomClaims, as in its access and refresh tokens. */
export interface ZitiClaims {
  z_asid: string;
  z_eid?: string;
  z_ia?: boolean;
  z_ct: string[];
  z_aid: string;
  z_t: string;
  z_cfs: string[];
  scopes: string[];
  z_sdk: Record<string, string> | null;
  z_env: Record<string, string> | null;
  z_ra: string;
  z_ice: boolean;
  z_authid?: string;
  z_cer: boolean;
  z_ckrr: boolean;
  z_iccc: boolean;
}

export interface OidcTokenClaims extends ZitiClaims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  jti: string;
  auth_time: number;
  amr: string[];
  client_id: string;
}

const ALGORITHMS = ['ES256', 'ES384', 'ES512', 'RS256'];
const HASHES: Record<string, string> = { ES256: 'sha256', RS256: 'sha256', ES384: 'sha384', ES512: 'sha512' };

/** Whether a bearer token has the shape of a JWT (OpenZiti tells them by the `ey` prefix). */
export const isJwt = (token: string): boolean => /^ey[\w-]*\.[\w-]+\.[\w-]+$/.test(token);

const PEER_CERT = rowShape({ cert_pem: 'string' });
const PEER_KEY = rowShape({ cert_pem: 'string', fingerprint: 'string' });
const CURVE_ALGORITHMS: Record<string, string> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' };

/** The public keys JWTs of this network may be signed with: this node's, and its peers' by their `kid`. */
class ControllerKeys {
  private readonly peers = new Map<string, KeyObject>();

  constructor(private readonly core: Core) {}

  async key(kid: unknown): Promise<KeyObject | undefined> {
    if (typeof kid !== 'string' || !kid) return undefined;
    const own = this.core.jwt.keyFor(kid);
    if (own) return own;
    const known = this.peers.get(kid);
    if (known) return known;
    const row = await getRow(this.core.store, PEER_CERT, 'SELECT cert_pem FROM controllers WHERE fingerprint = ? AND cert_pem IS NOT NULL', kid);
    if (!row) return undefined;
    const key = createPublicKey(row.cert_pem);
    if (this.peers.size >= 100) this.peers.clear();
    this.peers.set(kid, key);
    return key;
  }

  /** The JWKS: this node's key (with its chain), and the other nodes' public keys. */
  async jwks(): Promise<Array<Record<string, unknown>>> {
    const keys = this.core.jwt.jwks();
    const rows = await allRows(
      this.core.store,
      PEER_KEY,
      'SELECT cert_pem, fingerprint FROM controllers WHERE cert_pem IS NOT NULL AND fingerprint <> ?',
      this.core.jwt.kid,
    );
    for (const r of rows) {
      try {
        const cert = new X509Certificate(r.cert_pem);
        const jwk = cert.publicKey.export({ format: 'jwk' });
        const alg = jwk.kty === 'RSA' ? 'RS256' : jwk.crv && CURVE_ALGORITHMS[jwk.crv];
        if (alg) keys.push({ ...jwk, kid: r.fingerprint, alg, use: 'sig' });
      } catch {
        // a certificate that does not parse signs nothing we accept
      }
    }
    return keys;
  }
}

export const controllerKeysOf = perCore((core) => new ControllerKeys(core));

/**
 * The claims of a JWT signed by one of the network's controllers, checked for signature, algorithm, `exp` and `nbf`
 * against the core's clock (`ignoreExpiry`: signature only, for an end-session `id_token_hint`); undefined otherwise.
 */
export async function verifyControllerJwt(core: Core, token: string, opts: { ignoreExpiry?: boolean } = {}): Promise<JWTPayload | undefined> {
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    return undefined;
  }
  const key = await controllerKeysOf(core).key(kid);
  if (!key) return undefined;
  try {
    if (opts.ignoreExpiry) {
      const { payload, protectedHeader } = await compactVerify(token, key, { algorithms: ALGORITHMS });
      if (!ALGORITHMS.includes(protectedHeader.alg)) return undefined;
      return JSON.parse(new TextDecoder().decode(payload)) as JWTPayload;
    }
    return (await jwtVerify(token, key, { algorithms: ALGORITHMS, currentDate: core.clock.now(), requiredClaims: ['exp', 'sub'] })).payload;
  } catch {
    return undefined;
  }
}

/** Whether a JWT's id was revoked (POST /revocations of type JTI). */
async function jtiRevoked(core: Core, jti: unknown): Promise<boolean> {
  return typeof jti === 'string' && !!(await core.store.getSql("SELECT 1 AS x FROM revocations WHERE id = ? AND type = 'JTI'", jti));
}

/**
 * An OIDC token of ours of the given type (`a` access, `r` refresh), unexpired, unrevoked, for one of OpenZiti's
 * audiences and naming an API session; undefined otherwise.
 */
export async function verifyOidcToken(core: Core, token: string, type: string): Promise<OidcTokenClaims | undefined> {
  if (!isJwt(token)) return undefined;
  const claims = (await verifyControllerJwt(core, token)) as Partial<OidcTokenClaims> | undefined;
  if (!claims || claims.z_t !== type || typeof claims.z_asid !== 'string' || !claims.z_asid) return undefined;
  const aud = Array.isArray(claims.aud) ? claims.aud : typeof claims.aud === 'string' ? [claims.aud] : [];
  if (!aud.some((a) => AUDIENCES.includes(a))) return undefined;
  if (await jtiRevoked(core, claims.jti)) return undefined;
  return { ...claims, aud } as OidcTokenClaims;
}

/** OIDC's at_hash / c_hash: the left half of the hash the signing algorithm uses, base64url. */
export function claimHash(core: Core, value: string): string {
  const digest = createHash(HASHES[core.jwt.alg] ?? 'sha256')
    .update(value)
    .digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}
