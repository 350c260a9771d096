import argon2 from 'argon2';
import { validationError } from '../errors';

/** argon2id with the library's defaults (64 MiB, t=3, p=4). */
export const hashPassword = (password: string): Promise<string> => argon2.hash(password, { type: argon2.argon2id });

let dummyHash: Promise<string> | undefined;

/** Verifies a password; with no hash it still spends the same time so unknown usernames are not revealed. */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash) {
    dummyHash ??= hashPassword('weft-timing-equaliser');
    await argon2.verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return argon2.verify(hash, password).catch(() => false);
}

export interface PasswordRules {
  minPasswordLength: number;
  requireMixedCase: boolean;
  requireNumberChar: boolean;
  requireSpecialChar: boolean;
}

/** Applies an auth policy's password rules; `field` names the body field in the error. */
export function checkPasswordRules(rules: PasswordRules, password: string, field = 'password'): void {
  const fail = (reason: string) => {
    throw validationError(field, reason);
  };
  if (password.length < rules.minPasswordLength) fail(`must be at least ${rules.minPasswordLength} characters`);
  if (rules.requireMixedCase && !(/[a-z]/.test(password) && /[A-Z]/.test(password))) fail('must contain upper and lower case letters');
  if (rules.requireNumberChar && !/[0-9]/.test(password)) fail('must contain a number');
  if (rules.requireSpecialChar && !/[^A-Za-z0-9]/.test(password)) fail('must contain a special character');
}
