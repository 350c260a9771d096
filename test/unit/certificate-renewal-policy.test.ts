// The renewal policy (pki/renewal.ts) and the JWT signer's retired certificates (pki/jwtSigner.ts).
import { describe, expect, it } from 'vitest';
import { createRootCa, createServerCertificate, daysLeft, JwtSigner, renewsAt, warningLevel, fingerprintSha1 } from '../../src/main/core/pki/index';

const DAY = 86_400_000;
const at = (days: number) => new Date(Date.UTC(2030, 0, 1) + days * DAY);

describe('renewal policy', () => {
  it('is due at two thirds of the lifetime or 30 days before expiry, whichever first, never before half', () => {
    expect(renewsAt(at(0), at(365)).getTime()).toBe(at((365 * 2) / 3).getTime()); // one year: ~day 243
    expect(renewsAt(at(0), at(3650)).getTime()).toBe(at((3650 * 2) / 3).getTime()); // ten years: two thirds too
    expect(renewsAt(at(0), at(80)).getTime()).toBe(at(50).getTime()); // 80 days: 30 days before comes first
    expect(renewsAt(at(0), at(30)).getTime()).toBe(at(15).getTime()); // a month: not before half
  });

  it('warns at 30, 7 and 1 days', () => {
    expect([31, 30, 8, 7, 2, 1, 0, -1].map((d) => warningLevel(d))).toEqual([undefined, 30, 30, 7, 7, 1, 1, 1]);
    expect(daysLeft(at(10), at(0))).toBe(10);
    expect(daysLeft(at(10), new Date(at(10).getTime() + 1))).toBe(-1);
  });
});

describe('JWT signer across a renewal', () => {
  it('a token whose kid names a retired certificate of the same key verifies; the JWKS lists both', async () => {
    const ca = await createRootCa({ commonName: 'Test CA' });
    const first = await createServerCertificate({ commonName: 'localhost', issuer: ca, dnsNames: ['localhost'] });
    const renewed = await createServerCertificate({ commonName: 'localhost', issuer: ca, dnsNames: ['localhost'], keyPem: first.keyPem });
    expect(renewed.keyPem).toBe(first.keyPem);
    const before = new JwtSigner(first, [ca.certPem]);
    const token = before.sign({ sub: 'x' });
    const after = new JwtSigner(renewed, [ca.certPem], [first.certPem]);
    expect(after.kid).toBe(fingerprintSha1(renewed.certPem));
    expect(after.verify(token)).toMatchObject({ sub: 'x' });
    expect(after.keyFor(before.kid)).toBeDefined();
    expect(after.keyFor('0000')).toBeUndefined();
    expect(after.jwks().map((k) => k.kid)).toEqual([after.kid, before.kid]);
  });
});
