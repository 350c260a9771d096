import { z } from 'zod';
import { allRows, json, rowShape } from '../store/rows';
import { API_SESSION, type ApiSession } from '../auth/index';
import { requirePermission } from '../permissions';
import type { Core } from '../core';
import type { Ctx } from '../context';
import { identities } from './identities';
import { requireDecoded } from '../entities/resource';
import { validationError } from '../errors';
import { parseInput } from '../validation';
import { classesOf } from './access';
import { AccessChanges } from './changes';
import { classOf } from './classes';
import { evaluateGrant, loadPostureData, mfaStateOf, policyPostureChecks, savePostureData } from './posture';
import { cleanHex, MFA_PROMPT_GRACE_SECONDS, mfaTimeout, NO_TIMEOUT, type PostureCheckDetails, type PostureData } from './postureEvaluation';

const strings = z.array(z.string());
const RESPONSES = {
  DOMAIN: z.object({ domain: z.string() }),
  OS: z.object({ type: z.string(), version: z.string(), build: z.string().optional() }),
  MAC: z.object({ macAddresses: strings }),
  PROCESS: z.object({
    path: z.string().optional(),
    isRunning: z.boolean().optional(),
    hash: z.string().optional(),
    signerFingerprints: strings.optional(),
  }),
  ENDPOINT_STATE: z.object({ woken: z.boolean().optional(), unlocked: z.boolean().optional() }),
} as const;
const TYPES = ['DOMAIN', 'OS', 'MAC', 'PROCESS', 'PROCESS_MULTI', 'ENDPOINT_STATE'] as const;
const head = z.object({ id: z.string().min(1), typeId: z.string() });

/** A response as parsed: its id and type, and the fields of that type (PROCESS_MULTI reports as PROCESS does). */
type Response = { id: string } & (
  | ({ typeId: 'DOMAIN' } & z.infer<typeof RESPONSES.DOMAIN>)
  | ({ typeId: 'OS' } & z.infer<typeof RESPONSES.OS>)
  | ({ typeId: 'MAC' } & z.infer<typeof RESPONSES.MAC>)
  | ({ typeId: 'PROCESS' | 'PROCESS_MULTI' } & z.infer<typeof RESPONSES.PROCESS>)
  | ({ typeId: 'ENDPOINT_STATE' } & z.infer<typeof RESPONSES.ENDPOINT_STATE>)
);

function parseResponse(body: unknown, prefix: string): Response {
  const h = parseInput(head, body);
  if (!(TYPES as readonly string[]).includes(h.typeId)) {
    throw validationError(
      `${prefix}typeId`,
      h.typeId === 'MFA' ? 'MFA posture is established by MFA authentication' : `must be one of ${TYPES.join(', ')}`,
      h.typeId,
    );
  }
  const schema = RESPONSES[h.typeId === 'PROCESS_MULTI' ? 'PROCESS' : (h.typeId as keyof typeof RESPONSES)];
  const result = schema.safeParse(body);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw validationError(`${prefix}${issue.path.join('.')}`, issue.code === 'invalid_type' ? 'is required' : issue.message);
  }
  return { ...h, ...result.data } as Response;
}

/** Parses one response (POST /posture-response) or an array of them (POST /posture-response-bulk). */
export function parsePostureResponses(body: unknown, bulk: boolean): Response[] {
  if (!bulk) return [parseResponse(body ?? {}, '')];
  if (!Array.isArray(body)) throw validationError('(root)', 'must be an array of posture responses', body);
  return body.map((b, i) => parseResponse(b ?? {}, `${i}.`));
}

