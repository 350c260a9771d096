// Negative: forged `state` values never reach the code exchange and never yield a session.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKeys } from '../../src/main/frontend/keys';
import { LoginStates } from '../../src/main/frontend/loginState';
import { COOKIE_DOMAIN, COOKIE_NAME, HttpUserAgent } from '../support/browser';
import { startGithubScenario, type GithubScenario } from '../support/fakeGithub';

describe('negative: forged state', () => {
  let s: GithubScenario;
  beforeAll(async () => {
    s = await startGithubScenario();
  });
  afterAll(async () => s?.close());

  async function expectRefused(agent: HttpUserAgent, callbackUrl: string) {
    const issued = s.gh.issuedTokens.length;
    const res = await agent.request(callbackUrl);
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.setCookies.some((c) => c.startsWith(`${COOKIE_NAME}_`))).toBe(false);
    expect(s.gh.issuedTokens.length).toBe(issued); // the code was never exchanged
    return res;
  }

  it('refuses a callback without state', async () => {
    const agent = new HttpUserAgent();
    const { callbackUrl } = await s.startLogin(agent, 'app');
    const url = new URL(callbackUrl);
    url.searchParams.delete('state');
    await expectRefused(agent, url.href);
  });

  it('refuses random and malformed state values', async () => {
    const agent = new HttpUserAgent();
    const { callbackUrl } = await s.startLogin(agent, 'app');
    for (const forged of ['x', 'a.b.c.d.e', '....', 'eyJhbGciOiJub25lIn0.e30.', '%00', 'A'.repeat(10_000)]) {
      const url = new URL(callbackUrl);
      url.searchParams.set('state', forged);
      await expectRefused(agent, url.href);
    }
  });

  it('refuses a state whose ciphertext was modified', async () => {
    const agent = new HttpUserAgent();
    const { callbackUrl } = await s.startLogin(agent, 'app');
    const url = new URL(callbackUrl);
    const state = url.searchParams.get('state')!;
    const parts = state.split('.');
    const flip = (text: string) => text.slice(0, 10) + (text[10] === 'A' ? 'B' : 'A') + text.slice(11);
    for (const i of [0, 2, 3, 4]) {
      const copy = [...parts];
      copy[i] = flip(copy[i]);
      url.searchParams.set('state', copy.join('.'));
      await expectRefused(agent, url.href);
    }
  });

  it('refuses a state sealed with other keys', async () => {
    const agent = new HttpUserAgent();
    const { callbackUrl } = await s.startLogin(agent, 'app');
    const foreign = new LoginStates(deriveKeys('another-signing-key-0123456789-abcdef', 'another-encryption-key-0123'), {
      cookieName: COOKIE_NAME,
      cookieDomain: COOKIE_DOMAIN,
      secure: false,
      lifetimeMs: 300_000,
    });
    const forged = await foreign.create({ provider: 'github', share: 'app', originalUrl: s.fe.shareUrl('app', '/') }, Date.now());
    const [pair] = forged.bindingCookie.split(';');
    const [name, value] = pair.split('=');
    agent.setCookie({ name, value, domain: COOKIE_DOMAIN });
    const url = new URL(callbackUrl);
    url.searchParams.set('state', forged.state);
    await expectRefused(agent, url.href);
  });

  it('refuses a signed but unencrypted state', async () => {
    const agent = new HttpUserAgent();
    const { callbackUrl } = await s.startLogin(agent, 'app');
    const keys = deriveKeys(s.fe.config.oauth!.signing_key, s.fe.config.oauth!.encryption_key);
    const jws = await new SignJWT({ jti: 'x', prv: 'github', shr: 'app', url: s.fe.shareUrl('app'), bid: 'b', bnd: 'c', non: 'n', pkv: 'p' })
      .setProtectedHeader({ alg: 'HS256', typ: 'weft-state+jwt' })
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(keys.stateSigning);
    const url = new URL(callbackUrl);
    url.searchParams.set('state', jws);
    await expectRefused(agent, url.href);
  });

  it("refuses a genuine state at another provider's callback", async () => {
    const agent = new HttpUserAgent();
    const { callbackUrl } = await s.startLogin(agent, 'app');
    const res = await expectRefused(agent, callbackUrl.replace('/github/auth/callback', '/github2/auth/callback'));
    expect(res.body).toContain('different provider');
  });
});
