import { EXTERNAL_ID_AUTHENTICATOR } from '../auth/index';
import { ROLE_KINDS } from '../kinds';
import { perCore, type Core } from '../core';
import { ApiError } from '../errors';
import { syncRoleAttributes } from '../entities/roleAttributes';
import { newId } from '../ids';
import { controllerId, OFFLINE_AFTER_MS } from './controllerNodes';
import { quoteIdent as q, type Row, type Store } from '../store/db';
import { getRow, json, rowShape } from '../store/rows';
import { authPolicies } from '../entities/authPolicies';

/** The columns a repair reads back (only where the check found them valid JSON). */
const ATTRIBUTES = rowShape({ id: 'string', role_attributes: json<string[]>() });
const CONFIGS = rowShape({ configs: json<string[]>() });
const POLICY_JSON = rowShape({ primary_json: authPolicies.shape.primary_json, secondary_json: authPolicies.shape.secondary_json });
/** One inconsistency; `fix` repairs it (run in its own transaction). */
export interface IntegrityFinding {
  description: string;
  fix?: () => Promise<void>;
}
/** A check inspects the store and reports inconsistencies (the list: `DataIntegrity.checks`). */
export type IntegrityCheck = (store: Store) => Promise<IntegrityFinding[]>;

export interface IntegrityResults {
  inProgress: boolean;
  fixingErrors: boolean;
  tooManyErrors: boolean;
  startTime: string | null;
  endTime: string | null;
  error: string | null;
  results: Array<{ description: string; fixed: boolean }>;
}

/** A run stops collecting after this many findings (and says so with `tooManyErrors`). */
export const MAX_FINDINGS = 1000;

/** The settings row that holds the latest run (its state, and which node runs it), shared by every node. */
const STATE_KEY = 'integrity_run';

interface StoredRun extends IntegrityResults {
  /** "<controller id>/<process run id>" of the node running or that ran it */
  owner: string;
}

const IDLE: IntegrityResults = {
  inProgress: false,
  fixingErrors: false,
  tooManyErrors: false,
  startTime: null,
  endTime: null,
  error: null,
  results: [],
};

/**
 * Data integrity check and fix: one run at a time across both, and across every node on one database (a second
 * start is 429). Runs happen after the starting request has been answered (202). The latest run's state is kept in
 * the settings table, so any node answers for it; a run whose node died (its heartbeat stopped) counts as ended.
 */
export class DataIntegrity {
  /** every check, in run order (a module with tables of its own adds its check here) */
  readonly checks: readonly IntegrityCheck[] = [danglingReferences, roleAttributeLinks, serviceConfigLinks, orphanedApiSessions, authPolicySigners];
  /** How a run is started; tests hold runs to observe `inProgress`. */
  schedule: (run: () => Promise<void>) => void = (run) => void setImmediate(() => void run());
  /** this process's run while it goes on (its findings so far) */
  private running: StoredRun | undefined;
  private readonly me = newId();
  private closed = false;

  constructor(private readonly core: Core) {}

  async inProgress(): Promise<boolean> {
    return (await this.results()).inProgress;
  }

  async start(fix: boolean): Promise<void> {
    const owner = `${await controllerId(this.core)}/${this.me}`;
    const state: StoredRun = {
      ...IDLE,
      inProgress: true,
      fixingErrors: fix,
      startTime: this.core.clock.now().toISOString(),
      results: [],
      owner,
    };
    try {
      await this.core.store.tx(async () => {
        if ((await this.stored()).inProgress) {
          throw new ApiError('RATE_LIMITED', 429, 'A data integrity check or fix is already in progress; only one runs at a time', undefined, {
            'retry-after': '1',
          });
        }
        await this.save(state);
        // (set with the write: a start or a results read of this process coming meanwhile sees the run as alive)
        this.running = state;
      });
    } catch (e) {
      if (this.running === state) this.running = undefined;
      throw e;
    }
    this.schedule(() => this.run(state, fix));
  }

