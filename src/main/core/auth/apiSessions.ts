import type { Ctx } from '../context';
import { newId, newToken } from '../ids';
import { allRows, decodeRow, getRow, json, rowShape, selectList, type Decoded } from '../store/rows';
import { isDisabled, type LoginIdentity } from './disabled';
import { defineResource } from '../entities/define';
import { type ApiObject, present } from '../entities/resource';
import type { Caller } from '../permissions';
import { perCore, type Core } from '../core';
import { isTotpEnrolled } from './mfaRecords';
import { isJwt, TOKEN_TYPE_ACCESS, verifyOidcToken } from './oidcTokens';

/** An API session's row (every column). */
export const API_SESSION = rowShape({
  id: 'string',
  token: 'string',
  identity_id: 'string',
  authenticator_id: 'string?',
  ip_address: 'string',
  config_types: json<string[]>(),
  is_mfa_required: 'bool',
  is_mfa_complete: 'bool',
  is_ext_jwt_required: 'bool',
  is_ext_jwt_complete: 'bool',
  improper_client_cert_chain: 'bool',
  mfa_passed_at: 'datetime?',
  mfa_failures: 'int',
  kind: 'string',
  expires_at: 'datetime?',
  last_activity_at: 'datetime',
  created_at: 'datetime',
  updated_at: 'datetime',
  tags: json<Record<string, unknown>>(),
});
/** An API session as resolved: a JWT-resolved one carries the access token and its expiry. */
export type ApiSession = Decoded<typeof API_SESSION> & { token_expires_at?: string };

const AUTHENTICATOR_FLAGS = rowShape({
  id: 'string',
  method: 'string',
  is_issued_by_network: 'bool',
  is_extend_requested: 'bool',
  is_key_roll_requested: 'bool',
});
const CALLER_IDENTITY = rowShape({
  id: 'string',
  name: 'string',
  is_admin: 'bool',
  permissions: json<string[]>(),
  disabled: 'bool',
  disabled_until: 'datetime?',
});
type CallerIdentity = Decoded<typeof CALLER_IDENTITY>;

/** Management view of API sessions (list/get/delete; sessions are created only by authentication). */
export const apiSessions = defineResource({
  entity: 'api-sessions',
  table: 'api_sessions',
  permission: 'ops',
  writable: false,
  fields: {
    token: { codec: 'string', filter: true },
    identityId: { codec: 'string', filter: true },
    authenticatorId: { codec: 'string', filter: true },
    ipAddress: { codec: 'string', filter: true },
    configTypes: { codec: 'json' },
    isMfaRequired: { codec: 'bool' },
    isMfaComplete: { codec: 'bool' },
    improperClientCertChain: { codec: 'bool' },
    lastActivityAt: { codec: 'datetime', filter: true },
  },
  refs: { identity: { column: 'identity_id', entity: 'identities', table: 'identities' } },
  defaultSort: 't.created_at DESC, t.id ASC',
  async decorate(items, rows, ctx) {
    const auth = await allRows(
      ctx.core.store,
      AUTHENTICATOR_FLAGS,
      `SELECT ${selectList(AUTHENTICATOR_FLAGS)} FROM authenticators WHERE id IN ${ctx.core.store.sql.jsonValues()}`,
      JSON.stringify(rows.map((r) => r.authenticator_id)),
    );
    const byId = new Map(auth.map((a) => [a.id, a]));
    for (const [i, item] of items.entries()) {
      const row = decodeRow(API_SESSION, rows[i]!);
      const a = row.authenticator_id === null ? undefined : byId.get(row.authenticator_id);
      item.cachedLastActivityAt = apiSessionsOf(ctx.core).lastActivity(row).toISOString();
      item.lastActivityAt = item.cachedLastActivityAt;
      item.authQueries = await apiSessionsOf(ctx.core).authQueries(row);
      item.isCertExtendable = !!a && a.method === 'cert' && a.is_issued_by_network;
      item.isCertExtendRequested = !!a?.is_extend_requested;
      item.isCertKeyRollRequested = !!a?.is_key_roll_requested;
    }
  },
});

const DISABLED = rowShape({ disabled: 'bool', disabled_until: 'datetime?' });
const STALE = rowShape({ id: 'string', last_activity_at: 'datetime', expires_at: 'datetime?' });

/** A token resolved: its live session, the session's identity and the caller they make. */
export interface Resolved {
  session: ApiSession;
  identity: CallerIdentity;
  caller: Caller;
}