function apply(data: PostureData, r: Response, apiSessionId: string, now: string): void {
  const base = { postureCheckId: r.id, lastUpdatedAt: now };
  switch (r.typeId) {
    case 'DOMAIN':
      data.domain = { ...base, name: r.domain };
      break;
    case 'OS':
      data.os = { ...base, type: r.type, version: r.version, build: r.build ?? '' };
      break;
    case 'MAC':
      data.mac = { ...base, addresses: r.macAddresses.map(cleanHex) };
      break;
    case 'PROCESS':
    case 'PROCESS_MULTI': {
      const entry = {
        ...base,
        path: r.path ?? '',
        isRunning: !!r.isRunning,
        hash: cleanHex(r.hash ?? ''),
        signerFingerprints: (r.signerFingerprints ?? []).map(cleanHex),
      };
      data.processes = data.processes.filter((p) => !(p.postureCheckId === entry.postureCheckId && p.path === entry.path)).concat(entry);
      break;
    }
    case 'ENDPOINT_STATE': {
      const s = (data.sessions[apiSessionId] ??= {});
      s.endpointState = { ...s.endpointState, ...(r.woken ? { wokenAt: now } : {}), ...(r.unlocked ? { unlockedAt: now } : {}) };
      break;
    }
  }
}

/**
 * Records posture responses of the caller's API session. Returns the services whose MFA timers a wake or unlock
 * altered. Afterwards the identity's sessions that no longer pass their posture checks are deleted and its
 * service list counts as changed.
 */
export async function submitPostureResponses(ctx: Ctx, apiSession: ApiSession, responses: Response[]): Promise<Array<Record<string, unknown>>> {
  const core = ctx.core;
  const store = core.store;
  const identityId = ctx.caller.identityId;
  return store.tx(async () => {
    const data = await loadPostureData(store, identityId);
    const now = core.clock.now().toISOString();
    for (const r of responses) apply(data, r, apiSession.id, now);
    const live = new Set((await store.allSql<{ id: string }>('SELECT id FROM api_sessions WHERE identity_id = ?', identityId)).map((r) => r.id));
    for (const id of Object.keys(data.sessions)) if (!live.has(id)) delete data.sessions[id];
    await savePostureData(core, identityId, data);
    const woken = responses.some((r) => r.typeId === 'ENDPOINT_STATE' && r.woken);
    const unlocked = responses.some((r) => r.typeId === 'ENDPOINT_STATE' && r.unlocked);
    const altered = woken || unlocked ? await promptedServices(core, identityId, apiSession, woken, unlocked) : [];
    await revokeFailingSessions(core, identityId);
    const changes = new AccessChanges();
    changes.identities.add(identityId);
    await changes.apply(core);
    return altered;
  });
}

/** A service and the details of an MFA check of one of its policies. */
const MFA_CHECK_OF_SERVICE = rowShape({ id: 'string', name: 'string', details: json<PostureCheckDetails>() });

/** Services behind MFA checks that prompt on wake/unlock: their timeout drops to the grace period (OpenZiti's rule). */
async function promptedServices(core: Core, identityId: string, apiSession: ApiSession, woken: boolean, unlocked: boolean) {
  const store = core.store;
  const mfa = await mfaStateOf(core, apiSession);
  if (!mfa.passedAt) return [];
  const sinceMfa = Math.floor((core.clock.now().getTime() - Date.parse(mfa.passedAt)) / 1000);
  const identityClass = await classOf(store, 'identity', identityId);
  if (identityClass === undefined) return [];
  const rows = await allRows(
    store,
    MFA_CHECK_OF_SERVICE,
    `SELECT DISTINCT s.id, s.name, pc.details FROM posture_checks pc
     JOIN role_class_members pm ON pm.kind = 'posture-check' AND pm.entity_id = pc.id
     JOIN class_policies cp ON cp.class_id = pm.class_id
     JOIN class_policies ip ON ip.policy_id = cp.policy_id AND ip.class_id = ?
     JOIN class_policies sp ON sp.policy_id = cp.policy_id AND sp.kind = 'service'
     JOIN role_class_members sm ON sm.class_id = sp.class_id
     JOIN services s ON s.id = sm.entity_id
     WHERE pc.type_id = 'MFA'`,
    identityClass,
  );
  const byService = new Map<string, { id: string; name: string; postureQueryType: string; timeout: number; timeoutRemaining: number }>();
  for (const r of rows) {
    const d = r.details;
    const timeout = mfaTimeout(d);
    const prompted = (d.promptOnWake && woken) || (d.promptOnUnlock && unlocked);
    if (!prompted || !(timeout === NO_TIMEOUT || timeout - sinceMfa > MFA_PROMPT_GRACE_SECONDS)) continue;
    const prev = byService.get(r.id);
    if (!prev || timeout < prev.timeout) {
      byService.set(r.id, { id: r.id, name: r.name, postureQueryType: 'MFA', timeout, timeoutRemaining: MFA_PROMPT_GRACE_SECONDS });
    }
  }
  return [...byService.values()];
}

