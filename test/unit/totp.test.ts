import { generateSync } from 'otplib';
import { describe, expect, it } from 'vitest';
import { checkTotp } from '../../src/main/core/auth/mfa';

// RFC 6238 appendix B: SHA-1 key "12345678901234567890" (base32 below); the last 6 of the 8-digit values
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const VECTORS: Array<[number, string]> = [
  [59, '287082'],
  [1111111109, '081804'],
  [1111111111, '050471'],
  [1234567890, '005924'],
  [2000000000, '279037'],
];

describe('TOTP (SHA-1, 6 digits, 30 s)', () => {
  it('matches the RFC 6238 test vectors', () => {
    for (const [t, code] of VECTORS) {
      expect(generateSync({ secret: RFC_SECRET, epoch: t })).toBe(code);
      expect(checkTotp(RFC_SECRET, code, t)).toBe(Math.floor(t / 30));
    }
  });

  it('accepts one step of clock skew either way, no more', () => {
    const t = 1234567890;
    const at = (dt: number) => generateSync({ secret: RFC_SECRET, epoch: t + dt });
    expect(checkTotp(RFC_SECRET, at(-30), t)).toBe(Math.floor((t - 30) / 30));
    expect(checkTotp(RFC_SECRET, at(30), t)).toBe(Math.floor((t + 30) / 30));
    expect(checkTotp(RFC_SECRET, at(-60), t)).toBeUndefined();
    expect(checkTotp(RFC_SECRET, at(60), t)).toBeUndefined();
  });

  it('refuses replays: the code of the last accepted step (or an earlier one) is spent', () => {
    const t = 1111111111;
    const step = checkTotp(RFC_SECRET, '050471', t)!;
    expect(checkTotp(RFC_SECRET, '050471', t, step)).toBeUndefined();
    expect(checkTotp(RFC_SECRET, generateSync({ secret: RFC_SECRET, epoch: t - 30 }), t, step)).toBeUndefined();
    expect(checkTotp(RFC_SECRET, generateSync({ secret: RFC_SECRET, epoch: t + 30 }), t, step)).toBe(step + 1);
  });

  it('refuses malformed codes without throwing', () => {
    for (const code of ['', '12345', '1234567', 'abcdef', '12 345', '０８１８０４']) expect(checkTotp(RFC_SECRET, code, 1111111109)).toBeUndefined();
  });
});
