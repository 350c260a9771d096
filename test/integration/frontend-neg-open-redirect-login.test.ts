// Negative: after login the browser only ever returns to the share it started from.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKeys } from '../../src/main/frontend/keys';
import { LoginStates } from '../../src/main/frontend/loginState';
import { COOKIE_DOMAIN, COOKIE_NAME, HttpUserAgent } from '../support/browser';
import { startGithubScenario, type GithubScenario } from '../support/fakeGithub';

describe('negative: open redirect through login', () => {
  let s: GithubScenario;
  beforeAll(async () => {
    s = await startGithubScenario();
  });
  afterAll(async () => s?.close());

  async function loginWithRawTarget(rawPath: string) {
    const agent = new HttpUserAgent();
    s.gh.signInAs('octo');
    const start = await agent.request(s.fe.shareUrl('app'), { rawPath });
    expect(start.status, rawPath).toBe(302);
    const authorize = await agent.request(start.location!);
    const callback = await agent.request(authorize.location!);
    expect(callback.status, rawPath).toBe(302);
    return callback.headers.location!;
  }

  it('keeps protocol-relative and backslash paths on the share host', async () => {
    const appHost = new URL(s.fe.shareUrl('app')).host;
    for (const rawPath of ['//evil.example/steal', '//evil.example@x/', '/%2f%2fevil.example/', '/%5c%5cevil.example/']) {
      const location = await loginWithRawTarget(rawPath);
      expect(location.startsWith(`${s.fe.handle.shareUrl('app')}/`), location).toBe(true);
      // As a browser would resolve it:
      expect(new URL(location).host, location).toBe(appHost);
      expect(new URL(location, 'http://base.invalid/').host, location).toBe(appHost);
    }
  });

  it('refuses raw backslashes in the request target (browsers never send them)', async () => {
    const res = await new HttpUserAgent().request(s.fe.shareUrl('app'), { rawPath: '/\\evil.example/steal' });
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });

  it('ignores the host of an absolute-form request target', async () => {
    const location = await loginWithRawTarget('http://evil.example/steal?x=1');
    expect(location).toBe(s.fe.shareUrl('app', '/steal?x=1'));
  });

  it('does not treat foreign or decorated Host headers as shares', async () => {
    const agent = new HttpUserAgent();
    for (const host of ['evil.example', `app.share.weft.test.evil.example`, `app.share.weft.test:1@evil.example`, `a.b.share.weft.test`]) {
      const res = await agent.request(s.fe.shareUrl('app', '/'), { headers: { host } });
      expect(res.status, host).toBe(404);
      expect(res.headers.location, host).toBeUndefined();
    }
  });

  it('refuses a (validly sealed) state whose original URL is off-share', async () => {
    // Defence in depth: even a state the frontend signed must point at its own share.
    const states = new LoginStates(deriveKeys(s.fe.config.oauth!.signing_key, s.fe.config.oauth!.encryption_key), {
      cookieName: COOKIE_NAME,
      cookieDomain: COOKIE_DOMAIN,
      secure: false,
      lifetimeMs: 300_000,
    });
    const agent = new HttpUserAgent();
    const { callbackUrl } = await s.startLogin(agent, 'app');
    for (const originalUrl of ['https://evil.example/', s.fe.shareUrl('other', '/'), 'javascript:alert(1)//app.share.weft.test']) {
      const forged = await states.create({ provider: 'github', share: 'app', originalUrl }, Date.now());
      const [pair] = forged.bindingCookie.split(';');
      const eq = pair.indexOf('=');
      agent.setCookie({ name: pair.slice(0, eq), value: pair.slice(eq + 1), domain: COOKIE_DOMAIN });
      const url = new URL(callbackUrl);
      url.searchParams.set('state', forged.state);
      const res = await agent.request(url.href);
      expect(res.status, originalUrl).toBe(400);
      expect(res.headers.location, originalUrl).toBeUndefined();
      expect(res.body).not.toContain('evil.example');
    }
  });
});
