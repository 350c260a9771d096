import { chmodSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadOrCreateSecretKey, SecretBox, SecretBoxError } from '../../src/main/core/auth/secretBox';
import { tempDir } from '../support/app';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('seals to versioned text that opens with the same key and context only', () => {
    const sealed = box.seal('JBSWY3DPEHPK3PXP', 'row-1');
    expect(sealed).toMatch(/^v1:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(box.seal('JBSWY3DPEHPK3PXP', 'row-1')).not.toBe(sealed); // a fresh IV each time
    expect(box.open(sealed, 'row-1')).toBe('JBSWY3DPEHPK3PXP');
    expect(() => box.open(sealed, 'row-2')).toThrow(SecretBoxError);
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'row-1')).toThrow(SecretBoxError);
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    raw[raw.length - 1]! ^= 1;
    expect(() => box.open(`v1:${raw.toString('base64url')}`, 'row-1')).toThrow(SecretBoxError);
    expect(() => box.open('JBSWY3DPEHPK3PXP')).toThrow(SecretBoxError);
    expect(SecretBox.isSealed(sealed)).toBe(true);
    expect(SecretBox.isSealed('JBSWY3DPEHPK3PXP')).toBe(false);
  });

  it('digests are keyed and bound to their purpose', () => {
    const d = box.digest('ABCDEF', 'codes:a');
    expect(d).toMatch(/^h1:[A-Za-z0-9_-]{43}$/);
    expect(box.digest('ABCDEF', 'codes:a')).toBe(d);
    expect(box.digest('ABCDEF', 'codes:b')).not.toBe(d);
    expect(new SecretBox(randomBytes(32)).digest('ABCDEF', 'codes:a')).not.toBe(d);
    expect(SecretBox.isDigest(d)).toBe(true);
  });

  it('rejects keys of the wrong size', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('the key file', () => {
  it('is created once with mode 0600 and read back; refused when others may read it or it has the wrong size', async () => {
    const dir = tempDir();
    const file = join(dir, 'secrets.key');
    const key = await loadOrCreateSecretKey(file);
    expect(key).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((await loadOrCreateSecretKey(file)).equals(key)).toBe(true);
    chmodSync(file, 0o604);
    await expect(loadOrCreateSecretKey(file)).rejects.toThrow(/mode 0600.*0604.*chmod 600/);
    chmodSync(file, 0o600);
    writeFileSync(file, randomBytes(33));
    await expect(loadOrCreateSecretKey(file)).rejects.toThrow(/exactly 32 bytes, but it holds 33/);
    const other = join(dir, 'other.key');
    await expect(loadOrCreateSecretKey(other, { mayCreate: () => 'sealed values exist' })).rejects.toThrow(
      /other\.key: the secret key is missing: sealed values exist/,
    );
    rmSync(dir, { recursive: true, force: true });
  });
});
