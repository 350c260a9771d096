import { join } from 'node:path';
import type { Core } from '../core';
import { DataIntegrity } from '../ops/integrity';
import { Snapshots } from '../ops/snapshot';
import { ExtJwtVerifier } from './extJwt';
import { sealMfaSecrets } from './mfa';
import { loadOrCreateSecretKey, SECRET_KEY_FILE, SecretBox } from './secretBox';

const DEFAULT_SNAPSHOT_INTERVAL_MS = 60_000;

/**
 * Per-core state of MFA secrets at rest, external JWT authentication and the operations endpoints.
 */
export class SecurityService {
  readonly extJwt: ExtJwtVerifier;
  readonly integrity: DataIntegrity;
  readonly snapshots: Snapshots;
  private secretBox?: SecretBox;

  constructor(private readonly core: Core) {
    this.extJwt = new ExtJwtVerifier(core);
    this.integrity = new DataIntegrity(core);
    this.snapshots = new Snapshots(core, () => core.config.snapshotIntervalMs ?? DEFAULT_SNAPSHOT_INTERVAL_MS);
  }

  /**
   * Seals secrets at rest with the key in `<data dir>/secrets.key` (created at the first start; refused when others
   * may read it or it has the wrong size). Never created anew while the database holds values sealed with a lost key.
   */
  get secrets(): SecretBox {
    if (!this.secretBox) {
      const key = loadOrCreateSecretKey(join(this.core.config.dataDir, SECRET_KEY_FILE), {
        mayCreate: () =>
          this.core.store.getSql("SELECT 1 FROM mfas WHERE secret LIKE 'v1:%' LIMIT 1")
            ? 'the database holds MFA secrets sealed with it; restore the file from a backup of this data directory'
            : undefined,
      });
      this.secretBox = new SecretBox(key);
    }
    return this.secretBox;
  }

  /** Start-up: loads (or creates) the secret key and seals secrets still stored in clear. */
  prepareSecrets(): void {
    sealMfaSecrets(this.core);
  }

  /** Counts a wrong MFA code of a session, in the session's row (a restart keeps it); returns the session's count. */
  noteMfaFailure(sessionId: string): number {
    return (
      this.core.store.getSql<{ n: number }>(
        'UPDATE api_sessions SET mfa_failures = mfa_failures + 1 WHERE id = ? RETURNING mfa_failures AS n',
        sessionId,
      )?.n ?? 0
    );
  }

  async close(): Promise<void> {
    this.integrity.close();
    await this.snapshots.idle();
  }
}