export interface NewSession {
  identityId: string;
  authenticatorId: string;
  ipAddress: string;
  configTypes: string[];
  isMfaRequired: boolean;
  isExtJwtRequired?: boolean;
  /** an OIDC login (core/auth/oidc.ts): reached only through its JWT access tokens, ends at `expiresAt` */
  oidc?: { expiresAt: Date };
}

export interface AuthQuery {
  typeId: string;
  provider: string;
  format?: string;
  httpMethod?: string;
  httpUrl?: string;
  minLength?: number;
  maxLength?: number;
  isTotpEnrolled?: boolean;
  id?: string;
  clientId?: string;
  scopes?: string[];
}

/**
 * API sessions: creation, token resolution with inactivity expiry, and the session views.
 * Activity is kept in memory and written through at most once a second per session.
 *
 * Two kinds (api_sessions.kind): `legacy` sessions of POST /authenticate, named by their opaque token and ended by
 * inactivity; `oidc` sessions of the OIDC login (core/auth/oidc.ts), named by the `z_asid` of a JWT access token
 * (their token column is never accepted) and ended at `expires_at`, which each token refresh moves on. Either ends
 * early when deleted (logout, revocation, a disabled identity).
 */
export class ApiSessionService {
  private readonly activity = new Map<string, number>();

  constructor(private readonly core: Core) {}

  get timeoutMs(): number {
    return this.core.config.sessionTimeoutMs;
  }

  async create(s: NewSession): Promise<ApiSession> {
    const now = this.core.clock.now().toISOString();
    const id = newId();
    await this.core.store.runSql(
      `INSERT INTO api_sessions (id, token, identity_id, authenticator_id, ip_address, config_types, is_mfa_required,
         is_mfa_complete, is_ext_jwt_required, kind, expires_at, last_activity_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)`,
      id,
      newToken(),
      s.identityId,
      s.authenticatorId,
      s.ipAddress,
      JSON.stringify(s.configTypes),
      s.isMfaRequired,
      s.isExtJwtRequired ?? false,
      s.oidc ? 'oidc' : 'legacy',
      s.oidc ? s.oidc.expiresAt.toISOString() : null,
      now,
      now,
      now,
    );
    return (await getRow(this.core.store, API_SESSION, 'SELECT * FROM api_sessions WHERE id = ?', id))!;
  }

  lastActivity(row: Pick<ApiSession, 'id' | 'last_activity_at'>): Date {
    const cached = this.activity.get(row.id);
    const stored = Date.parse(row.last_activity_at);
    return new Date(Math.max(cached ?? 0, stored));
  }

  /** When the session ends: after inactivity (legacy), at its stored end (OIDC; a JWT-resolved view: the token's). */
  expiresAt(row: Pick<ApiSession, 'id' | 'last_activity_at' | 'expires_at' | 'token_expires_at'>): Date {
    if (row.token_expires_at) return new Date(row.token_expires_at);
    if (row.expires_at) return new Date(row.expires_at);
    return new Date(this.lastActivity(row).getTime() + this.timeoutMs);
  }

  async authQueries(row: ApiSession): Promise<AuthQuery[]> {
    const out: AuthQuery[] = [];
    if (row.is_mfa_required && !row.is_mfa_complete) {
      out.push({
        typeId: 'MFA',
        provider: this.core.config.brand,
        format: 'numeric',
        httpMethod: 'POST',
        httpUrl: './authenticate/mfa',
        minLength: 4,
        maxLength: 8,
        isTotpEnrolled: await isTotpEnrolled(this.core, row.identity_id),
      });
    }
    if (row.is_ext_jwt_required && !row.is_ext_jwt_complete) out.push(...(await extJwtAuthQueries(this.core, row)));
    return out;
  }

  isPartial(row: ApiSession): boolean {
    return (row.is_mfa_required && !row.is_mfa_complete) || (row.is_ext_jwt_required && !row.is_ext_jwt_complete);
  }

  /**
   * Resolves a token to a live session and its caller; expired sessions are removed. The token is a legacy session's
   * opaque token, or a JWT access token of an OIDC session (signature, expiry and JTI revocation checked; the
   * session it names must still exist): the session is then returned with that token and the token's expiry, as
   * OpenZiti shows a JWT API session. What the two rows give is kept while the store's write generation is unchanged
   * (only the session's activity time changes meanwhile, and that is tracked here), so a burst of requests on one
   * session reads the database once.
   */
  resolve(token: string): Promise<Resolved | undefined> {
    return this.lookup(token, false);
  }

