import { json, rowShape, type Decoded } from '../store/rows';
import { satisfies } from './semverRange';

/** What an identity's SDKs reported (stored per identity; per-API-session parts keyed by session id). */
export interface PostureData {
  os?: { type: string; version: string; build: string; postureCheckId: string; lastUpdatedAt: string };
  domain?: { name: string; postureCheckId: string; lastUpdatedAt: string };
  mac?: { addresses: string[]; postureCheckId: string; lastUpdatedAt: string };
  processes: ProcessData[];
  sessions: Record<string, { endpointState?: { wokenAt?: string; unlockedAt?: string } }>;
}

export interface ProcessData {
  postureCheckId: string;
  path: string;
  isRunning: boolean;
  hash: string;
  signerFingerprints: string[];
  lastUpdatedAt: string;
}

/** MFA state of one API session, as the MFA module records it (api_sessions.is_mfa_complete / mfa_passed_at). */
export interface MfaState {
  apiSessionId: string;
  passedAt: string | null;
}

export interface EvaluationInput {
  data: PostureData;
  mfa: MfaState;
  now: Date;
}

export const NO_TIMEOUT = -1;
/** After a wake or unlock, an MFA check with prompts keeps passing for this long. */
export const MFA_PROMPT_GRACE_SECONDS = 300;

export const emptyPostureData = (): PostureData => ({ processes: [], sessions: {} });
export const cleanHex = (s: string) => s.toLowerCase().replace(/[^0-9a-z]/g, '');

/** The type-specific fields of a posture check as stored (postureChecks.ts POSTURE_CHECK_DETAILS): those of its type. */
export interface PostureCheckDetails {
  domains?: string[];
  macAddresses?: string[];
  operatingSystems?: Array<{ type: string; versions: string[] }>;
  process?: { osType: string; path: string; hashes?: string[]; signerFingerprint?: string };
  processes?: Array<{ osType: string; path: string; hashes?: string[]; signerFingerprints?: string[] }>;
  semantic?: 'AllOf' | 'AnyOf';
  timeoutSeconds?: number;
  promptOnWake?: boolean;
  promptOnUnlock?: boolean;
  ignoreLegacyEndpoints?: boolean;
}

/** A posture check's row: its type-specific fields are `details`. */
export const POSTURE_CHECK = rowShape({
  id: 'string',
  name: 'string',
  type_id: 'string',
  version: 'int',
  details: json<PostureCheckDetails>(),
  created_at: 'datetime',
  updated_at: 'datetime',
  tags: json<Record<string, unknown>>(),
});
export type PostureCheck = Decoded<typeof POSTURE_CHECK>;

/** An MFA check's timeout in seconds: NO_TIMEOUT unless it is above 0. */
export function mfaTimeout(d: PostureCheckDetails): number {
  const s = d.timeoutSeconds;
  return s !== undefined && s > 0 ? s : NO_TIMEOUT;
}

function mfaTimes(check: PostureCheck, input: EvaluationInput) {
  const d = check.details;
  const state = input.data.sessions[input.mfa.apiSessionId]?.endpointState ?? {};
  const passed = input.mfa.passedAt ? Date.parse(input.mfa.passedAt) : undefined;
  const now = input.now.getTime();
  // a wake/unlock after the last MFA fails the check once its grace period is over
  const promptOk = (prompt: boolean, at: string | undefined) =>
    !prompt || (passed !== undefined && (!at || Date.parse(at) < passed || now - MFA_PROMPT_GRACE_SECONDS * 1000 < Date.parse(at)));
  const timeout = mfaTimeout(d);
  const timedOut = passed !== undefined && timeout !== NO_TIMEOUT && passed + timeout * 1000 < now;
  return {
    d,
    state,
    passed,
    now,
    timeout,
    timedOut,
    passedOnWake: promptOk(!!d.promptOnWake, state.wokenAt),
    passedOnUnlock: promptOk(!!d.promptOnUnlock, state.unlockedAt),
  };
}