const SESSION_OF_API_SESSION = rowShape({ ...API_SESSION, session_id: 'string', service_id: 'string', session_type: 'string' });

/** Deletes the identity's sessions whose service no longer has a passing policy of the session's type. */
export async function revokeFailingSessions(core: Core, identityId: string): Promise<void> {
  const store = core.store;
  const list = await allRows(
    store,
    SESSION_OF_API_SESSION,
    `SELECT a.*, s.id AS session_id, s.service_id, s.type AS session_type FROM sessions s JOIN api_sessions a ON a.id = s.api_session_id
     WHERE s.identity_id = ?`,
    identityId,
  );
  if (!list.length) return;
  const identityClass = await classOf(store, 'identity', identityId);
  const serviceClass = await classesOf(store, 'service', [...new Set(list.map((r) => r.service_id))]);
  const policies = await policyPostureChecks(store, identityClass, [...new Set(serviceClass.values())]);
  const data = await loadPostureData(store, identityId);
  for (const s of list) {
    const mine = policies.filter((p) => p.serviceClass === serviceClass.get(s.service_id));
    const outcome = evaluateGrant(mine, s.session_type, { data, mfa: await mfaStateOf(core, s), now: core.clock.now() });
    if (!outcome.passed) await store.runSql('DELETE FROM sessions WHERE id = ?', s.session_id);
  }
}

/** GET /identities/{id}/posture-data. */
export async function postureDataView(ctx: Ctx, identityId: string) {
  requirePermission(ctx.caller, 'identity', 'read');
  const store = ctx.core.store;
  const identity = await requireDecoded(store, identities, identityId);
  const data = await loadPostureData(store, identityId);
  const base = (x: { postureCheckId: string; lastUpdatedAt: string } | undefined) => ({
    postureCheckId: x?.postureCheckId ?? '',
    lastUpdatedAt: x?.lastUpdatedAt ?? null,
    timedOut: false,
  });
  const sessionsData: Record<string, unknown> = {};
  for (const s of await allRows(store, API_SESSION, 'SELECT * FROM api_sessions WHERE identity_id = ? ORDER BY created_at', identityId)) {
    const mfa = await mfaStateOf(ctx.core, s);
    const state = data.sessions[s.id]?.endpointState ?? {};
    const after = (at: string | undefined) => !!mfa.passedAt && (!at || at <= mfa.passedAt);
    sessionsData[s.id] = {
      endpointState: { unlockedAt: state.unlockedAt ?? null, wokenAt: state.wokenAt ?? null },
      mfa: {
        apiSessionId: s.id,
        passedAt: mfa.passedAt,
        passedMfa: !!mfa.passedAt,
        passedOnUnlock: after(state.unlockedAt),
        passedOnWake: after(state.wokenAt),
      },
      sdkInfo: identity.sdk_info ?? {},
    };
  }
  return {
    apiSessionPostureData: sessionsData,
    domain: { ...base(data.domain), domain: data.domain?.name ?? '' },
    mac: { ...base(data.mac), addresses: data.mac?.addresses ?? [] },
    os: { ...base(data.os), build: data.os?.build ?? '', type: data.os?.type ?? '', version: data.os?.version ?? '' },
    processes: data.processes.map((p) => ({
      ...base(p),
      path: p.path,
      binaryHash: p.hash,
      isRunning: p.isRunning,
      signerFingerprints: p.signerFingerprints,
    })),
  };
}