  /** `reread`: the rows from the database, not the kept ones */
  private async lookup(token: string, reread: boolean): Promise<Resolved | undefined> {
    const store = this.core.store;
    if (this.resolvedGeneration !== store.generation) {
      this.resolved.clear();
      this.resolvedGeneration = store.generation;
    }
    let found = store.open && !reread ? this.resolved.get(token) : undefined;
    if (!found) {
      const generation = store.generation;
      const jwt = isJwt(token);
      const claims = jwt ? await verifyOidcToken(this.core, token, TOKEN_TYPE_ACCESS) : undefined;
      if (jwt && !claims) return undefined;
      const session = claims
        ? await getRow(store, API_SESSION, "SELECT * FROM api_sessions WHERE id = ? AND identity_id = ? AND kind = 'oidc'", claims.z_asid, claims.sub)
        : await getRow(store, API_SESSION, "SELECT * FROM api_sessions WHERE token = ? AND kind <> 'oidc'", token);
      if (!session) return undefined;
      const identity = await getRow(
        store,
        CALLER_IDENTITY,
        `SELECT ${selectList(CALLER_IDENTITY)} FROM identities WHERE id = ?`,
        session.identity_id,
      );
      found = {
        session,
        identity,
        caller: identity && callerOf(identity, session, this.isPartial(session)),
        tokenExpiresAt: claims && claims.exp * 1000,
      };
      // kept only when no write came in between (the rows are then what the database holds at this generation)
      if (store.generation === generation && this.resolvedGeneration === generation) {
        if (this.resolved.size >= 10_000) this.resolved.clear();
        this.resolved.set(token, found);
      }
    }
    const { session, identity, caller, tokenExpiresAt } = found;
    const now = this.core.clock.now();
    // an expired access token ends nothing: the session lives on for its refresh tokens
    if (tokenExpiresAt !== undefined && tokenExpiresAt <= now.getTime()) return undefined;
    if (!identity || isDisabled(identity, now)) {
      await this.remove(session.id);
      return undefined;
    }
    if (this.expiresAt(session) <= now) {
      // expired as this node saw it: deleted only if the database agrees (another node may have kept it active)
      if (await this.removeIdle(session.id, now)) return undefined;
      this.resolved.delete(token);
      return reread ? undefined : this.lookup(token, true);
    }
    await this.touch(session, now);
    if (tokenExpiresAt === undefined) return { session, identity, caller: caller! };
    const view: ApiSession = Object.assign(decodeRow(API_SESSION, session), { token, token_expires_at: new Date(tokenExpiresAt).toISOString() });
    return { session: view, identity, caller: caller! };
  }

  /**
   * Whether the session with this id is still live (an edge router connection of an OIDC session stays while its
   * session does, whatever its access token's expiry; SDKs send the router each refreshed token).
   */
  async isLive(id: string): Promise<boolean> {
    const session = await getRow(this.core.store, API_SESSION, 'SELECT * FROM api_sessions WHERE id = ?', id);
    if (!session) return false;
    const identity = await getRow(this.core.store, DISABLED, 'SELECT disabled, disabled_until FROM identities WHERE id = ?', session.identity_id);
    const now = this.core.clock.now();
    if (!identity || isDisabled(identity, now)) return false;
    return this.expiresAt(session) > now || !(await this.removeIdle(id, now));
  }

  /**
   * Deletes a session whose stored activity is past the timeout (and whose activity here is too), or an OIDC session
   * past its end; true if it went.
   */
  private async removeIdle(id: string, now: Date): Promise<boolean> {
    const cutoff = new Date(now.getTime() - this.timeoutMs).toISOString();
    const gone = await this.core.store.tx(async () => {
      await this.keepActivity([id]);
      const r = await this.core.store.runSql(
        'DELETE FROM api_sessions WHERE id = ? AND ((expires_at IS NULL AND last_activity_at <= ?) OR expires_at <= ?)',
        id,
        cutoff,
        now.toISOString(),
      );
      return r.changes > 0;
    });
    if (gone) this.activity.delete(id);
    return gone;
  }

  /**
   * Writes the activity seen here that the rows do not hold yet (it is written through at most once a second), just
   * before they are deleted: the trigger of migration 019 keeps a deleted session's last activity as its identity's
   * last seen time. Inside the delete's transaction. A session idle past the timeout stays so: its activity here is
   * no newer than the check that found it idle.
   */
  private async keepActivity(ids: string[]): Promise<void> {
    for (const id of ids) {
      const t = this.activity.get(id);
      if (t === undefined) continue;
      const at = new Date(t).toISOString();
      await this.core.store.touchSql('UPDATE api_sessions SET last_activity_at = ? WHERE id = ? AND last_activity_at < ?', at, id, at);
    }
  }

