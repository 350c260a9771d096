import type { Core } from '../core';
import { DataIntegrity } from '../ops/integrity';
import { Snapshots } from '../ops/snapshot';
import { ExtJwtVerifier, extJwtAuthQueries } from './extJwt';
import { decorateMfaEnabled, isTotpEnrolled } from './mfa';

const DEFAULT_SNAPSHOT_INTERVAL_MS = 60_000;
const MAX_TRACKED_SESSIONS = 10_000;

/**
 * Per-core state of MFA, external JWT authentication and the operations endpoints; wires the core's hooks,
 * the identity `isMfaEnabled` decorator and the summary counts of its tables.
 */
export class SecurityService {
  readonly extJwt: ExtJwtVerifier;
  readonly integrity: DataIntegrity;
  readonly snapshots: Snapshots;
  /** wrong MFA codes per API session (in memory: a restart forgets them, the session limit still holds) */
  private readonly mfaFailures = new Map<string, number>();

  constructor(core: Core) {
    this.extJwt = new ExtJwtVerifier(core);
    this.integrity = new DataIntegrity(core);
    this.snapshots = new Snapshots(core, () => core.config.snapshotIntervalMs ?? DEFAULT_SNAPSHOT_INTERVAL_MS);
    core.hooks.isTotpEnrolled = (identityId) => isTotpEnrolled(core, identityId);
    core.hooks.extJwtAuthQueries = (session) => extJwtAuthQueries(core, session);
    core.identityDecorators.push(decorateMfaEnabled);
    Object.assign(core.summaryTables, { externalJwtSigners: 'external_jwt_signers', mfas: 'mfas', controllerSettings: 'controller_settings' });
  }

  /** Counts a wrong MFA code of a session; returns the session's count. */
  noteMfaFailure(sessionId: string): number {
    if (this.mfaFailures.size >= MAX_TRACKED_SESSIONS && !this.mfaFailures.has(sessionId)) {
      this.mfaFailures.delete(this.mfaFailures.keys().next().value!);
    }
    const n = (this.mfaFailures.get(sessionId) ?? 0) + 1;
    this.mfaFailures.set(sessionId, n);
    return n;
  }

  clearMfaFailures(sessionId: string): void {
    this.mfaFailures.delete(sessionId);
  }

  async close(): Promise<void> {
    this.integrity.close();
    await this.snapshots.idle();
  }
}
