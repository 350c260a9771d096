// Negative: logout redirects only to shares or the frontend's own endpoint; anything else goes
// to the provider's login page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpUserAgent } from '../support/browser';
import { startGithubScenario, type GithubScenario } from '../support/fakeGithub';

describe('negative: open redirect through logout', () => {
  let s: GithubScenario;
  beforeAll(async () => {
    s = await startGithubScenario();
  });
  afterAll(async () => s?.close());

  const logout = (redirect: string) => new HttpUserAgent().request(`${s.fe.endpointUrl}/github/logout?redirect_url=${encodeURIComponent(redirect)}`);

  it('refuses foreign and tricky targets', async () => {
    const loginPage = `${s.fe.endpointUrl}/github/login`;
    for (const target of [
      'https://evil.example/',
      '//evil.example/',
      '///evil.example/',
      'javascript:alert(1)',
      'JavaScript:alert(document.domain)//app.share.weft.test',
      'data:text/html,<script>alert(1)</script>',
      'http:\\\\evil.example',
      'http:/\\evil.example',
      'https://evil.example\\@app.share.weft.test/',
      'https://app.share.weft.test@evil.example/',
      'https://user:pass@app.share.weft.test/',
      'https://app.share.weft.test.evil.example/',
      'https://share.weft.test/',
      'https://a.b.share.weft.test/',
      'https://evilshare.weft.test/',
      'http://auth.weft.test:1/',
      'http://app.share.weft.test\t.evil.example/',
      ' https://app.share.weft.test/',
      '/relative/path',
      'ftp://app.share.weft.test/',
      '',
    ]) {
      const res = await logout(target);
      expect(res.status, target).toBe(302);
      expect(res.headers.location, target).toBe(loginPage);
    }
  });

  it('allows shares and the frontend itself', async () => {
    for (const target of [
      s.fe.shareUrl('app', '/after?x=1'),
      'https://other.share.weft.test/',
      `${s.fe.endpointUrl}/github/login`,
      `${s.fe.endpointUrl}/`,
    ]) {
      expect((await logout(target)).headers.location, target).toBe(target);
    }
  });
});