  async results(): Promise<IntegrityResults> {
    const { owner: _owner, ...state } = this.running ?? (await this.stored());
    return { ...state, results: [...state.results] };
  }

  close(): void {
    this.closed = true;
  }

  /** The latest run as the database has it; one whose node is gone is reported ended. */
  private async stored(): Promise<StoredRun> {
    const row = await this.core.store.getSql<{ value: string }>('SELECT value FROM settings WHERE key = ?', STATE_KEY);
    if (!row) return { ...IDLE, owner: '' };
    const state = JSON.parse(row.value) as StoredRun;
    if (state.inProgress && !(await this.alive(state.owner))) {
      return { ...state, inProgress: false, error: state.error ?? 'the controller running it stopped before it finished' };
    }
    return state;
  }

  /** Whether the node (and process) that owns a run still runs it. */
  private async alive(owner: string): Promise<boolean> {
    const [node, run] = owner.split('/');
    if (run === this.me) return !!this.running;
    if (node === (await controllerId(this.core))) return false; // this node restarted since
    const seen = await this.core.store.getSql<{ updated_at: string; is_online: number }>(
      'SELECT updated_at, is_online FROM controllers WHERE id = ?',
      node,
    );
    return !!seen?.is_online && Date.parse(seen.updated_at) >= this.core.clock.now().getTime() - OFFLINE_AFTER_MS;
  }

  private async save(state: StoredRun): Promise<void> {
    await this.core.store.runSql(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      STATE_KEY,
      JSON.stringify(state),
    );
  }

  private async run(state: StoredRun, fix: boolean): Promise<void> {
    try {
      if (this.closed) throw new Error('the controller is shutting down');
      for (const check of this.checks) {
        for (const finding of await check(this.core.store)) {
          if (state.results.length >= MAX_FINDINGS) {
            state.tooManyErrors = true;
            break;
          }
          state.results.push({ description: finding.description, fixed: fix && !!finding.fix && (await this.tryFix(finding)) });
        }
        if (state.tooManyErrors) break;
      }
    } catch (e) {
      state.error = (e as Error).message;
      this.core.log.error({ err: e }, 'data integrity run failed');
    } finally {
      state.endTime = this.core.clock.now().toISOString();
      state.inProgress = false;
      try {
        // only over its own run: a node judged dead meanwhile (its heartbeat lagged) may have been followed by another run
        await this.core.store.tx(async () => {
          const row = await this.core.store.getSql<{ value: string }>('SELECT value FROM settings WHERE key = ?', STATE_KEY);
          if (row && (JSON.parse(row.value) as StoredRun).owner !== state.owner) {
            this.core.log.warn({ owner: state.owner }, 'a newer data integrity run has started; the results of this one are not recorded');
            return;
          }
          await this.save(state);
        });
      } catch (e) {
        this.core.log.error({ err: e }, 'could not record the data integrity run');
      }
      this.running = undefined;
      this.core.log.info({ findings: state.results.length, fix }, 'data integrity run finished');
    }
  }

  private async tryFix(finding: IntegrityFinding): Promise<boolean> {
    try {
      await this.core.store.tx(() => finding.fix!());
      return true;
    } catch (e) {
      this.core.log.warn({ err: e, finding: finding.description }, 'could not fix a data integrity finding');
      return false;
    }
  }
}

const LIMIT = MAX_FINDINGS + 1;

/** Required references that a repair points at a system default rather than deleting the row. */
const DEFAULT_TARGETS: Record<string, unknown> = { 'identities.auth_policy_id': 'default', 'identities.type_id': 'Default' };

/**
 * Every foreign key of every table (also other modules' tables) whose row points at nothing. Repair: a system
 * default where there is one, NULL for an optional reference, deletion where the parent's deletion would have
 * cascaded; anything else is reported for manual repair.
 */
