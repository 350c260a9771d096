// Negative: tampered, malformed or expired session cookies count as no session — and never crash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_DOMAIN, COOKIE_NAME, HttpUserAgent } from '../support/browser';
import { startGithubScenario, type GithubScenario } from '../support/fakeGithub';

describe('negative: tampered session cookie', () => {
  let s: GithubScenario;
  let genuine: string;
  beforeAll(async () => {
    s = await startGithubScenario();
    const agent = new HttpUserAgent();
    await s.login(agent, 'app');
    genuine = agent.cookie(`${COOKIE_NAME}_app`)!.value;
  });
  afterAll(async () => s?.close());

  async function expectNoSession(value: string, label: string) {
    const agent = new HttpUserAgent();
    agent.setCookie({ name: `${COOKIE_NAME}_app`, value, domain: COOKIE_DOMAIN });
    const nav = await agent.request(s.fe.shareUrl('app', '/'));
    expect(nav.status, label).toBe(302);
    expect(nav.location, label).toContain(s.gh.endpoints.auth_url);
    const api = await agent.request(s.fe.shareUrl('app', '/'), { headers: { accept: 'application/json' } });
    expect(api.status, label).toBe(401);
  }

  it('accepts the genuine cookie (control)', async () => {
    const agent = new HttpUserAgent();
    agent.setCookie({ name: `${COOKIE_NAME}_app`, value: genuine, domain: COOKIE_DOMAIN });
    expect((await agent.request(s.fe.shareUrl('app', '/'))).status).toBe(200);
  });

  it('refuses modified ciphertext, IV, tag and header', async () => {
    const parts = genuine.split('.');
    expect(parts).toHaveLength(5);
    for (const i of [0, 2, 3, 4]) {
      const copy = [...parts];
      const p = copy[i];
      copy[i] = p.slice(0, 5) + (p[5] === 'x' ? 'y' : 'x') + p.slice(6);
      await expectNoSession(copy.join('.'), `segment ${i}`);
    }
  });

  it('refuses truncated, extended and rearranged values', async () => {
    await expectNoSession(genuine.slice(0, -1), 'truncated');
    await expectNoSession(`${genuine}A`, 'extended');
    const [h, k, iv, c, t] = genuine.split('.');
    await expectNoSession([h, k, c, iv, t].join('.'), 'swapped');
  });

  it('refuses garbage without failing', async () => {
    for (const value of ['', 'null', '"quoted"', '%ZZ', '....', 'a'.repeat(7000), Buffer.from('{"prv":"github"}').toString('base64url')]) {
      await expectNoSession(value, value.slice(0, 20));
    }
    const agent = new HttpUserAgent();
    const res = await agent.request(s.fe.shareUrl('app', '/'), { headers: { cookie: `=;;=; ${COOKIE_NAME}_app; ${COOKIE_NAME}_app==; ;` } });
    expect(res.status).toBe(302);
  });

  it('refuses the cookie after session_lifetime', async () => {
    const agent = new HttpUserAgent();
    agent.setCookie({ name: `${COOKIE_NAME}_app`, value: genuine, domain: COOKIE_DOMAIN });
    s.clock.advance(6 * 3_600_000 + 1_000);
    try {
      expect((await agent.request(s.fe.shareUrl('app', '/'))).status).toBe(302);
    } finally {
      s.clock.advance(-(6 * 3_600_000 + 1_000));
    }
  });

  it('is still healthy afterwards', async () => {
    const base = `http://127.0.0.1:${s.fe.handle.publicAddress.port}`;
    expect((await new HttpUserAgent().request(`${base}/health`)).json()).toEqual({ status: 'ok' });
  });
});
