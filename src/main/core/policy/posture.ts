import type { Core } from '../core';
import { ApiError } from '../errors';
import type { Store } from '../store/db';
import { allRows, json, rowShape } from '../store/rows';
import {
  checkPasses,
  emptyPostureData,
  failureOf,
  POSTURE_CHECK,
  type EvaluationInput,
  type MfaState,
  type PostureCheck,
  type PostureData,
} from './postureEvaluation';
import { isTotpEnrolled, type ApiSession } from '../auth/index';

/** Failed session requests kept per identity for `/identities/{id}/failed-service-requests`. */
export const MAX_FAILURES_PER_IDENTITY = 50;

export async function loadPostureData(store: Store, identityId: string): Promise<PostureData> {
  const row = await store.getSql<{ data: string }>('SELECT data FROM posture_data WHERE identity_id = ?', identityId);
  return row ? { ...emptyPostureData(), ...(JSON.parse(row.data) as PostureData) } : emptyPostureData();
}

export async function savePostureData(core: Core, identityId: string, data: PostureData): Promise<void> {
  await core.store.runSql(
    `INSERT INTO posture_data (identity_id, data, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (identity_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`,
    identityId,
    JSON.stringify(data),
    core.clock.now().toISOString(),
  );
}

/**
 * The MFA state of an API session. Seam with the MFA module: it marks a session `is_mfa_complete` and records
 * `mfa_passed_at` when a TOTP or recovery code is proven; an identity without a verified TOTP enrollment never passes.
 */
export async function mfaStateOf(
  core: Core,
  apiSession: Pick<ApiSession, 'id' | 'identity_id' | 'is_mfa_complete' | 'mfa_passed_at' | 'updated_at'>,
): Promise<MfaState> {
  const passed = apiSession.is_mfa_complete && (await isTotpEnrolled(core, apiSession.identity_id));
  const at = apiSession.mfa_passed_at ?? apiSession.updated_at;
  return { apiSessionId: apiSession.id, passedAt: passed ? at : null };
}

export async function evaluationInput(core: Core, identityId: string, apiSession: ApiSession | undefined): Promise<EvaluationInput> {
  return {
    data: await loadPostureData(core.store, identityId),
    mfa: apiSession ? await mfaStateOf(core, apiSession) : { apiSessionId: '', passedAt: null },
    now: core.clock.now(),
  };
}

export interface PolicyChecks {
  policyId: string;
  policyName: string;
  type: 'Dial' | 'Bind';
  serviceClass: number;
  checks: PostureCheck[];
}

const POLICY_CHECK = rowShape({ ...POSTURE_CHECK, policy_id: 'string' });
const FAILURE = rowShape({
  api_session_id: 'string',
  policy_failures: json<unknown>(),
  service_id: 'string',
  service_name: 'string',
  session_type: 'string',
  at: 'datetime',
});

/** Whether any posture check exists (when none does, OpenZiti shows placeholder posture queries). */
export const anyPostureChecks = async (store: Store): Promise<boolean> => !!(await store.getSql('SELECT 1 FROM posture_checks LIMIT 1'));

/**
 * The service policies through which an identity class reaches each of the given service classes, with the posture
 * checks each one requires.
 */
