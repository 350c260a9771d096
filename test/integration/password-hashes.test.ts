import argon2 from 'argon2';
import { describe, expect, it } from 'vitest';
import { ARGON2_PARAMS, needsRehash } from '../../src/main/core/auth/passwords';
import { useTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { createUser } from '../support/users';

/**
 * Password hashes: argon2id with OWASP's parameters; hashes stored with other parameters (earlier releases used the
 * library's 64 MiB / t=3 / p=4 default) still verify with their own parameters and are upgraded at the next login.
 */
let app: TestApp;
let admin: ApiClient;
useTestApp((a, c) => {
  app = a;
  admin = c;
});

const PASSWORD = 'hash-upgrade-password-1';
const hashOf = async (username: string) =>
  (await app.core.store.getSql<{ password_hash: string }>(
    "SELECT password_hash FROM authenticators WHERE method = 'updb' AND username = ?",
    username,
  ))!.password_hash;
const setHash = (username: string, hash: string) =>
  app.core.store.runSql("UPDATE authenticators SET password_hash = ? WHERE method = 'updb' AND username = ?", hash, username);
const tryLogin = async (username: string, password: string) =>
  (await app.client().post('/authenticate?method=password', { username, password })).status;

describe('password hashes', () => {
  it('hashes new passwords with argon2id at m=19 MiB, t=2, p=1 (OWASP)', async () => {
    await createUser(admin, 'hash-new', PASSWORD);
    expect(await hashOf('hash-new')).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    expect(ARGON2_PARAMS).toMatchObject({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(needsRehash(await hashOf('hash-new'))).toBe(false);
  });

  it('verifies a hash made with older parameters and upgrades it at the next successful login', async () => {
    await createUser(admin, 'hash-old', PASSWORD);
    const old = await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 65536, timeCost: 3, parallelism: 4 });
    await setHash('hash-old', old);
    expect(needsRehash(old)).toBe(true);

    // a wrong password neither logs in nor touches the stored hash
    expect(await tryLogin('hash-old', 'not-the-password-1')).toBe(401);
    expect(await hashOf('hash-old')).toBe(old);

    expect(await tryLogin('hash-old', PASSWORD)).toBe(200);
    const upgraded = await hashOf('hash-old');
    expect(upgraded).not.toBe(old);
    expect(upgraded).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    expect(await argon2.verify(upgraded, PASSWORD)).toBe(true);

    // the upgraded hash logs in, and a current hash is left as it is
    expect(await tryLogin('hash-old', PASSWORD)).toBe(200);
    expect(await hashOf('hash-old')).toBe(upgraded);
  });

  it('upgrades weaker hashes too (fewer passes, less memory, argon2i)', async () => {
    await createUser(admin, 'hash-weak', PASSWORD);
    for (const weak of [
      await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 4096, timeCost: 1, parallelism: 1 }),
      await argon2.hash(PASSWORD, { type: argon2.argon2i, memoryCost: 19456, timeCost: 2, parallelism: 1 }),
    ]) {
      await setHash('hash-weak', weak);
      expect(await tryLogin('hash-weak', PASSWORD)).toBe(200);
      expect(await hashOf('hash-weak')).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    }
  });
});
