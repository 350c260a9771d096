// Who may enter, beyond email globs: GitHub organizations and teams (GitHub's API, with read:org asked for only when
// needed, paginated lists, checked again at each re-verification), OIDC claims (ID token or userinfo, string or list),
// the Google Workspace domain (hd); refusals naming the kind of rule, never its values; PKCE for GitHub.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COOKIE_NAME,
  freePort,
  HttpUserAgent,
  startEchoBackend,
  startTestFrontend,
  testClock,
  type EchoBackend,
  type TestFrontend,
} from '../support/browser';
import { startFakeGithub, type FakeGithub } from '../support/fakeGithub';
import { startFakeGoogle, type FakeGoogle } from '../support/fakeGoogle';
import { signInAtOidcProvider, startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';

const GH = { clientId: 'Iv1.rules', clientSecret: 'rules-github-secret-0123456789' };
const GG = { clientId: 'rules.apps.googleusercontent.com', clientSecret: 'rules-google-secret' };
const OIDC = { clientId: 'weft-rules', clientSecret: 'rules-oidc-secret-0123456789' };
const HOUR = 3_600_000;

describe('frontend: organization, team, claim and Google domain rules', () => {
  let gh: FakeGithub;
  let google: FakeGoogle;
  let idp: TestOidcProvider;
  let idTokenIdp: TestOidcProvider;
  let backend: EchoBackend;
  let fe: TestFrontend;
  const clock = testClock();

  beforeAll(async () => {
    const oauthPort = await freePort();
    const callback = (name: string) => `http://auth.weft.test:${oauthPort}/${name}/auth/callback`;
    gh = await startFakeGithub(GH);
    const email = (login: string) => [{ email: `${login}@example.test`, primary: true, verified: true, visibility: 'public' as const }];
    for (const login of ['octo', 'outsider', 'teammate', 'many']) gh.setUser(login, email(login));
    gh.setOrgs('octo', ['Acme']);
    gh.setOrgs('outsider', [{ org: 'elsewhere', public: true }]);
    gh.setTeams('teammate', ['partner/platform']);
    // more memberships than one page holds: acme is on the second page of 100
    gh.setOrgs('many', [...Array.from({ length: 150 }, (_, i) => `org-${i}`), 'acme']);
    google = await startFakeGoogle(GG);
    google.setUser('ws', { email: 'ws@corp.test', verifiedEmail: true, hostedDomain: 'corp.test' });
    google.setUser('consumer', { email: 'someone@gmail.test', verifiedEmail: true });
    idp = await startOidcProvider({ clients: [{ ...OIDC, redirectUris: [callback('corp')] }], extraClaims: ['groups', 'dept'] });
    idp.setAccount('admin', { email: 'admin@corp.test', emailVerified: true, claims: { groups: ['staff', 'admins'] } });
    idp.setAccount('staff', { email: 'staff@corp.test', emailVerified: true, claims: { groups: ['staff'], dept: 'ops' } });
    idTokenIdp = await startOidcProvider({
      clients: [{ ...OIDC, redirectUris: [callback('corp-id')] }],
      extraClaims: ['dept'],
      idTokenClaims: true,
    });
    idTokenIdp.setAccount('ops', { email: 'ops@corp.test', emailVerified: true, claims: { dept: 'ops' } });
    backend = await startEchoBackend();
    const oidc = (name: string, issuer: string) => ({
      name,
      type: 'oidc' as const,
      client_id: OIDC.clientId,
      client_secret: OIDC.clientSecret,
      issuer,
      scopes: ['openid', 'email'],
      supports_pkce: true,
    });
    const share = (token: string, oauth: Record<string, unknown>) => ({
      token,
      backendMode: 'proxy' as const,
      target: backend.url,
      oauth: { emailPatterns: [], checkIntervalMs: HOUR, ...oauth } as never,
    });
    fe = await startTestFrontend({
      oauthPort,
      now: clock.now,
      providers: [
        { name: 'github', type: 'idp_a', client_id: GH.clientId, client_secret: GH.clientSecret, ...gh.endpoints },
        { name: 'google', type: 'idp_b', client_id: GG.clientId, client_secret: GG.clientSecret, ...google.endpoints },
        oidc('corp', idp.issuer),
        oidc('corp-id', idTokenIdp.issuer),
      ],
      shares: [
        share('org', { provider: 'github', githubOrgs: ['acme'], emailPatterns: ['*@example.test'] }),
        share('team', { provider: 'github', githubTeams: ['partner/platform'] }),
        share('plain', { provider: 'github' }),
        share('claims', { provider: 'corp', claims: [{ name: 'groups', value: 'admins' }] }),
        share('idclaims', { provider: 'corp-id', claims: [{ name: 'dept', value: 'ops' }] }),
        share('workspace', { provider: 'google', googleDomains: ['corp.test'] }),
      ],
    });
  });

  afterAll(async () => {
    await fe?.close();
    await backend?.close();
    await gh?.close();
    await google?.close();
    await idp?.close();
    await idTokenIdp?.close();
  });

  async function githubLogin(agent: HttpUserAgent, share: string, login: string) {
    gh.signInAs(login);
    const start = await agent.request(fe.shareUrl(share, '/'));
    const authorize = new URL(start.location!);
    const back = await agent.request(start.location!);
    return { authorize, callback: await agent.request(back.location!) };
  }

  it('GitHub: PKCE S256 on every login, and read:org asked for only when the share checks memberships', async () => {
    const plain = await githubLogin(new HttpUserAgent(), 'plain', 'octo');
    expect(plain.authorize.searchParams.get('scope')).toBe('user:email');
    expect(plain.authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(plain.authorize.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(plain.callback.status).toBe(302); // the fake checked the code_verifier against the challenge
    const org = await githubLogin(new HttpUserAgent(), 'org', 'octo');
    expect(org.authorize.searchParams.get('scope')).toBe('user:email read:org');
    expect(org.callback.status).toBe(302);
  });

  it('GitHub organizations: a member (private membership, any case) is let in, an outsider sees which kind of rule refused them', async () => {
    const agent = new HttpUserAgent();
    const { callback } = await githubLogin(agent, 'org', 'octo');
    expect(callback.location).toBe(fe.shareUrl('org', '/'));
    expect((await agent.request(fe.shareUrl('org', '/'))).json().headers['svc-auth-email']).toBe('octo@example.test');

    const refused = await githubLogin(new HttpUserAgent(), 'org', 'outsider');
    expect(refused.callback.status).toBe(403);
    expect(refused.callback.body).toContain('your GitHub account is not a member of an organization or team allowed to access this share');
    expect(refused.callback.body).not.toMatch(/acme|Acme/); // the allowed values are not shown
    expect(refused.callback.body).toContain(`href="${fe.endpointUrl}/github/logout?redirect_url=`);
    expect(gh.revokedTokens.length).toBeGreaterThan(0); // a refused user's token is revoked
  });

  it('GitHub organizations: the list is followed across pages', async () => {
    const agent = new HttpUserAgent();
    const { callback } = await githubLogin(agent, 'org', 'many');
    expect(callback.status).toBe(302);
    expect(gh.apiRequests).toContain('GET /api/user/orgs?per_page=100&page=2');
  });

  it('GitHub teams: org/slug from /user/teams', async () => {
    expect((await githubLogin(new HttpUserAgent(), 'team', 'teammate')).callback.status).toBe(302);
    const refused = await githubLogin(new HttpUserAgent(), 'team', 'octo');
    expect(refused.callback.status).toBe(403);
    expect(refused.callback.body).not.toContain('platform');
  });

  it('re-verification asks GitHub again: a member who left is refused at the next check, and the cookie goes', async () => {
    gh.setOrgs('octo', ['acme']);
    const agent = new HttpUserAgent();
    await githubLogin(agent, 'org', 'octo');
    expect((await agent.request(fe.shareUrl('org', '/'))).status).toBe(200);
    gh.setOrgs('octo', ['elsewhere']);
    expect((await agent.request(fe.shareUrl('org', '/'))).status).toBe(200); // not due yet
    clock.advance(HOUR);
    const asked = gh.apiRequests.length;
    const res = await agent.request(fe.shareUrl('org', '/'));
    expect(res.status).toBe(403);
    expect(res.body).toContain('not a member of an organization or team');
    expect(gh.apiRequests.slice(asked)).toEqual(['GET /api/user/emails', 'GET /api/user/orgs?per_page=100']);
    expect(res.setCookies.some((c) => c.startsWith(`${COOKIE_NAME}_org=;`))).toBe(true);
    expect(agent.cookie(`${COOKIE_NAME}_org`)).toBeUndefined();
    gh.setOrgs('octo', ['Acme']);
  });

  it('a share whose rules changed re-verifies its sessions at once', async () => {
    const agent = new HttpUserAgent();
    await githubLogin(agent, 'org', 'octo');
    expect((await agent.request(fe.shareUrl('org', '/'))).status).toBe(200);
    const share = fe.shares.get('org')!;
    fe.shares.set('org', { ...share, oauth: { ...share.oauth!, githubOrgs: [], githubTeams: ['partner/platform'] } });
    try {
      const res = await agent.request(fe.shareUrl('org', '/'));
      expect(res.status).toBe(403);
      expect(res.body).toContain('not a member of an organization or team');
    } finally {
      fe.shares.set('org', share);
    }
  });

  it('a session whose token cannot list private memberships (no read:org) signs in again instead of being refused', async () => {
    const agent = new HttpUserAgent();
    await githubLogin(agent, 'plain', 'octo'); // scope user:email
    expect((await agent.request(fe.shareUrl('plain', '/'))).status).toBe(200);
    const share = fe.shares.get('plain')!;
    fe.shares.set('plain', { ...share, oauth: { ...share.oauth!, githubOrgs: ['acme'] } });
    try {
      const res = await agent.request(fe.shareUrl('plain', '/'));
      expect(res.status).toBe(302);
      expect(new URL(res.location!).searchParams.get('scope')).toBe('user:email read:org');
    } finally {
      fe.shares.set('plain', share);
    }
  });

  async function oidcLogin(share: string, login: string) {
    const agent = new HttpUserAgent();
    const start = await agent.request(fe.shareUrl(share, '/'));
    const callback = await agent.request(await signInAtOidcProvider(agent, start.location!, login));
    return { agent, callback };
  }

  it('claims: a list claim from userinfo containing the value lets in; without it, the claim rule refuses', async () => {
    const { agent, callback } = await oidcLogin('claims', 'admin');
    expect(callback.status).toBe(302);
    expect((await agent.request(fe.shareUrl('claims', '/'))).json().headers['svc-auth-email']).toBe('admin@corp.test');
    const refused = await oidcLogin('claims', 'staff');
    expect(refused.callback.status).toBe(403);
    expect(refused.callback.body).toContain('does not have a group, role or other claim allowed to access this share');
    expect(refused.callback.body).not.toContain('admins');
  });

  it('claims: a string claim of the ID token', async () => {
    expect((await oidcLogin('idclaims', 'ops')).callback.status).toBe(302);
  });

  it('Google Workspace domain: the hd of userinfo; a consumer account is refused', async () => {
    const login = async (user: string) => {
      const agent = new HttpUserAgent();
      google.signInAs(user);
      const start = await agent.request(fe.shareUrl('workspace', '/'));
      return agent.request((await agent.request(start.location!)).location!);
    };
    expect((await login('ws')).status).toBe(302);
    const refused = await login('consumer');
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('not in a Google Workspace domain allowed to access this share');
    expect(refused.body).not.toContain('corp.test');
  });

  it('API requests refused by a rule get 403 JSON with the kind of rule', async () => {
    const agent = new HttpUserAgent();
    await githubLogin(agent, 'team', 'teammate');
    const share = fe.shares.get('team')!;
    fe.shares.set('team', { ...share, oauth: { ...share.oauth!, githubTeams: ['partner/other'] } });
    try {
      const res = await agent.request(fe.shareUrl('team', '/'), { headers: { accept: 'application/json' } });
      expect(res.status).toBe(403);
      expect(res.json()).toEqual({ error: 'forbidden', reason: 'github_membership', email: 'teammate@example.test' });
    } finally {
      fe.shares.set('team', share);
    }
  });
});
