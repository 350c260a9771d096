// Negative: the state is bound to the browser that started the login (login CSRF / fixation).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_DOMAIN, COOKIE_NAME, HttpUserAgent } from '../support/browser';
import { startGithubScenario, type GithubScenario } from '../support/fakeGithub';

describe('negative: state binding cookie', () => {
  let s: GithubScenario;
  beforeAll(async () => {
    s = await startGithubScenario();
  });
  afterAll(async () => s?.close());

  const bindingOf = (agent: HttpUserAgent) => [...agent.jar.values()].filter((c) => c.name.startsWith(`${COOKIE_NAME}.flow.`));

  it('sets an HttpOnly, SameSite=Lax binding cookie on cookie_domain', async () => {
    const agent = new HttpUserAgent();
    await s.startLogin(agent, 'app');
    const [binding] = bindingOf(agent);
    expect(binding).toMatchObject({ domain: COOKIE_DOMAIN, httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(binding.value.length).toBeGreaterThanOrEqual(40);
  });

  it('refuses a callback opened in another browser (no binding cookie): login fixation', async () => {
    const attacker = new HttpUserAgent();
    const { callbackUrl } = await s.startLogin(attacker, 'app');
    const victim = new HttpUserAgent();
    const res = await victim.request(callbackUrl);
    expect(res.status).toBe(400);
    expect(res.body).toContain('not started in this browser');
    expect(victim.cookie(`${COOKIE_NAME}_app`)).toBeUndefined();
  });

  it('refuses a binding cookie with a different value', async () => {
    const agent = new HttpUserAgent();
    const { callbackUrl } = await s.startLogin(agent, 'app');
    const [binding] = bindingOf(agent);
    agent.setCookie({ ...binding, value: `${binding.value.slice(0, -2)}xx` });
    const res = await agent.request(callbackUrl);
    expect(res.status).toBe(400);
    expect(agent.cookie(`${COOKIE_NAME}_app`)).toBeUndefined();
  });

  it('refuses the binding cookie of another login', async () => {
    const agent = new HttpUserAgent();
    await s.startLogin(agent, 'app');
    const [first] = bindingOf(agent);
    const { callbackUrl } = await s.startLogin(agent, 'app');
    const second = bindingOf(agent).find((c) => c.name !== first.name)!;
    agent.deleteCookie(second.name);
    agent.setCookie({ ...first, name: second.name }); // first login's value under the second's name
    const res = await agent.request(callbackUrl);
    expect(res.status).toBe(400);
  });

  it('accepts parallel logins in one browser (each has its own binding)', async () => {
    const agent = new HttpUserAgent();
    const a = await s.startLogin(agent, 'app', '/a');
    const b = await s.startLogin(agent, 'other', '/b');
    expect((await agent.request(b.callbackUrl)).location).toBe(s.fe.shareUrl('other', '/b'));
    expect((await agent.request(a.callbackUrl)).location).toBe(s.fe.shareUrl('app', '/a'));
  });
});
