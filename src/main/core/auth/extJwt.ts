import { createPublicKey, type KeyObject } from 'node:crypto';
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors as joseErrors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
  type JWSAlgorithm,
} from 'jose';
import { perCore, type Core } from '../core';
import { loadAuthPolicy } from '../entities/authPolicies';
import type { ApiObject } from '../entities/resource';
import { ApiError, invalidAuth } from '../errors';
import { getRow, rowShape, type Decoded } from '../store/rows';
import { API_SESSION, callerOf, apiSessionsOf, type ApiSession } from './apiSessions';
import { LOGIN_IDENTITY, type LoginIdentity } from './disabled';
import { completeLogin, parseAuthenticateBody, type ClientInfo, type LoginOptions } from './authenticate';
import { recordingFailures, refused } from './authEvents';

/** The refusal reason of a JWT whose `aud` does not name the signer's audience. */
export const WRONG_AUDIENCE = 'the JWT is not for the signer’s audience';
const ALGORITHMS: JWSAlgorithm[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** Allowed clock skew for exp/nbf, in seconds. */
const CLOCK_TOLERANCE_S = 30;
/** A cached JWKS is used at most this long. */
const JWKS_MAX_AGE_MS = 10 * 60_000;
/** An unknown `kid` refetches the JWKS at most this often (a flood of bogus kids must not flood the issuer). */
const JWKS_COOLDOWN_MS = 5_000;
const JWKS_FETCH_TIMEOUT_MS = 10_000;
const JWKS_MAX_BYTES = 512 * 1024;

type KeySet = ReturnType<typeof createLocalJWKSet>;
interface CachedJwks {
  endpoint: string;
  /** when these keys were fetched (cache age) */
  fetchedAt: number;
  /** when a fetch was last tried, successful or not (refetch cooldown) */
  attemptedAt: number;
  keys: KeySet;
}

/** An external JWT signer's row, as verification and enrollment by token read it. */
export const SIGNER = rowShape({
  id: 'string',
  enabled: 'bool',
  issuer: 'string',
  audience: 'string',
  cert_pem: 'string?',
  jwks_endpoint: 'string?',
  kid: 'string?',
  claims_property: 'string?',
  use_external_id: 'bool?',
  enroll_to_cert_enabled: 'bool?',
  enroll_to_token_enabled: 'bool?',
  enroll_name_claims_selector: 'string?',
  enroll_attribute_claims_selector: 'string?',
  enroll_auth_policy_id: 'string?',
});
export type Signer = Decoded<typeof SIGNER>;

export interface VerifiedJwt {
  signer: Signer;
  payload: JWTPayload;
  /** the value of the signer's claims property: an identity id, or an external id when useExternalId */
  subject: string;
}

/**
 * Verifies external JWTs with jose against the signer that the token's `iss` names: its certificate, or its JWKS
 * (fetched, cached per signer, refetched for an unknown `kid` at most every few seconds). Times come from the
 * core's clock, so expiry and cache ages are testable.
 */
export class ExtJwtVerifier {
  private readonly jwks = new Map<string, CachedJwks>();
  private readonly fetching = new Map<string, Promise<CachedJwks>>();

  constructor(private readonly core: Core) {}

  /** Forgets what was cached for a signer (it was updated or deleted). */
  invalidate(signerId: string): void {
    this.jwks.delete(signerId);
  }

  /** Verifies `token`; every failure is 401 INVALID_AUTH with the reason logged, never returned. */
  async verify(token: string): Promise<VerifiedJwt> {
    const fail = (reason: string, extra: { signerId?: string } & Record<string, unknown> = {}) => {
      this.core.log.info({ ...extra, reason }, 'external JWT rejected');
      return refused({ reason, external_jwt_signer_id: extra.signerId });
    };
    let issuer: unknown;
    try {
      decodeProtectedHeader(token);
      issuer = decodeJwt(token).iss;
    } catch {
      throw fail('not a JWT');
    }
    if (typeof issuer !== 'string' || !issuer) throw fail('no issuer');
    const signer = await getRow(this.core.store, SIGNER, 'SELECT * FROM external_jwt_signers WHERE issuer = ?', issuer);
    if (!signer) throw fail('unknown issuer', { issuer });
    if (!signer.enabled) throw fail('signer disabled', { signerId: signer.id });
    const options = {
      issuer: signer.issuer,
      audience: signer.audience,
      algorithms: ALGORITHMS,
      currentDate: this.core.clock.now(),
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['exp'],
    };
    let payload: JWTPayload;
    try {
      if (signer.cert_pem) {
        const kid = decodeProtectedHeader(token).kid;
        if (signer.kid && kid !== undefined && kid !== signer.kid) throw fail('kid does not match the signer', { signerId: signer.id, kid });
        payload = (await jwtVerify(token, certKey(signer.cert_pem), options)).payload;
      } else {
        const cached = await this.keySet(signer, false);
        try {
          payload = (await jwtVerify(token, cached.keys, options)).payload;
        } catch (e) {
          if (!(e instanceof joseErrors.JWKSNoMatchingKey)) throw e;
          // an unknown kid: the issuer may have rotated its keys
          const fresh = await this.keySet(signer, true);
          if (fresh === cached) throw e;
          payload = (await jwtVerify(token, fresh.keys, options)).payload;
        }
      }
    } catch (e) {
      if (e instanceof ApiError) throw e;
      if (e instanceof joseErrors.JWTClaimValidationFailed && e.claim === 'aud') {
        // the usual mistake with access tokens: the signer's audience is the client id, the token's the API's
        throw fail(WRONG_AUDIENCE, { signerId: signer.id, audience: signer.audience, tokenAudience: e.payload.aud });
      }
      throw fail((e as Error).message, { signerId: signer.id, code: (e as { code?: string }).code });
    }
    const claim = payload[signer.claims_property || 'sub'];
    if (typeof claim !== 'string' || !claim) throw fail('claims property missing', { signerId: signer.id, claim: signer.claims_property });
    return { signer, payload, subject: claim };
  }

  /** The signer's JWKS: cached, or fetched (once for concurrent callers) when stale or when `refresh` allows it. */
  private async keySet(signer: Signer, refresh: boolean): Promise<CachedJwks> {
    const id = signer.id;
    const endpoint = signer.jwks_endpoint ?? '';
    const now = this.core.clock.now().getTime();
    const known = this.jwks.get(id);
    const cached = known?.endpoint === endpoint ? known : undefined;
    if (cached && ((!refresh && now - cached.fetchedAt < JWKS_MAX_AGE_MS) || now - cached.attemptedAt < JWKS_COOLDOWN_MS)) return cached;
    // keyed by the endpoint too: a verify after the endpoint changed does not join a fetch of the old one
    const key = `${id}|${endpoint}`;
    let pending = this.fetching.get(key);
    if (!pending) {
      pending = fetchJwks(endpoint).then((keys) => {
        const at = this.core.clock.now().getTime();
        const entry = { endpoint, fetchedAt: at, attemptedAt: at, keys };
        this.jwks.set(id, entry);
        return entry;
      });
      this.fetching.set(key, pending);
      pending.finally(() => this.fetching.delete(key)).catch(() => undefined);
    }
    try {
      return await pending;
    } catch (e) {
      this.core.log.warn({ signerId: id, endpoint, err: (e as Error).message }, 'could not fetch the JWKS of an external JWT signer');
      // keep serving what we had; either way, no new attempt before the cooldown
      const entry = cached ?? { endpoint, fetchedAt: now, attemptedAt: now, keys: createLocalJWKSet({ keys: [] }) };
      entry.attemptedAt = this.core.clock.now().getTime();
      this.jwks.set(id, entry);
      if (cached) return cached;
      throw e;
    }
  }
}

function certKey(pem: string): KeyObject {
  return createPublicKey(pem);
}

async function fetchJwks(endpoint: string): Promise<KeySet> {
  const res = await fetch(endpoint, { signal: AbortSignal.timeout(JWKS_FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
  if (res.status !== 200) throw new Error(`JWKS endpoint answered ${res.status}`);
  const text = await res.text();
  if (text.length > JWKS_MAX_BYTES) throw new Error('JWKS document too large');
  return createLocalJWKSet(JSON.parse(text) as JSONWebKeySet);
}

export interface ExtJwtRequest {
  /** the Authorization header: `Bearer <jwt>` */
  authorization: string | undefined;
  /** a zt-session header: a partial session waiting for its secondary JWT */
  ztSession: string | undefined;
  body: unknown;
  client: ClientInfo;
}

/**
 * POST /authenticate?method=ext-jwt. With the token of a partial session that owes a JWT of its policy's
 * `requireExtJwtSigner`, the verified JWT (for the same identity) completes that factor; otherwise it is a
 * primary login of the identity the JWT names (by id, or by externalId when the signer says useExternalId).
 */
export function authenticateExtJwt(core: Core, req: ExtJwtRequest, opts: LoginOptions = {}): Promise<ApiObject> {
  return recordingFailures(core, 'ext-jwt', req.client, () => extJwtLogin(core, req, opts));
}

async function extJwtLogin(core: Core, req: ExtJwtRequest, opts: LoginOptions): Promise<ApiObject> {
  const body = parseAuthenticateBody(req.body);
  const bearer = bearerOf(req.authorization);
  if (!bearer) throw refused({ reason: 'no external JWT' }, 'an external JWT is required as Authorization: Bearer <token>');
  const pending = req.ztSession ? await apiSessionsOf(core).resolve(req.ztSession) : undefined;
  const { jwt, identity } = await verifiedIdentity(core, bearer);
  const session = pending?.session;
  if (session && session.is_ext_jwt_required && !session.is_ext_jwt_complete) {
    const row = await completeExtJwtFactor(core, session, jwt, identity);
    const view = await apiSessionsOf(core).view(core.ctx(callerOf(identity, row)), row);
    view.token = row.token;
    return view;
  }
  return completeLogin(core, { method: 'ext-jwt', identity, extJwtSignerId: jwt.signer.id }, body, req.client, opts);
}

/** The bearer token of an Authorization header value, if any. */
export const bearerOf = (authorization: string | undefined): string | undefined => /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];

/** An external JWT, verified, and the identity it names; 401 INVALID_AUTH otherwise. */
async function verifiedIdentity(core: Core, bearer: string): Promise<{ jwt: VerifiedJwt; identity: LoginIdentity }> {
  const jwt = await extJwtVerifierOf(core).verify(bearer);
  const column = jwt.signer.use_external_id ? 'external_id' : 'id';
  const identity = await getRow(core.store, LOGIN_IDENTITY, `SELECT * FROM identities WHERE ${column} = ?`, jwt.subject);
  if (!identity) {
    core.log.info({ signerId: jwt.signer.id, subject: jwt.subject }, 'external JWT names no identity');
    throw refused({ reason: 'the JWT names no identity', external_jwt_signer_id: jwt.signer.id });
  }
  return { jwt, identity };
}

/**
 * The secondary factor of a partial session whose auth policy requires a JWT of `requireExtJwtSigner`: a verified
 * JWT of that signer for the session's identity completes it (a raw token is verified first). Returns the session's
 * row; 401 INVALID_AUTH otherwise.
 */
export async function completeExtJwtFactor(core: Core, session: ApiSession, token: string | VerifiedJwt, known?: LoginIdentity): Promise<ApiSession> {
  const { jwt, identity } = typeof token === 'string' ? await verifiedIdentity(core, token) : { jwt: token, identity: known! };
  const policy = await loadAuthPolicy(core.system, identity.auth_policy_id);
  if (identity.id !== session.identity_id || policy.secondary.requireExtJwtSigner !== jwt.signer.id) throw invalidAuth();
  const done = await core.store.runSql(
    'UPDATE api_sessions SET is_ext_jwt_complete = 1, updated_at = ? WHERE id = ?',
    core.clock.now().toISOString(),
    session.id,
  );
  // the partial session may have ended meanwhile (logout, expiry, a disabled identity)
  const row = done.changes ? await getRow(core.store, API_SESSION, 'SELECT * FROM api_sessions WHERE id = ?', session.id) : undefined;
  if (!row) throw invalidAuth();
  return row;
}

/** The external JWT verifier of a core (signer keys cached until a signer changes). */
export const extJwtVerifierOf = perCore((core) => new ExtJwtVerifier(core));
