// A loopback stand-in for GitHub's OAuth App flow and the parts of its API the frontend uses,
// speaking the real wire format: /login/oauth/authorize (with PKCE S256, supported by GitHub since July 2025),
// /login/oauth/access_token (errors as HTTP 200 + {"error"}), GET /user/emails, GET /user/orgs and GET /user/teams
// (paginated with per_page/page and a Link header; private memberships only with the read:org scope),
// GET /orgs/{org}/members/{username}, DELETE /applications/{client_id}/token (basic auth).
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  startEchoBackend,
  startTestFrontend,
  testClock,
  type AgentResponse,
  type EchoBackend,
  type HttpUserAgent,
  type TestClock,
  type TestFrontend,
} from './browser';
import { json, readBody } from './httpUtil';

export interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
  visibility: 'public' | 'private' | null;
}

/** An organization membership; private ones are listed only to tokens with read:org (as GitHub does). */
export interface GithubOrgMembership {
  org: string;
  public?: boolean;
}

export interface FakeGithub {
  /** The endpoint keys of an idp_a provider entry pointing at this fake (as for GitHub Enterprise). */
  endpoints: { auth_url: string; token_url: string; api_url: string };
  /** Defines (or replaces) an account and its email list. */
  setUser(login: string, emails: GithubEmail[]): void;
  /** The organizations an account is a member of (private unless said otherwise). */
  setOrgs(login: string, orgs: Array<string | GithubOrgMembership>): void;
  /** The teams ("org/slug") an account is a member of. */
  setTeams(login: string, teams: string[]): void;
  /** Invalidates every token issued so far (as revoking the app's grant does). */
  forgetTokens(): void;
  /** Authorization requests seen (query parameters). */
  readonly authorizeRequests: URLSearchParams[];
  /** API requests seen (method and path with query), to check what re-verification asks. */
  readonly apiRequests: string[];
  /** The account the "browser" is signed in as; authorize redirects straight back for it. */
  signInAs(login: string | undefined): void;
  /** When true the next authorize request is answered with error=access_denied. */
  denyNextAuthorization(): void;
  /** Make the revocation endpoint answer 500. */
  failRevocation(fail: boolean): void;
  readonly revokedTokens: string[];
  readonly issuedTokens: string[];
  close(): Promise<void>;
}

interface PendingCode {
  login: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  challenge?: string;
  method?: string;
}

/** One page of a list as GitHub pages it (per_page default 30, max 100), with its Link header. */
function paged<T>(url: URL, base: string, items: T[]): { page: T[]; link?: string } {
  const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 30) || 30));
  const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const at = (n: number) => {
    const u = new URL(`${base}${url.pathname}`);
    u.searchParams.set('per_page', String(perPage));
    u.searchParams.set('page', String(n));
    return u.href;
  };
  const links: string[] = [];
  if (page < last) links.push(`<${at(page + 1)}>; rel="next"`, `<${at(last)}>; rel="last"`);
  if (page > 1) links.push(`<${at(1)}>; rel="first"`, `<${at(page - 1)}>; rel="prev"`);
  return { page: items.slice((page - 1) * perPage, page * perPage), link: links.length ? links.join(', ') : undefined };
}