export async function policyPostureChecks(store: Store, identityClass: number | undefined, serviceClasses: number[]): Promise<PolicyChecks[]> {
  if (identityClass === undefined || !serviceClasses.length) return [];
  const policies = await store.allSql<{ id: string; name: string; type: 'Dial' | 'Bind'; service_class: number }>(
    `SELECT p.id, p.name, p.type, b.class_id AS service_class FROM class_policies a
     JOIN class_policies b ON b.policy_id = a.policy_id AND b.kind = 'service' AND b.class_id IN ${store.sql.jsonValues('?', 'integer')}
     JOIN service_policies p ON p.id = a.policy_id
     WHERE a.class_id = ?
     ORDER BY p.name, p.id`,
    JSON.stringify(serviceClasses),
    identityClass,
  );
  const ids = [...new Set(policies.map((p) => p.id))];
  const checks = new Map<string, PostureCheck[]>();
  for (const c of await allRows(
    store,
    POLICY_CHECK,
    `SELECT cp.policy_id, pc.* FROM class_policies cp
     JOIN role_class_members m ON m.kind = 'posture-check' AND m.class_id = cp.class_id
     JOIN posture_checks pc ON pc.id = m.entity_id
     WHERE cp.kind = 'posture-check' AND cp.policy_id IN ${store.sql.jsonValues()}
     ORDER BY pc.name`,
    JSON.stringify(ids),
  )) {
    const list = checks.get(c.policy_id) ?? [];
    list.push(c);
    checks.set(c.policy_id, list);
  }
  return policies.map((p) => ({ policyId: p.id, policyName: p.name, type: p.type, serviceClass: p.service_class, checks: checks.get(p.id) ?? [] }));
}

export interface PostureOutcome {
  passed: boolean;
  /** policies of the requested type whose checks all pass */
  passingPolicyIds: string[];
  failure?: Record<string, unknown>;
}

/** OpenZiti's session posture rule: some policy of the session's type must have all of its checks passing. */
export function evaluateGrant(policies: PolicyChecks[], type: string, input: EvaluationInput): PostureOutcome {
  const relevant = policies.filter((p) => p.type === type);
  const cache = new Map<string, boolean>();
  const passes = (c: PostureCheck) => {
    if (!cache.has(c.id)) cache.set(c.id, checkPasses(c, input));
    return cache.get(c.id)!;
  };
  const passing = relevant.filter((p) => p.checks.every(passes));
  if (passing.length || !relevant.length) return { passed: true, passingPolicyIds: passing.map((p) => p.policyId) };
  return {
    passed: false,
    passingPolicyIds: [],
    failure: {
      policyFailures: relevant.map((p) => ({
        policyId: p.policyId,
        policyName: p.policyName,
        checks: p.checks.filter((c) => !passes(c)).map((c) => failureOf(c, input)),
      })),
    },
  };
}

/** Records a refused session request and answers 409 INVALID_POSTURE with the failing checks per policy. */
export async function postureFailure(
  core: Core,
  identityId: string,
  record: {
    apiSessionId: string;
    serviceId: string;
    serviceName: string;
    sessionType: string;
    policyFailures: Array<{ policyId: string; checks: unknown[] }>;
  },
): Promise<ApiError> {
  const store = core.store;
  await store.runSql(
    `INSERT INTO posture_failures (identity_id, api_session_id, service_id, service_name, session_type, policy_failures, at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    identityId,
    record.apiSessionId,
    record.serviceId,
    record.serviceName,
    record.sessionType,
    JSON.stringify(record.policyFailures),
    core.clock.now().toISOString(),
  );
  await store.runSql(
    `DELETE FROM posture_failures WHERE identity_id = ? AND id NOT IN
       (SELECT id FROM posture_failures WHERE identity_id = ? ORDER BY id DESC LIMIT ?)`,
    identityId,
    identityId,
    MAX_FAILURES_PER_IDENTITY,
  );
  const byPolicy = Object.fromEntries(record.policyFailures.map((f) => [f.policyId, f.checks]));
  return new ApiError('INVALID_POSTURE', 409, 'Posture response data is missing or wrong', {
    field: 'postureChecks',
    reason: `Failed to pass posture checks for service policies: [${Object.keys(byPolicy).join(' ')}]`,
    value: byPolicy,
  });
}

/** `/identities/{id}/failed-service-requests`, newest first. */
export async function failedServiceRequests(store: Store, identityId: string): Promise<Array<Record<string, unknown>>> {
  return (await allRows(store, FAILURE, 'SELECT * FROM posture_failures WHERE identity_id = ? ORDER BY id DESC', identityId)).map((r) => ({
    apiSessionId: r.api_session_id,
    policyFailures: r.policy_failures,
    serviceId: r.service_id,
    serviceName: r.service_name,
    sessionType: r.session_type,
    when: r.at,
  }));
}
