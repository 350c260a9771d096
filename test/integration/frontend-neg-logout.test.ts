// Negative: logout is idempotent, checks the provider in the path, and touches only that
// provider's sessions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_DOMAIN, COOKIE_NAME, HttpUserAgent } from '../support/browser';
import { startGithubScenario, type GithubScenario } from '../support/fakeGithub';

describe('negative: logout', () => {
  let s: GithubScenario;
  beforeAll(async () => {
    s = await startGithubScenario();
  });
  afterAll(async () => s?.close());

  it('is idempotent without a session', async () => {
    const agent = new HttpUserAgent();
    for (let i = 0; i < 2; i++) {
      const res = await agent.request(`${s.fe.endpointUrl}/github/logout`);
      expect(res.status).toBe(302);
      expect(res.location).toBe(`${s.fe.endpointUrl}/github/login`);
    }
  });

  it('answers 404 for an unknown provider name and 405 for other methods', async () => {
    const agent = new HttpUserAgent();
    expect((await agent.request(`${s.fe.endpointUrl}/nope/logout`)).status).toBe(404);
    expect((await agent.request(`${s.fe.endpointUrl}/nope/auth/callback?code=x&state=y`)).status).toBe(404);
    expect((await agent.request(`${s.fe.endpointUrl}/github/other`)).status).toBe(404);
    expect((await agent.request(`${s.fe.endpointUrl}/github/logout`, { method: 'POST', body: '' })).status).toBe(405);
  });

  it('only clears sessions of the provider in the path', async () => {
    const agent = new HttpUserAgent();
    await s.login(agent, 'app'); // github
    await s.login(agent, 'alt'); // github2
    const res = await agent.request(`${s.fe.endpointUrl}/github2/logout`);
    expect(res.setCookies.map((c) => c.split('=')[0])).toEqual([`${COOKIE_NAME}_alt`]);
    expect(agent.cookie(`${COOKIE_NAME}_alt`)).toBeUndefined();
    expect((await agent.request(s.fe.shareUrl('app', '/'))).status).toBe(200);
  });

  it('clears every session of that provider and revokes each token once', async () => {
    const agent = new HttpUserAgent();
    await s.login(agent, 'app');
    await s.login(agent, 'other');
    const revokedBefore = s.gh.revokedTokens.length;
    const res = await agent.request(`${s.fe.endpointUrl}/github/logout`);
    expect(res.setCookies.map((c) => c.split('=')[0]).sort()).toEqual([`${COOKIE_NAME}_app`, `${COOKIE_NAME}_other`]);
    expect(s.gh.revokedTokens.length).toBe(revokedBefore + 2);
    expect(agent.cookie(`${COOKIE_NAME}_app`)).toBeUndefined();
    expect(agent.cookie(`${COOKIE_NAME}_other`)).toBeUndefined();
  });

  it('ignores tampered cookies without failing', async () => {
    const agent = new HttpUserAgent();
    agent.setCookie({ name: `${COOKIE_NAME}_app`, value: 'tampered.value.x.y.z', domain: COOKIE_DOMAIN });
    const res = await agent.request(`${s.fe.endpointUrl}/github/logout`);
    expect(res.status).toBe(302);
  });

  it('answers /health on the OAuth listener', async () => {
    expect((await new HttpUserAgent().request(`${s.fe.endpointUrl}/health`)).json()).toEqual({ status: 'ok' });
  });
});