async function danglingReferences(store: Store): Promise<IntegrityFinding[]> {
  const out: IntegrityFinding[] = [];
  for (const table of await store.tables()) {
    const info = await store.columns(table);
    const pk = info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    const keyCols = pk.length ? pk : ['rowid'];
    for (const fk of await store.foreignKeys(table)) {
      if (fk.composite) continue; // none in this schema
      const parentPk = fk.to;
      const rows = await store.allSql<Row>(
        `SELECT ${keyCols.map((c, i) => `c.${q(c)} AS k${i}`).join(', ')}, c.${q(fk.from)} AS v FROM ${q(table)} c
         WHERE c.${q(fk.from)} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${q(fk.table)} p WHERE p.${q(parentPk)} = c.${q(fk.from)})
         LIMIT ${LIMIT}`,
      );
      const nullable = !info.find((c) => c.name === fk.from)?.notnull;
      const target = DEFAULT_TARGETS[`${table}.${fk.from}`];
      for (const row of rows) {
        const key = keyCols.map((_, i) => row[`k${i}`]);
        // still dangling when the repair runs (not repaired meanwhile)
        const where = `${keyCols.map((c) => `${q(c)} = ?`).join(' AND ')}
          AND NOT EXISTS (SELECT 1 FROM ${q(fk.table)} p WHERE p.${q(parentPk)} = ${q(table)}.${q(fk.from)})`;
        const label = `${table} ${key.join('/')}`;
        let description = `${label}: ${fk.from} references missing ${fk.table} '${String(row.v)}'`;
        let fix: (() => Promise<void>) | undefined;
        if (target !== undefined) {
          description += `; repair sets it to '${String(target)}'`;
          fix = async () => void (await store.runSql(`UPDATE ${q(table)} SET ${q(fk.from)} = ? WHERE ${where}`, target, ...key));
        } else if (fk.cascade) {
          description += '; repair deletes the orphaned row';
          fix = async () => void (await store.runSql(`DELETE FROM ${q(table)} WHERE ${where}`, ...key));
        } else if (nullable) {
          description += '; repair clears the reference';
          fix = async () => void (await store.runSql(`UPDATE ${q(table)} SET ${q(fk.from)} = NULL WHERE ${where}`, ...key));
        } else {
          description += '; needs manual repair';
        }
        out.push({ description, fix });
      }
    }
  }
  return out;
}

/**
 * Entity kinds with a `role_attributes` JSON column mirrored in the role_attributes table: every role kind's table (the
 * registered type claiming a kind is declared on it: defineResource checks).
 */
const ROLE_TABLES = Object.fromEntries(Object.entries(ROLE_KINDS).map(([kind, facts]) => [kind, facts.table]));

async function tableHas(store: Store, table: string, column: string): Promise<boolean> {
  return (await store.columns(table)).some((c) => c.name === column);
}

