// The frontend remembers verified session cookie values (its hot path): remembering must never change
// an answer — expiry, tampering, foreign shares and providers behave as for a cookie seen the first time.
import { describe, expect, it } from 'vitest';
import { deriveKeys } from '../../src/main/frontend/keys';
import { SessionCodec } from '../../src/main/frontend/sessions';

const keys = deriveKeys('cache-signing-key-0123456789abcdef-xyz', 'cache-encryption-key-0123');
const NOW = Date.UTC(2031, 5, 1, 12, 0, 0, 250);
const HOUR = 3_600_000;

const newCodec = () => new SessionCodec(keys, { cookieName: 'sess', cookieDomain: 'example.com', secure: true });

async function cookie(codec: SessionCodec, share = 'abc'): Promise<{ header: string; value: string; expiresAtMs: number }> {
  const expiresAtMs = NOW + HOUR;
  const setCookie = await codec.issue({ provider: 'corp', share, email: 'a@example.com', expiresAtMs, checkedAtMs: NOW, tokens: {} }, NOW);
  const pair = setCookie.split(';')[0]!;
  return { header: pair, value: pair.slice(pair.indexOf('=') + 1), expiresAtMs: Math.ceil(expiresAtMs / 1000) * 1000 };
}

describe('verified session cookies', () => {
  it('expire at the same instant whether or not they were seen before', async () => {
    const warm = newCodec();
    const { header, expiresAtMs } = await cookie(warm);
    expect(await warm.find(header, 'abc', 'corp', NOW)).toBeDefined(); // now remembered
    for (const at of [expiresAtMs - 1001, expiresAtMs - 1, expiresAtMs, expiresAtMs + 1]) {
      const cold = await newCodec().find(header, 'abc', 'corp', at);
      const remembered = await warm.find(header, 'abc', 'corp', at);
      expect(remembered === undefined, `at exp ${at - expiresAtMs} ms`).toBe(cold === undefined);
    }
    expect(await warm.find(header, 'abc', 'corp', expiresAtMs - 1001)).toBeDefined();
    expect(await warm.find(header, 'abc', 'corp', expiresAtMs)).toBeUndefined();
    // Expired sessions are still listed for logout.
    expect(await warm.all(header, expiresAtMs + HOUR)).toHaveLength(1);
  });

  it('a remembered value does not let tampered values, other shares or other providers through', async () => {
    const codec = newCodec();
    const { header, value } = await cookie(codec);
    expect(await codec.find(header, 'abc', 'corp', NOW)).toBeDefined();
    const flipped = value.slice(0, -2) + (value.at(-2) === 'A' ? 'B' : 'A') + value.at(-1);
    expect(await codec.find(`sess_abc=${flipped}`, 'abc', 'corp', NOW)).toBeUndefined();
    expect(await codec.find(`sess_xyz=${value}`, 'xyz', 'corp', NOW)).toBeUndefined();
    expect(await codec.find(header, 'abc', 'other', NOW)).toBeUndefined();
    expect(await codec.find(header, 'abc', 'corp', NOW)).toMatchObject({ share: 'abc', email: 'a@example.com' });
  });

  it('cookies sealed with other keys are refused even by a codec that remembers', async () => {
    const other = new SessionCodec(deriveKeys('another-signing-key-0123456789abcdef', 'another-encryption-key-01'), {
      cookieName: 'sess',
      cookieDomain: 'example.com',
      secure: true,
    });
    const foreign = await cookie(other);
    const codec = newCodec();
    await codec.find((await cookie(codec)).header, 'abc', 'corp', NOW);
    expect(await codec.find(foreign.header, 'abc', 'corp', NOW)).toBeUndefined();
  });
});
