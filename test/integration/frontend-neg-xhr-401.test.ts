// Negative: scripts and API clients without a session get 401 JSON, not a provider redirect.
import http from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_NAME, HttpUserAgent } from '../support/browser';
import { startGithubScenario, type GithubScenario } from '../support/fakeGithub';

describe('negative: XHR / API requests without a session', () => {
  let s: GithubScenario;
  beforeAll(async () => {
    s = await startGithubScenario();
  });
  afterAll(async () => s?.close());

  const API_LIKE: Array<Record<string, string>> = [
    { 'x-requested-with': 'XMLHttpRequest', accept: '*/*' },
    { accept: 'application/json' },
    { accept: 'application/json, text/html;q=0.5' },
    { accept: 'application/json, */*' },
    { 'sec-fetch-mode': 'cors', accept: '*/*' },
    { 'sec-fetch-mode': 'no-cors', accept: 'image/avif,image/webp,*/*' },
    // fetch() / XHR over http: browsers send no Sec-Fetch-* there, and Accept: */*
    { accept: '*/*' },
    { accept: 'text/plain, */*; q=0.01' },
    // Sec-Fetch-Mode decides when present
    { 'sec-fetch-mode': 'cors', accept: 'text/html' },
  ];

  it('answers 401 JSON without Location or login cookies', async () => {
    for (const headers of API_LIKE) {
      const res = await new HttpUserAgent().request(s.fe.shareUrl('app', '/api/data'), { headers });
      const label = JSON.stringify(headers);
      expect(res.status, label).toBe(401);
      expect(res.headers['content-type'], label).toContain('application/json');
      expect(res.json(), label).toMatchObject({ error: 'authentication_required', provider: 'github' });
      expect(res.headers.location, label).toBeUndefined();
      expect(
        res.setCookies.some((c) => c.startsWith(COOKIE_NAME)),
        label,
      ).toBe(false);
    }
  });

  it('still redirects top-level navigations', async () => {
    const navigations: Array<Record<string, string>> = [
      { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'sec-fetch-mode': 'navigate' },
      { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }, // a navigation over http
      { accept: 'text/html, application/json' },
    ];
    for (const headers of navigations) {
      const res = await new HttpUserAgent().request(s.fe.shareUrl('app', '/'), { headers });
      expect(res.status, JSON.stringify(headers)).toBe(302);
    }
  });

  it('answers 401 to a WebSocket upgrade without a session', async () => {
    const u = new URL(s.fe.shareUrl('app', '/ws'));
    const req = http.request({
      hostname: '127.0.0.1',
      port: u.port,
      path: '/ws',
      headers: {
        host: u.host,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    });
    req.end();
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    expect(res.statusCode).toBe(401);
    res.resume();
    expect(s.backend.requests).toHaveLength(0);
  });

  it('answers 401 to XHR when the check interval has passed and the session cannot be re-verified (its GitHub token was revoked)', async () => {
    const agent = new HttpUserAgent();
    await s.login(agent, 'app');
    expect((await agent.request(s.fe.shareUrl('app', '/'), { headers: { accept: 'application/json' } })).status).toBe(200);
    s.clock.advance(3_600_000);
    s.gh.forgetTokens();
    expect((await agent.request(s.fe.shareUrl('app', '/'), { headers: { accept: 'application/json' } })).status).toBe(401);
  });
});