/** The role_attributes index against the entities' JSON copies: orphaned links, missing and stale attributes. */
async function roleAttributeLinks(store: Store): Promise<IntegrityFinding[]> {
  const out: IntegrityFinding[] = [];
  for (const [type, table] of Object.entries(ROLE_TABLES)) {
    if (!(await tableHas(store, table, 'role_attributes'))) continue;
    for (const r of await store.allSql<Row>(
      `SELECT r.entity_id, r.attr FROM role_attributes r WHERE r.entity_type = ?
         AND NOT EXISTS (SELECT 1 FROM ${q(table)} t WHERE t.id = r.entity_id) LIMIT ${LIMIT}`,
      type,
    )) {
      out.push({
        description: `role attribute '${String(r.attr)}' links missing ${type} '${String(r.entity_id)}'; repair deletes the link`,
        fix: async () =>
          void (await store.runSql(
            `DELETE FROM role_attributes WHERE entity_type = ? AND entity_id = ? AND attr = ?
               AND NOT EXISTS (SELECT 1 FROM ${q(table)} t WHERE t.id = ?)`,
            type,
            r.entity_id,
            r.attr,
            r.entity_id,
          )),
      });
    }
    for (const t of await store.allSql<Row>(
      `SELECT id, role_attributes FROM ${q(table)} WHERE NOT ${store.sql.jsonValid('role_attributes')} LIMIT ${LIMIT}`,
    )) {
      out.push({
        description: `${type} '${String(t.id)}' has malformed roleAttributes; repair rebuilds them from the role attribute index`,
        fix: async () => {
          const attrs = await store.allSql<{ attr: string }>(
            'SELECT attr FROM role_attributes WHERE entity_type = ? AND entity_id = ? ORDER BY attr',
            type,
            t.id,
          );
          await store.runSql(
            `UPDATE ${q(table)} SET role_attributes = ? WHERE id = ? AND NOT ${store.sql.jsonValid('role_attributes')}`,
            JSON.stringify(attrs.map((a) => a.attr)),
            t.id,
          );
        },
      });
    }
    for (const t of await store.allSql<Row>(
      `SELECT t.id, t.role_attributes FROM ${q(table)} t WHERE ${store.sql.jsonValid('t.role_attributes')} AND (
         EXISTS (SELECT 1 FROM ${store.sql.jsonEach('t.role_attributes', 'j')} WHERE NOT EXISTS
           (SELECT 1 FROM role_attributes r WHERE r.entity_type = ? AND r.entity_id = t.id AND r.attr = j.value))
         OR EXISTS (SELECT 1 FROM role_attributes r WHERE r.entity_type = ? AND r.entity_id = t.id AND NOT EXISTS
           (SELECT 1 FROM ${store.sql.jsonEach('t.role_attributes', 'j')} WHERE j.value = r.attr))) LIMIT ${LIMIT}`,
      type,
      type,
    )) {
      out.push({
        description: `${type} '${String(t.id)}': the role attribute index differs from its roleAttributes; repair re-indexes them`,
        fix: async () => {
          // the attributes as they are now (the entity may have been updated or deleted since the check)
          const now = await getRow(
            store,
            ATTRIBUTES,
            `SELECT id, role_attributes FROM ${q(table)} WHERE id = ? AND ${store.sql.jsonValid('role_attributes')}`,
            t.id,
          );
          if (now) await syncRoleAttributes(store, type, now.id, now.role_attributes);
        },
      });
    }
  }
  return out;
}

/** services.configs (ordered copy) against the service_configs links. */
async function serviceConfigLinks(store: Store): Promise<IntegrityFinding[]> {
  if (!(await tableHas(store, 'services', 'configs'))) return [];
  return (
    await store.allSql<Row>(
      `SELECT s.id, s.configs FROM services s WHERE ${store.sql.jsonValid('s.configs')} AND (
       EXISTS (SELECT 1 FROM ${store.sql.jsonEach('s.configs', 'j')} WHERE NOT EXISTS
         (SELECT 1 FROM service_configs sc WHERE sc.service_id = s.id AND sc.config_id = j.value))
       OR EXISTS (SELECT 1 FROM service_configs sc WHERE sc.service_id = s.id AND NOT EXISTS
         (SELECT 1 FROM ${store.sql.jsonEach('s.configs', 'j')} WHERE j.value = sc.config_id))) LIMIT ${LIMIT}`,
    )
  ).map((s) => ({
    description: `service '${String(s.id)}': its configs list and its config links differ; repair joins them (dropping missing configs)`,
    fix: async () => {
      // the service as it is now (its configs may have been changed or it deleted since the check)
      const now = await getRow(store, CONFIGS, `SELECT configs FROM services WHERE id = ? AND ${store.sql.jsonValid('configs')}`, s.id);
      if (!now) return;
      const listed: string[] = [];
      for (const id of now.configs) if (await store.getSql('SELECT 1 FROM configs WHERE id = ?', id)) listed.push(id);
      const linked = (await store.allSql<{ config_id: string }>('SELECT config_id FROM service_configs WHERE service_id = ?', s.id)).map(
        (r) => r.config_id,
      );
      const all = [...new Set([...listed, ...linked])];
      await store.runSql('DELETE FROM service_configs WHERE service_id = ?', s.id);
      for (const id of all) await store.runSql('INSERT INTO service_configs (service_id, config_id) VALUES (?, ?)', s.id, id);
      await store.runSql('UPDATE services SET configs = ? WHERE id = ?', JSON.stringify(all), s.id);
    },
  }));
}

