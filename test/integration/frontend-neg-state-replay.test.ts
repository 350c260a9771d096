// Negative: a state (with its code) can be used once, even with the binding cookie replayed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_NAME, HttpUserAgent } from '../support/browser';
import { startGithubScenario, type GithubScenario } from '../support/fakeGithub';

describe('negative: replayed state', () => {
  let s: GithubScenario;
  beforeAll(async () => {
    s = await startGithubScenario();
  });
  afterAll(async () => s?.close());

  it('refuses the same callback a second time', async () => {
    const agent = new HttpUserAgent();
    const { callbackUrl } = await s.startLogin(agent, 'app');
    const binding = [...agent.jar.values()].find((c) => c.name.startsWith(`${COOKIE_NAME}.flow.`))!;
    const first = await agent.request(callbackUrl);
    expect(first.status).toBe(302);
    expect(first.setCookies.some((c) => c.startsWith(`${binding.name}=;`))).toBe(true); // binding cookie cleared

    // Same browser again (binding cookie gone).
    const again = await agent.request(callbackUrl);
    expect(again.status).toBe(400);

    // An attacker who captured both the callback URL and the binding cookie.
    const attacker = new HttpUserAgent();
    attacker.setCookie({ ...binding });
    const replay = await attacker.request(callbackUrl);
    expect(replay.status).toBe(400);
    expect(replay.body).toContain('already been used');
    expect(replay.setCookies.some((c) => c.startsWith(`${COOKIE_NAME}_app=`) && !c.startsWith(`${COOKIE_NAME}_app=;`))).toBe(false);
    expect(attacker.cookie(`${COOKIE_NAME}_app`)).toBeUndefined();
  });

  it('refuses a second use even while the first is still being processed', async () => {
    const agent = new HttpUserAgent();
    const { callbackUrl } = await s.startLogin(agent, 'app');
    const results = await Promise.all([agent.request(callbackUrl), agent.request(callbackUrl), agent.request(callbackUrl)]);
    expect(results.map((r) => r.status).sort()).toEqual([302, 400, 400]);
  });
});
