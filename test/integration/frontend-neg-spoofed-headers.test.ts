// Negative: client-sent svc-auth-* headers never reach a backend; the frontend's own values do.
import { WebSocket } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_NAME, HttpUserAgent, loopbackDispatcher } from '../support/browser';
import { startGithubScenario, type GithubScenario } from '../support/fakeGithub';

const SPOOFED = {
  'svc-auth-email': 'ceo@example.test',
  'Svc-Auth-Provider': 'github',
  'SVC-AUTH-EXPIRES': '2999-01-01T00:00:00Z',
  'svc-auth-anything': 'x',
};

describe('negative: spoofed svc-auth-* headers', () => {
  let s: GithubScenario;
  const dispatcher = loopbackDispatcher();
  beforeAll(async () => {
    s = await startGithubScenario();
  });
  afterAll(async () => {
    await dispatcher.close();
    await s?.close();
  });

  it('strips them on a share without OAuth', async () => {
    const res = await new HttpUserAgent().request(s.fe.shareUrl('open', '/'), { headers: SPOOFED });
    const h = res.json().headers;
    expect(Object.keys(h).filter((k) => k.startsWith('svc-auth-'))).toEqual([]);
  });

  it('replaces them on a protected share with the session\'s values', async () => {
    const agent = new HttpUserAgent();
    await s.login(agent, 'app');
    const res = await agent.request(s.fe.shareUrl('app', '/'), { headers: SPOOFED });
    const h = res.json().headers;
    expect(h['svc-auth-email']).toBe('octo@example.test');
    expect(h['svc-auth-provider']).toBe('github');
    expect(h['svc-auth-expires']).not.toBe('2999-01-01T00:00:00Z');
    expect(h['svc-auth-anything']).toBeUndefined();
    expect(h.cookie ?? '').not.toContain(COOKIE_NAME);
  });

  it('replaces them on WebSocket upgrades too', async () => {
    const agent = new HttpUserAgent();
    await s.login(agent, 'app');
    const cookie = `${COOKIE_NAME}_app=${agent.cookie(`${COOKIE_NAME}_app`)!.value}; theme=1`;
    const ws = new WebSocket(s.fe.shareUrl('app', '/ws').replace(/^http/, 'ws'), { dispatcher, headers: { ...SPOOFED, cookie } });
    const hello = await new Promise<any>((resolve, reject) => {
      ws.onmessage = (e) => resolve(JSON.parse(String(e.data)));
      ws.onerror = () => reject(new Error('websocket failed'));
    });
    ws.close();
    expect(hello.headers['svc-auth-email']).toBe('octo@example.test');
    expect(hello.headers['svc-auth-anything']).toBeUndefined();
    expect(hello.headers.cookie).toBe('theme=1');
  });
});
