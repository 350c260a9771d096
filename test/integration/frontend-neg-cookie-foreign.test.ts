// Negative: a session belongs to one share and one provider; cookies of other shares or
// providers (even renamed) do not open a share.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_DOMAIN, COOKIE_NAME, HttpUserAgent } from '../support/browser';
import { startGithubScenario, type GithubScenario } from '../support/fakeGithub';

describe('negative: foreign session cookies', () => {
  let s: GithubScenario;
  beforeAll(async () => {
    s = await startGithubScenario();
  });
  afterAll(async () => s?.close());

  it('does not share a session between shares of the same provider', async () => {
    const agent = new HttpUserAgent();
    await s.login(agent, 'app');
    expect((await agent.request(s.fe.shareUrl('app', '/'))).status).toBe(200);
    const other = await agent.request(s.fe.shareUrl('other', '/'));
    expect(other.status).toBe(302);
    expect(other.location).toContain(s.gh.endpoints.auth_url);
  });

  it("refuses another share's cookie presented under this share's name", async () => {
    const agent = new HttpUserAgent();
    await s.login(agent, 'app');
    const appSession = agent.cookie(`${COOKIE_NAME}_app`)!;
    const thief = new HttpUserAgent();
    thief.setCookie({ name: `${COOKIE_NAME}_other`, value: appSession.value, domain: COOKIE_DOMAIN });
    expect((await thief.request(s.fe.shareUrl('other', '/'), { headers: { accept: 'application/json' } })).status).toBe(401);
  });

  it('refuses a cookie issued for another provider', async () => {
    const agent = new HttpUserAgent();
    await s.login(agent, 'alt'); // provider github2
    const altSession = agent.cookie(`${COOKIE_NAME}_alt`)!;
    expect((await agent.request(s.fe.shareUrl('alt', '/'))).status).toBe(200);
    // The share now asks for provider "github": the github2 session must not count.
    const original = s.fe.shares.get('alt')!;
    s.fe.shares.set('alt', { ...original, oauth: { ...original.oauth!, provider: 'github' } });
    try {
      const thief = new HttpUserAgent();
      thief.setCookie({ name: `${COOKIE_NAME}_alt`, value: altSession.value, domain: COOKIE_DOMAIN });
      expect((await thief.request(s.fe.shareUrl('alt', '/'), { headers: { accept: 'application/json' } })).status).toBe(401);
    } finally {
      s.fe.shares.set('alt', original);
    }
  });

  it("refuses a session whose email no longer matches the share's patterns", async () => {
    const agent = new HttpUserAgent();
    await s.login(agent, 'app');
    const original = s.fe.shares.get('app')!;
    s.fe.shares.set('app', { ...original, oauth: { ...original.oauth!, emailPatterns: ['*@elsewhere.test'] } });
    try {
      const res = await agent.request(s.fe.shareUrl('app', '/'));
      expect(res.status).toBe(403);
      expect(res.body).toContain('octo@example.test');
      const api = await agent.request(s.fe.shareUrl('app', '/'), { headers: { accept: 'application/json' } });
      expect(api.status).toBe(403);
      expect(api.json()).toMatchObject({ error: 'forbidden', reason: 'email_not_allowed' });
    } finally {
      s.fe.shares.set('app', original);
    }
  });
});