  private readonly resolved = new Map<
    string,
    { session: ApiSession; identity: CallerIdentity | undefined; caller: Caller | undefined; tokenExpiresAt: number | undefined }
  >();
  private resolvedGeneration = -1;

  private async touch(session: ApiSession, now: Date): Promise<void> {
    const id = session.id;
    const t = now.getTime();
    this.activity.set(id, t);
    if (t - Date.parse(session.last_activity_at) >= 1000) {
      // only the session views show it, and they are never reused: no cached reply goes stale
      await this.core.store.touchSql('UPDATE api_sessions SET last_activity_at = ? WHERE id = ?', now.toISOString(), id);
      session.last_activity_at = now.toISOString();
    }
  }

  async remove(id: string): Promise<void> {
    await this.core.store.tx(async () => {
      await this.keepActivity([id]);
      await this.core.store.runSql('DELETE FROM api_sessions WHERE id = ?', id);
    });
    this.activity.delete(id);
  }

  async removeForIdentity(identityId: string): Promise<void> {
    await this.core.store.tx(async () => {
      const ids = (await this.core.store.allSql<{ id: string }>('SELECT id FROM api_sessions WHERE identity_id = ?', identityId)).map((r) => r.id);
      await this.keepActivity(ids);
      await this.core.store.runSql('DELETE FROM api_sessions WHERE identity_id = ?', identityId);
      for (const id of ids) this.activity.delete(id);
    });
  }

  /** Deletes sessions idle past the timeout, and OIDC sessions past their end (in SQL; cached activity newer than the row is honoured). */
  async sweep(): Promise<void> {
    const now = this.core.clock.now();
    const cutoff = new Date(now.getTime() - this.timeoutMs).toISOString();
    const stale = await allRows(
      this.core.store,
      STALE,
      'SELECT id, last_activity_at, expires_at FROM api_sessions WHERE (expires_at IS NULL AND last_activity_at < ?) OR expires_at < ?',
      cutoff,
      now.toISOString(),
    );
    // each deleted only if still idle (another node may have touched it since the select)
    for (const row of stale) if (this.expiresAt(row) <= this.core.clock.now()) await this.removeIdle(row.id, this.core.clock.now());
  }

  /** The session as returned by authenticate and current-api-session: with token and expiry. */
  async view(ctx: Ctx, row: ApiSession): Promise<ApiObject> {
    const item = (await present(ctx, apiSessions, [row]))[0]!;
    const expiresAt = this.expiresAt(row);
    item.expiresAt = expiresAt.toISOString();
    item.expirationSeconds = Math.max(0, Math.round((expiresAt.getTime() - this.core.clock.now().getTime()) / 1000));
    return item;
  }
}

export function callerOf(
  identity: Pick<LoginIdentity, 'id' | 'name' | 'is_admin' | 'permissions'>,
  session: { id: string } | undefined,
  partial = false,
): Caller {
  return {
    identityId: identity.id,
    identityName: identity.name,
    isAdmin: identity.is_admin,
    permissions: new Set(identity.permissions ?? []),
    apiSessionId: session?.id,
    partial,
  };
}

/** The EXT-JWT auth query of a session whose auth policy requires a secondary JWT from a signer. */
export async function extJwtAuthQueries(core: Core, session: { identity_id: string }): Promise<AuthQuery[]> {
  const signer = await getRow(
    core.store,
    SIGNER_QUERY,
    `SELECT s.id, s.external_auth_url, s.client_id, s.scopes FROM identities i
       JOIN auth_policies p ON p.id = i.auth_policy_id
       JOIN external_jwt_signers s ON s.id = ${core.store.sql.jsonExtract('p.secondary_json', '$.requireExtJwtSigner')}
     WHERE i.id = ?`,
    session.identity_id,
  );
  if (!signer) return [];
  return [
    {
      typeId: 'EXT-JWT',
      provider: 'url',
      httpUrl: signer.external_auth_url ?? undefined,
      id: signer.id,
      clientId: signer.client_id ?? undefined,
      scopes: signer.scopes,
    },
  ];
}

const SIGNER_QUERY = rowShape({ id: 'string', external_auth_url: 'string?', client_id: 'string?', scopes: json<string[]>() });

/** The API sessions of a core (login, resolution of tokens, expiry). */
export const apiSessionsOf = perCore((core) => new ApiSessionService(core));
