// Negative: a state older than intermediate_lifetime (5m here) is refused (clock injected).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_NAME, HttpUserAgent } from '../support/browser';
import { startGithubScenario, type GithubScenario } from '../support/fakeGithub';

describe('negative: expired state', () => {
  let s: GithubScenario;
  beforeAll(async () => {
    s = await startGithubScenario();
  });
  afterAll(async () => s?.close());

  it('refuses a state after intermediate_lifetime, offering to start again', async () => {
    const agent = new HttpUserAgent();
    const issued = s.gh.issuedTokens.length;
    const { callbackUrl } = await s.startLogin(agent, 'app', '/page?q=1');
    s.clock.advance(5 * 60_000 + 1_000);
    const res = await agent.request(callbackUrl);
    expect(res.status).toBe(400);
    expect(res.body).toContain('expired');
    expect(res.body).toContain(`href="${s.fe.shareUrl('app', '/page?q=1')}"`);
    expect(agent.cookie(`${COOKIE_NAME}_app`)).toBeUndefined();
    expect(s.gh.issuedTokens.length).toBe(issued);
  });

  it('accepts a state just inside intermediate_lifetime', async () => {
    const agent = new HttpUserAgent();
    const { callbackUrl } = await s.startLogin(agent, 'app');
    s.clock.advance(4 * 60_000);
    expect((await agent.request(callbackUrl)).status).toBe(302);
  });

  it('gives the binding cookie the same short lifetime', async () => {
    const agent = new HttpUserAgent();
    const { start } = await s.startLogin(agent, 'app');
    const binding = start.setCookies.find((c) => c.startsWith(`${COOKIE_NAME}.flow.`))!;
    expect(binding).toMatch(/Max-Age=300/);
    expect(binding).toMatch(/HttpOnly/);
  });
});