/**
 * API sessions whose authenticator (for ext-jwt logins: signer) is gone: there is no foreign key to cascade. CA
 * externalId certificate logins have no authenticator row (EXTERNAL_ID_AUTHENTICATOR).
 */
async function orphanedApiSessions(store: Store): Promise<IntegrityFinding[]> {
  return (
    await store.allSql<Row>(
      `SELECT id, authenticator_id FROM api_sessions s WHERE s.authenticator_id IS NOT NULL AND s.authenticator_id NOT IN ('', ?)
       AND NOT EXISTS (SELECT 1 FROM authenticators a WHERE a.id = s.authenticator_id)
       AND NOT EXISTS (SELECT 1 FROM external_jwt_signers j WHERE j.id = s.authenticator_id) LIMIT ${LIMIT}`,
      EXTERNAL_ID_AUTHENTICATOR,
    )
  ).map((s) => ({
    description: `api session '${String(s.id)}' was created by missing authenticator '${String(s.authenticator_id)}'; repair ends the session`,
    fix: async () => void (await store.runSql('DELETE FROM api_sessions WHERE id = ?', s.id)),
  }));
}

/** Auth policies naming external JWT signers that no longer exist. */
async function authPolicySigners(store: Store): Promise<IntegrityFinding[]> {
  const out: IntegrityFinding[] = [];
  const signer = store.sql.jsonExtract('p.secondary_json', '$.requireExtJwtSigner');
  const rows = await store.allSql<Row>(
    `SELECT p.id, p.primary_json, p.secondary_json FROM auth_policies p WHERE
       EXISTS (SELECT 1 FROM ${store.sql.jsonEach('p.primary_json', 'j', '$.extJwt.allowedSigners')}
               WHERE NOT EXISTS (SELECT 1 FROM external_jwt_signers s WHERE s.id = j.value))
       OR (${signer} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM external_jwt_signers s WHERE s.id = ${signer}))
     LIMIT ${LIMIT}`,
  );
  for (const p of rows) {
    out.push({
      description: `auth policy '${String(p.id)}' names external JWT signers that do not exist; repair removes them`,
      fix: async () => {
        const exists = async (id: string) => !!(await store.getSql('SELECT 1 FROM external_jwt_signers WHERE id = ?', id));
        // the policy as it is now: an edit made since the check is kept
        const now = await getRow(store, POLICY_JSON, 'SELECT primary_json, secondary_json FROM auth_policies WHERE id = ?', p.id);
        if (!now) return;
        const { primary_json: primary, secondary_json: secondary } = now;
        const allowed: string[] = [];
        for (const id of primary.extJwt.allowedSigners ?? []) if (await exists(id)) allowed.push(id);
        primary.extJwt.allowedSigners = allowed;
        if (secondary.requireExtJwtSigner && !(await exists(secondary.requireExtJwtSigner))) secondary.requireExtJwtSigner = null;
        await store.runSql(
          'UPDATE auth_policies SET primary_json = ?, secondary_json = ? WHERE id = ?',
          JSON.stringify(primary),
          JSON.stringify(secondary),
          p.id,
        );
      },
    });
  }
  return out;
}

/** The data integrity runs of a core (one at a time). */
export const integrityOf = perCore((core) => new DataIntegrity(core));
