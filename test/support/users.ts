import { generateSync } from 'otplib';
import type { TestApp } from './app';
import type { ApiClient } from './client';

/** Creates a User identity with a updb authenticator; returns its id. */
export async function createUser(admin: ApiClient, name: string, password: string, extra: Record<string, unknown> = {}): Promise<string> {
  const id = await admin.create('/identities', { name, type: 'User', isAdmin: false, ...extra });
  await admin.create('/authenticators', { method: 'updb', identityId: id, username: name, password });
  return id;
}

/** Logs in with a password and returns the client and the authentication response's API session. */
export async function login(app: TestApp, username: string, password: string): Promise<{ client: ApiClient; session: any }> {
  const client = app.client();
  const r = await client.login(username, password);
  return { client, session: r.body.data };
}

/** The TOTP code an authenticator app would show for `secret` at the clock's time. */
export const totp = (secret: string, epochSeconds: number): string => generateSync({ secret, epoch: epochSeconds });

/** The base32 secret of an otpauth:// provisioning URL. */
export const secretOf = (provisioningUrl: string): string => new URL(provisioningUrl).searchParams.get('secret')!;

/** A start time for a ManualClock: one second into the current 30-second TOTP step. */
export const totpStepStart = (): Date => new Date(Math.floor(Date.now() / 30_000) * 30_000 + 1_000);

/** Seconds since the epoch of a clock, as TOTP counts them. */
export const epochSeconds = (clock: { now(): Date }): number => Math.floor(clock.now().getTime() / 1000);

/** The permissive primary section most test auth policies start from (every method allowed, no lockout). */
export const OPEN_PRIMARY = {
  cert: { allowed: true, allowExpiredCerts: true },
  extJwt: { allowed: true, allowedSigners: [] as string[] },
  updb: {
    allowed: true,
    minPasswordLength: 5,
    requireSpecialChar: false,
    requireNumberChar: false,
    requireMixedCase: false,
    maxAttempts: 0,
    lockoutDurationMinutes: 0,
  },
};

/** A POST /auth-policies body: OPEN_PRIMARY with each primary section's fields overridden, and a secondary section. */
export function authPolicyBody(
  name: string,
  primary: { [K in keyof typeof OPEN_PRIMARY]?: Partial<(typeof OPEN_PRIMARY)[K]> } = {},
  secondary: { requireTotp?: boolean; requireExtJwtSigner?: string | null } = {},
) {
  return {
    name,
    primary: {
      cert: { ...OPEN_PRIMARY.cert, ...primary.cert },
      extJwt: { ...OPEN_PRIMARY.extJwt, ...primary.extJwt },
      updb: { ...OPEN_PRIMARY.updb, ...primary.updb },
    },
    secondary: { requireTotp: false, requireExtJwtSigner: null, ...secondary },
  };
}