export async function startFakeGithub(opts: { clientId: string; clientSecret: string }): Promise<FakeGithub> {
  const users = new Map<string, GithubEmail[]>();
  const orgs = new Map<string, GithubOrgMembership[]>();
  const teams = new Map<string, string[]>();
  const codes = new Map<string, PendingCode>();
  const tokens = new Map<string, string>(); // access token -> login
  const scopes = new Map<string, string[]>(); // access token -> granted scopes
  const authorizeRequests: URLSearchParams[] = [];
  const apiRequests: string[] = [];
  let base = '';
  const revokedTokens: string[] = [];
  const issuedTokens: string[] = [];
  let signedIn: string | undefined;
  let denyNext = false;
  let revocationFails = false;

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://github.invalid');

    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      authorizeRequests.push(url.searchParams);
      const clientId = url.searchParams.get('client_id');
      const redirectUri = url.searchParams.get('redirect_uri');
      const state = url.searchParams.get('state');
      if (clientId !== opts.clientId || !redirectUri) {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('unknown application');
        return;
      }
      const back = new URL(redirectUri);
      if (state !== null) back.searchParams.set('state', state);
      if (denyNext) {
        denyNext = false;
        back.searchParams.set('error', 'access_denied');
        back.searchParams.set('error_description', 'The user has denied your application access.');
      } else {
        if (!signedIn) {
          res.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>Sign in to GitHub (fake): call signInAs() first.</p>');
          return;
        }
        const code = randomBytes(10).toString('hex');
        codes.set(code, {
          login: signedIn,
          clientId,
          redirectUri,
          scope: url.searchParams.get('scope') ?? '',
          challenge: url.searchParams.get('code_challenge') ?? undefined,
          method: url.searchParams.get('code_challenge_method') ?? undefined,
        });
        back.searchParams.set('code', code);
      }
      res.writeHead(302, { Location: back.href }).end();
      return;
    }

    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const raw = await readBody(req);
      const params = String(req.headers['content-type']).includes('json')
        ? new URLSearchParams(Object.entries(JSON.parse(raw || '{}') as Record<string, string>))
        : new URLSearchParams(raw);
      if (!String(req.headers.accept).includes('application/json')) {
        res.writeHead(200, { 'Content-Type': 'application/x-www-form-urlencoded' }).end('error=accept_json_expected_by_this_fake');
        return;
      }
      if (params.get('client_id') !== opts.clientId || params.get('client_secret') !== opts.clientSecret) {
        return json(res, 200, {
          error: 'incorrect_client_credentials',
          error_description: 'The client_id and/or client_secret passed are incorrect.',
        });
      }
      const code = params.get('code') ?? '';
      const pending = codes.get(code);
      codes.delete(code);
      if (!pending || pending.clientId !== opts.clientId) {
        return json(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      }
      if (params.get('redirect_uri') && params.get('redirect_uri') !== pending.redirectUri) {
        return json(res, 200, {
          error: 'redirect_uri_mismatch',
          error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
        });
      }
      if (pending.challenge) {
        const verifier = params.get('code_verifier') ?? '';
        const computed = pending.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
        if (computed !== pending.challenge) {
          return json(res, 200, { error: 'bad_verification_code', error_description: 'The code_verifier does not match the code_challenge.' });
        }
      }
      const token = `gho_${randomBytes(18).toString('hex')}`;
      const granted = pending.scope.split(/[\s,]+/).filter(Boolean);
      tokens.set(token, pending.login);
      scopes.set(token, granted);
      issuedTokens.push(token);
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: granted.join(',') });
    }

    if (req.method === 'GET' && url.pathname.startsWith('/api/')) apiRequests.push(`GET ${url.pathname}${url.search}`);
    const bearer = () => tokens.get(String(req.headers.authorization ?? '').replace(/^(Bearer|token)\s+/i, ''));
    const bearerScopes = () => scopes.get(String(req.headers.authorization ?? '').replace(/^(Bearer|token)\s+/i, '')) ?? [];
    // GitHub names an OAuth token's scopes on every API answer
    if (url.pathname.startsWith('/api/') && bearer()) res.setHeader('X-OAuth-Scopes', bearerScopes().join(', '));

    if (req.method === 'GET' && (url.pathname === '/api/user/orgs' || url.pathname === '/api/user/teams')) {
      const login = bearer();
      if (!login) return json(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
      const readOrg = bearerScopes().some((sc) => ['read:org', 'write:org', 'admin:org', 'user'].includes(sc));
      let list: unknown[];
      if (url.pathname === '/api/user/orgs') {
        list = (orgs.get(login) ?? [])
          .filter((m) => m.public || readOrg)
          .map((m, i) => ({ login: m.org, id: 1000 + i, node_id: `O_${m.org}`, url: `${base}/api/orgs/${m.org}`, description: null }));
      } else {
        if (!readOrg) return json(res, 403, { message: 'Resource not accessible by integration', documentation_url: 'https://docs.github.com/rest' });
        list = (teams.get(login) ?? []).map((t, i) => {
          const [org, slug] = t.split('/');
          return { id: 2000 + i, node_id: `T_${slug}`, name: slug, slug, privacy: 'closed', organization: { login: org, id: 1 } };
        });
      }
      const { page, link } = paged(url, base, list);
      if (link) res.setHeader('Link', link);
      return json(res, 200, page);
    }

    const member = /^\/api\/orgs\/([^/]+)\/members\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && member) {
      const login = bearer();
      if (!login) return json(res, 401, { message: 'Bad credentials' });
      const isMember = (orgs.get(decodeURIComponent(member[2]!)) ?? []).some(
        (m) => m.org.toLowerCase() === decodeURIComponent(member[1]!).toLowerCase(),
      );
      if (isMember) return void res.writeHead(204).end();
      return json(res, 404, { message: 'Not Found' });
    }

    if (req.method === 'GET' && url.pathname === '/api/user/emails') {
      if (!req.headers['user-agent'])
        return json(res, 403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header.' });
      const login = bearer();
      if (!login) return json(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
      return json(res, 200, users.get(login) ?? []);
    }

    const revoke = /^\/api\/applications\/([^/]+)\/token$/.exec(url.pathname);
    if (req.method === 'DELETE' && revoke) {
      const body = await readBody(req);
      const expected = `Basic ${Buffer.from(`${opts.clientId}:${opts.clientSecret}`).toString('base64')}`;
      if (decodeURIComponent(revoke[1]) !== opts.clientId || req.headers.authorization !== expected) {
        return json(res, 404, { message: 'Not Found' });
      }
      if (revocationFails) return json(res, 500, { message: 'Server Error' });
      const token = (JSON.parse(body || '{}') as { access_token?: string }).access_token ?? '';
      if (!tokens.delete(token)) return json(res, 404, { message: 'Not Found' });
      revokedTokens.push(token);
      res.writeHead(204).end();
      return;
    }

    json(res, 404, { message: 'Not Found' });
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) json(res, 500, { message: 'fake github error' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    endpoints: { auth_url: `${base}/login/oauth/authorize`, token_url: `${base}/login/oauth/access_token`, api_url: `${base}/api` },
    setUser: (login, emails) => void users.set(login, emails),
    setOrgs: (login, list) =>
      void orgs.set(
        login,
        list.map((o) => (typeof o === 'string' ? { org: o } : o)),
      ),
    setTeams: (login, list) => void teams.set(login, list),
    forgetTokens: () => {
      tokens.clear();
      scopes.clear();
    },
    authorizeRequests,
    apiRequests,
    signInAs: (login) => {
      signedIn = login;
    },
    denyNextAuthorization: () => {
      denyNext = true;
    },
    failRevocation: (fail) => {
      revocationFails = fail;
    },
    revokedTokens,
    issuedTokens,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// A ready-made scenario for negative tests: fake GitHub, echo backend, and a frontend with
//   app   -> provider "github",  patterns *@example.test
//   other -> provider "github",  no patterns
//   alt   -> provider "github2" (a second idp_a entry), no patterns
//   open  -> no OAuth
// and the user "octo" (primary, verified octo@example.test).

export interface GithubScenario {
  gh: FakeGithub;
  backend: EchoBackend;
  fe: TestFrontend;
  clock: TestClock;
  /** Runs the whole login for `share`, returning the responses of each hop. */
  login(
    agent: HttpUserAgent,
    share: string,
    pathAndQuery?: string,
    user?: string,
  ): Promise<{ start: AgentResponse; authorize: AgentResponse; callback: AgentResponse }>;
  /** Starts a login and stops before the callback: returns the callback URL the provider sent. */
  startLogin(agent: HttpUserAgent, share: string, pathAndQuery?: string, user?: string): Promise<{ start: AgentResponse; callbackUrl: string }>;
  close(): Promise<void>;
}

export const GITHUB_CLIENT = { clientId: 'Iv1.scenario', clientSecret: 'scenario-client-secret-0123456789' };

export async function startGithubScenario(opts: { checkIntervalMs?: number } = {}): Promise<GithubScenario> {
  const gh = await startFakeGithub(GITHUB_CLIENT);
  gh.setUser('octo', [{ email: 'octo@example.test', primary: true, verified: true, visibility: 'public' }]);
  const backend = await startEchoBackend();
  const clock = testClock();
  const checkIntervalMs = opts.checkIntervalMs ?? 3_600_000;
  const provider = (name: string) => ({
    name,
    type: 'idp_a' as const,
    client_id: GITHUB_CLIENT.clientId,
    client_secret: GITHUB_CLIENT.clientSecret,
    ...gh.endpoints,
  });
  const fe = await startTestFrontend({
    now: clock.now,
    providers: [provider('github'), provider('github2')],
    shares: [
      { token: 'app', backendMode: 'proxy', target: backend.url, oauth: { provider: 'github', emailPatterns: ['*@example.test'], checkIntervalMs } },
      { token: 'other', backendMode: 'proxy', target: backend.url, oauth: { provider: 'github', emailPatterns: [], checkIntervalMs } },
      { token: 'alt', backendMode: 'proxy', target: backend.url, oauth: { provider: 'github2', emailPatterns: [], checkIntervalMs } },
      { token: 'open', backendMode: 'proxy', target: backend.url },
    ],
  });

  async function startLogin(agent: HttpUserAgent, share: string, pathAndQuery = '/', user = 'octo') {
    gh.signInAs(user);
    const start = await agent.request(fe.shareUrl(share, pathAndQuery));
    if (start.status !== 302 || !start.location) throw new Error(`expected a login redirect, got HTTP ${start.status}`);
    const authorize = await agent.request(start.location);
    if (!authorize.location) throw new Error(`fake GitHub did not redirect back (HTTP ${authorize.status})`);
    return { start, callbackUrl: authorize.location };
  }

  return {
    gh,
    backend,
    fe,
    clock,
    startLogin,
    async login(agent, share, pathAndQuery = '/', user = 'octo') {
      gh.signInAs(user);
      const start = await agent.request(fe.shareUrl(share, pathAndQuery));
      const authorize = await agent.request(start.location!);
      const callback = await agent.request(authorize.location!);
      return { start, authorize, callback };
    },
    async close() {
      await fe.close();
      await backend.close();
      await gh.close();
    },
  };
}