/** Whether one posture check passes for the reported data (OpenZiti's rules per check type). */
export function checkPasses(check: PostureCheck, input: EvaluationInput): boolean {
  const d = check.details;
  const pd = input.data;
  switch (check.type_id) {
    case 'DOMAIN':
      return !!pd.domain && d.domains!.some((x) => x.toLowerCase() === pd.domain!.name.toLowerCase());
    case 'MAC': {
      const wanted = new Set(d.macAddresses!.map(cleanHex));
      return !!pd.mac && pd.mac.addresses.some((a) => wanted.has(cleanHex(a)));
    }
    case 'OS': {
      if (!pd.os) return false;
      const matches = d.operatingSystems!.filter((o) => o.type.toLowerCase() === pd.os!.type.toLowerCase());
      const rule = matches.at(-1); // the last declaration of an OS wins
      return !!rule && (rule.versions.length === 0 || rule.versions.some((r) => satisfies(pd.os!.version, r)));
    }
    case 'PROCESS': {
      const p = d.process!;
      const data = processOf(pd, check.id, p.path);
      if (!data || !data.isRunning) return false;
      if (p.signerFingerprint && !data.signerFingerprints.some((f) => cleanHex(f) === cleanHex(p.signerFingerprint!))) return false;
      return !p.hashes?.length || p.hashes.some((h) => cleanHex(h) === cleanHex(data.hash));
    }
    case 'PROCESS_MULTI': {
      const procs = d.processes!;
      const ok = (p: (typeof procs)[number]) => {
        const data = pd.processes.filter((x) => x.path === p.path).at(-1); // the latest report for that path
        if (!data || !data.isRunning) return false;
        if (p.hashes?.length && !p.hashes.some((h) => cleanHex(h) === cleanHex(data.hash))) return false;
        return !p.signerFingerprints?.length || p.signerFingerprints.some((s) => data.signerFingerprints.some((f) => cleanHex(f) === cleanHex(s)));
      };
      return d.semantic === 'AnyOf' ? procs.some(ok) : procs.every(ok);
    }
    case 'MFA': {
      const t = mfaTimes(check, input);
      return t.passed !== undefined && !t.timedOut && t.passedOnWake && t.passedOnUnlock;
    }
    default:
      return false;
  }
}

/** Seconds until the check stops passing by itself: -1 when it has no timeout (only MFA checks have one). */
export function timeoutRemaining(check: PostureCheck, input: EvaluationInput): number {
  if (check.type_id !== 'MFA') return NO_TIMEOUT;
  const t = mfaTimes(check, input);
  if (t.timeout === NO_TIMEOUT) return NO_TIMEOUT;
  if (t.passed === undefined) return 0;
  let remaining = Math.max(0, t.timeout - Math.floor((t.now - t.passed) / 1000));
  for (const [prompt, at] of [
    [t.d.promptOnWake, t.state.wokenAt],
    [t.d.promptOnUnlock, t.state.unlockedAt],
  ] as const) {
    if (prompt && at && Date.parse(at) > t.passed) {
      remaining = Math.min(remaining, Math.max(0, MFA_PROMPT_GRACE_SECONDS - Math.floor((t.now - Date.parse(at)) / 1000)));
    }
  }
  return remaining;
}

export function timeoutSeconds(check: PostureCheck): number {
  if (check.type_id !== 'MFA') return NO_TIMEOUT;
  return mfaTimeout(check.details);
}

/** The failure detail OpenZiti reports for a check: what was expected and what was reported. */
export function failureOf(check: PostureCheck, input: EvaluationInput): Record<string, unknown> {
  const d = check.details;
  const pd = input.data;
  const base = { postureCheckId: check.id, postureCheckName: check.name, postureCheckType: check.type_id };
  switch (check.type_id) {
    case 'DOMAIN':
      return { ...base, actualValue: pd.domain?.name ?? '', expectedValue: d.domains };
    case 'MAC':
      return { ...base, actualValue: pd.mac?.addresses ?? [], expectedValue: d.macAddresses };
    case 'OS':
      return { ...base, actualValue: { type: pd.os?.type ?? '', version: pd.os?.version ?? '' }, expectedValue: d.operatingSystems };
    case 'PROCESS': {
      const data = processOf(pd, check.id, d.process!.path);
      return { ...base, actualValue: processActual(data), expectedValue: d.process };
    }
    case 'PROCESS_MULTI': {
      const paths = new Set(d.processes!.map((p) => p.path));
      return {
        ...base,
        semantic: d.semantic,
        expectedValue: d.processes,
        actualValue: pd.processes.filter((x) => paths.has(x.path)).map(processActual),
      };
    }
    case 'MFA': {
      const t = mfaTimes(check, input);
      return {
        ...base,
        actualValue: { passedMfa: t.passed !== undefined, passedOnWake: t.passedOnWake, passedOnUnlock: t.passedOnUnlock, timedOut: t.timedOut },
        expectedValue: { passedMfa: true, passedOnWake: !!t.d.promptOnWake, passedOnUnlock: !!t.d.promptOnUnlock, timedOut: false },
        criteria: {
          passedMfaAt: input.mfa.passedAt,
          wokenAt: t.state.wokenAt ?? null,
          unlockedAt: t.state.unlockedAt ?? null,
          timeoutSeconds: timeoutSeconds(check),
          timeoutRemainingSeconds: timeoutRemaining(check, input),
        },
      };
    }
    default:
      return base;
  }
}

/** The process a PROCESS check is about: reported for that check, preferably for its path. */
function processOf(pd: PostureData, checkId: string, path: string): ProcessData | undefined {
  const mine = pd.processes.filter((x) => x.postureCheckId === checkId);
  return mine.find((x) => x.path === path) ?? mine[0];
}

function processActual(data: ProcessData | undefined) {
  return { path: data?.path ?? '', isRunning: data?.isRunning ?? false, hash: data?.hash ?? '', signerFingerprints: data?.signerFingerprints ?? [] };
}
