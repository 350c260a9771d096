// Session cookies and login states: sealed (signed + encrypted with HKDF-derived keys), bound to
// share, provider and time.
import { compactDecrypt } from 'jose';
import { describe, expect, it } from 'vitest';
import { deriveKeys } from '../../src/main/frontend/keys';
import { LoginStates } from '../../src/main/frontend/loginState';
import { SessionCodec } from '../../src/main/frontend/sessions';

const SIGNING = 'unit-signing-key-0123456789abcdef-xyz';
const ENCRYPTION = 'unit-encryption-key-012345';
const keys = deriveKeys(SIGNING, ENCRYPTION);
const codec = new SessionCodec(keys, { cookieName: 'sess', cookieDomain: 'example.com', secure: true });
const NOW = Date.UTC(2030, 0, 1);
const HOUR = 3_600_000;

async function issue(overrides: Partial<Parameters<SessionCodec['issue']>[0]> = {}) {
  const header = await codec.issue(
    {
      provider: 'corp',
      share: 'abc',
      email: 'a@example.com',
      expiresAtMs: NOW + 6 * HOUR,
      checkedAtMs: NOW,
      tokens: { refreshToken: 'rt-secret', subject: 'sub-1' },
      ...overrides,
    },
    NOW,
  );
  const [pair] = header.split(';');
  return { header, name: pair.slice(0, pair.indexOf('=')), value: pair.slice(pair.indexOf('=') + 1) };
}

describe('session cookies', () => {
  it('are named per share and carry the required attributes', async () => {
    const { header, name } = await issue();
    expect(name).toBe('sess_abc');
    expect(header).toMatch(/; Domain=example\.com; Path=\/; Max-Age=21600; HttpOnly; SameSite=Lax; Secure$/);
  });

  it('round-trip for the right share and provider only', async () => {
    const { value } = await issue();
    const found = await codec.find(`sess_abc=${value}`, 'abc', 'corp', NOW + HOUR);
    expect(found).toMatchObject({ email: 'a@example.com', provider: 'corp', share: 'abc', tokens: { refreshToken: 'rt-secret', subject: 'sub-1' } });
    expect(await codec.find(`sess_abc=${value}`, 'abc', 'other', NOW)).toBeUndefined();
    expect(await codec.find(`sess_xyz=${value}`, 'xyz', 'corp', NOW)).toBeUndefined();
    expect(await codec.find(`sess_abc=${value}`, 'abc', 'corp', NOW + 6 * HOUR + 1)).toBeUndefined();
  });

  it('are encrypted with a derived key, not the configured one', async () => {
    const { value } = await issue();
    expect(value).not.toContain('rt-secret');
    const raw = new TextEncoder().encode(ENCRYPTION.padEnd(32, '\0').slice(0, 32));
    await expect(compactDecrypt(value, raw)).rejects.toThrow();
    const { plaintext } = await compactDecrypt(value, keys.sessionEncryption);
    expect(new TextDecoder().decode(plaintext).split('.')).toHaveLength(3); // a signed JWT inside
  });

  it('are not readable with keys derived from other secrets', async () => {
    const { value } = await issue();
    const other = new SessionCodec(deriveKeys(SIGNING, 'another-encryption-key-xx'), {
      cookieName: 'sess',
      cookieDomain: 'example.com',
      secure: true,
    });
    expect(await other.find(`sess_abc=${value}`, 'abc', 'corp', NOW)).toBeUndefined();
    const resigned = new SessionCodec(deriveKeys('another-signing-key-0123456789-abc', ENCRYPTION), {
      cookieName: 'sess',
      cookieDomain: 'example.com',
      secure: true,
    });
    expect(await resigned.find(`sess_abc=${value}`, 'abc', 'corp', NOW)).toBeUndefined();
  });

  it('prefer the most recently checked of duplicate cookies', async () => {
    const older = await issue({ email: 'old@example.com', checkedAtMs: NOW });
    const newer = await issue({ email: 'new@example.com', checkedAtMs: NOW + 1000 });
    const found = await codec.find(`sess_abc=garbage; sess_abc=${older.value}; sess_abc=${newer.value}`, 'abc', 'corp', NOW + 2000);
    expect(found?.email).toBe('new@example.com');
  });

  it('stay under the browser cookie size limit by dropping oversized provider tokens', async () => {
    const { header, value } = await issue({ tokens: { accessToken: 'a'.repeat(2500), refreshToken: 'r'.repeat(2500), subject: 's' } });
    expect(header.length).toBeLessThanOrEqual(4000);
    const found = await codec.find(`sess_abc=${value}`, 'abc', 'corp', NOW);
    expect(found?.email).toBe('a@example.com');
    expect(found?.tokens.accessToken).toBeUndefined();
    expect(found?.tokens.refreshToken).toBeUndefined();
    const normal = await issue({ tokens: { accessToken: 'a'.repeat(500), refreshToken: 'r'.repeat(500) } });
    expect((await codec.find(`sess_abc=${normal.value}`, 'abc', 'corp', NOW))?.tokens.refreshToken).toBe('r'.repeat(500));
  });

  it('are recognised as frontend cookies for stripping', () => {
    expect(codec.isOwnCookie('sess')).toBe(true);
    expect(codec.isOwnCookie('sess_abc')).toBe(true);
    expect(codec.isOwnCookie('sess.flow.x')).toBe(true);
    expect(codec.isOwnCookie('session')).toBe(false);
    expect(codec.isOwnCookie('other')).toBe(false);
  });
});

describe('login states', () => {
  const states = new LoginStates(keys, { cookieName: 'sess', cookieDomain: 'example.com', secure: true, lifetimeMs: 300_000 });
  const bindingHeader = (setCookie: string) => setCookie.split(';')[0];

  it('are single-use, bound, provider-specific and short-lived', async () => {
    const login = await states.create({ provider: 'corp', share: 'abc', originalUrl: 'https://abc.share.example.com/p?q=1' }, NOW);
    const cookie = bindingHeader(login.bindingCookie);
    expect(login.bindingCookie).toMatch(/^sess\.flow\.[\w-]+=[\w-]+; Domain=example\.com; Path=\/; Max-Age=300; HttpOnly; SameSite=Lax; Secure$/);
    expect(await states.consume(login.state, 'corp', undefined, NOW)).toMatchObject({ ok: false, reason: 'unbound' });
    expect(await states.consume(login.state, 'other', cookie, NOW)).toMatchObject({ ok: false, reason: 'wrong_provider' });
    expect(await states.consume(login.state, 'corp', cookie, NOW + 300_001)).toMatchObject({ ok: false, reason: 'expired' });
    const ok = await states.consume(login.state, 'corp', cookie, NOW + 1000);
    expect(ok).toMatchObject({ ok: true, claims: { shr: 'abc', url: 'https://abc.share.example.com/p?q=1', prv: 'corp' } });
    expect(await states.consume(login.state, 'corp', cookie, NOW + 2000)).toMatchObject({ ok: false, reason: 'replayed' });
  });

  it('hide the PKCE verifier and nonce', async () => {
    const login = await states.create({ provider: 'corp', share: 'abc', originalUrl: 'https://abc.share.example.com/' }, NOW);
    expect(login.state).not.toContain(login.claims.pkv);
    expect(Buffer.from(login.state.split('.')[0], 'base64url').toString()).toContain('"alg":"dir"');
  });
});
