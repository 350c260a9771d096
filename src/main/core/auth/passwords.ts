import { availableParallelism } from 'node:os';
import argon2 from 'argon2';
import { validationError } from '../errors';

/**
 * argon2id with OWASP's recommended minimum (Password Storage Cheat Sheet): 19 MiB of memory, 2 passes, 1 lane.
 * Hashes made earlier with other parameters (e.g. the library's 64 MiB / t=3 / p=4 default of older versions)
 * verify with their own parameters, which the encoded hash carries; `needsRehash` tells when to upgrade them.
 */
export const ARGON2_PARAMS = { type: argon2.argon2id, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 } as const;

/**
 * Hashing runs on libuv's thread pool (4 threads by default, shared with file system, DNS and crypto work). At most
 * `ARGON2_CONCURRENCY` hashes run at once — one per core, so a burst of logins neither starves those other users of
 * the pool nor makes every hash slower by oversubscribing the cores; the rest wait here in order.
 */
export const ARGON2_CONCURRENCY = Math.max(1, Math.min(availableParallelism(), Number(process.env.UV_THREADPOOL_SIZE ?? 4) - 1));

let running = 0;
const waiting: Array<() => void> = [];

async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running >= ARGON2_CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

export const hashPassword = (password: string): Promise<string> => limited(() => argon2.hash(password, ARGON2_PARAMS));

/** Whether a stored hash was made with other parameters than ARGON2_PARAMS (it is upgraded at the next login). */
export function needsRehash(hash: string): boolean {
  try {
    return !hash.startsWith('$argon2id$') || argon2.needsRehash(hash, ARGON2_PARAMS);
  } catch {
    return true;
  }
}

let dummyHash: Promise<string> | undefined;

/** Verifies a password; with no hash it still spends the same time so unknown usernames are not revealed. */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash) {
    dummyHash ??= hashPassword('weft-timing-equaliser');
    const dummy = await dummyHash;
    await limited(() => argon2.verify(dummy, password)).catch(() => false);
    return false;
  }
  return limited(() => argon2.verify(hash, password)).catch(() => false);
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
