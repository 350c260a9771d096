// OpenZiti's OIDC authentication (/oidc) as SDKs drive it: discovery, the authorization code flow with PKCE and
// OpenZiti's login steps (certificate, username/password, the TOTP step), the token endpoint (codes single-use and
// short-lived, PKCE, refresh with rotation, token exchange as the Go SDK refreshes), the JWT access token as the
// Client API's bearer token and as the edge router's API session, and what ends it (expiry, logout, revocation).
import { createHash, generateKeyPairSync, randomBytes, sign as cryptoSign } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from 'jose';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oidcIssuer } from '../../src/main/core/auth/oidc';
import { createRootCa, fingerprintSha1 } from '../../src/main/core/pki/index';
import { EdgeType, Header, message } from '../../src/main/router/channel/wire';
import { startTestApp, type TestApp } from '../support/app';
import { ApiClient } from '../support/client';
import { MINUTE, ManualClock } from '../support/clock';
import { enrolledDevice, RawEdge, type Device } from '../support/edge';
import { pemSigningKey, signJwt } from '../support/jwks';
import { authPolicyBody, createUser, epochSeconds, login, secretOf, totp, totpStepStart } from '../support/users';

const REDIRECT = 'http://127.0.0.1:20314/auth/callback';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

/** HTTPS to the controller without following redirects (the SDKs' view of each step). */
class Http {
  readonly agent: Agent;
  constructor(
    readonly base: string,
    ca: string,
    tls?: { cert: string; key: string },
  ) {
    this.agent = new Agent({ connect: { ca, ...(tls ?? {}) } });
  }

  async req(
    method: string,
    path: string,
    opts: { form?: Record<string, string | string[]>; json?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    let body: string | undefined;
    if (opts.form) {
      const p = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.form)) for (const x of Array.isArray(v) ? v : [v]) p.append(k, x);
      body = p.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] = 'application/json';
    }
    const res = await request(this.base + path, { method: method as 'GET', headers, body, dispatcher: this.agent });
    const text = await res.body.text();
    let parsed: unknown = text;
    if (String(res.headers['content-type'] ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.statusCode, headers: res.headers as Reply['headers'], text, body: parsed };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

const location = (r: Reply) => String(r.headers.location ?? '');

/** /oidc/authorize as the Go SDK sends it (GET); the id of the authorization request the login page names. */
async function authorize(
  http: Http,
  opts: { method?: string; clientId?: string; challenge: string; state?: string; scope?: string },
): Promise<string> {
  const q = new URLSearchParams({
    client_id: opts.clientId ?? 'native',
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: opts.scope ?? 'openid offline_access',
    state: opts.state ?? 'st-' + randomBytes(4).toString('hex'),
    code_challenge: opts.challenge,
    code_challenge_method: 'S256',
    prompt: 'Welcome back!',
    ...(opts.method ? { method: opts.method } : {}),
  });
  const r = await http.req('GET', `/oidc/authorize?${q}`);
  expect(r.status).toBe(302);
  const m = /^\/oidc\/login\/(username|cert|ext-jwt)\?authRequestID=([\w-]+)$/.exec(location(r));
  expect(m, location(r)).toBeTruthy();
  return m![2]!;
}

/** The authorize callback: the code and state it sends to the redirect URI (`code` is the last parameter). */
async function callback(http: Http, id: string): Promise<{ code: string; state: string; url: string }> {
  const r = await http.req('GET', `/oidc/authorize/callback?id=${id}`);
  expect(r.status).toBe(302);
  const url = location(r);
  expect(url.startsWith(REDIRECT + '?')).toBe(true);
  expect(url).toMatch(/&code=[\w-]+$/);
  const u = new URL(url);
  return { code: u.searchParams.get('code')!, state: u.searchParams.get('state')!, url };
}

function exchange(http: Http, code: string, verifier: string, clientId = 'native', extra: Record<string, string> = {}) {
  return http.req('POST', '/oidc/oauth/token', {
    form: { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, ...extra },
    headers: { authorization: 'Basic ' + Buffer.from(`${clientId}:`).toString('base64') },
  });
}

let app: TestApp;
let admin: ApiClient;
/** a client with no API session of its own: bearer tokens only */
let anon: ApiClient;
let clock: ManualClock;
let http: Http;
let device: Device;
let deviceHttp: Http;
let serviceId: string;

/** A full certificate login of the test device; its tokens. */
async function certTokens(clientId = 'native'): Promise<{ access_token: string; refresh_token: string; id_token: string; expires_in: number }> {
  const { verifier, challenge } = pkce();
  const id = await authorize(deviceHttp, { method: 'cert', challenge, clientId });
  const posted = await deviceHttp.req('POST', '/oidc/login/cert', { form: { id, configTypes: ['host.v1'] } });
  expect(posted.status).toBe(302);
  const { code } = await callback(deviceHttp, id);
  const t = await exchange(deviceHttp, code, verifier, clientId);
  expect(t.status, t.text).toBe(200);
  return t.body;
}

/** A new admin login (after the clock moved past the legacy session's inactivity timeout). */
async function relogin(): Promise<void> {
  await admin.close();
  admin = await app.adminClient();
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` }, api: 'client' as const });

beforeAll(async () => {
  clock = new ManualClock(totpStepStart());
  app = await startTestApp({ clock });
  admin = await app.adminClient();
  anon = app.client();
  const ca = app.core.pki.caBundlePem;
  http = new Http(app.urls.api, ca);
  device = await enrolledDevice(app, admin, 'oidc-device', ['oidc']);
  deviceHttp = new Http(app.urls.api, ca, { cert: device.cert, key: device.key });
  serviceId = await admin.create('/services', { name: 'oidc-echo', encryptionRequired: false });
  for (const type of ['Dial', 'Bind']) {
    await admin.create('/service-policies', {
      name: `oidc-${type}`,
      type,
      semantic: 'AnyOf',
      identityRoles: ['#oidc'],
      serviceRoles: [`@${serviceId}`],
    });
  }
  await admin.create('/edge-router-policies', { name: 'oidc-erp', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
  await admin.create('/service-edge-router-policies', { name: 'oidc-serp', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] });
});
afterAll(async () => {
  await http?.close();
  await deviceHttp?.close();
  await admin?.close();
  await anon?.close();
  await app?.stop();
});

describe('discovery and advertisement', () => {
  it('advertises OIDC_AUTH and the edge-oidc API in /version, and serves the discovery document and keys', async () => {
    const v = await admin.get('/version', { api: 'root' });
    expect(v.body.data.capabilities).toEqual(['OIDC_AUTH']);
    expect(v.body.data.apiVersions['edge-oidc'].v1).toEqual({ apiBaseUrls: [`${app.urls.api}/oidc`], path: '/oidc', version: 'v1' });

    const issuer = `${app.urls.api}/oidc`;
    for (const path of ['/oidc/.well-known/openid-configuration', '/.well-known/openid-configuration']) {
      const d = await http.req('GET', path);
      expect(d.status).toBe(200);
      expect(d.body).toMatchObject({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/oauth/token`,
        jwks_uri: `${issuer}/keys`,
        end_session_endpoint: `${issuer}/end_session`,
        code_challenge_methods_supported: ['S256'],
        id_token_signing_alg_values_supported: [app.core.jwt.alg],
      });
      expect(d.body.grant_types_supported).toEqual(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange']);
    }
    const keys = await http.req('GET', '/oidc/keys');
    expect(keys.body.keys.map((k: any) => k.kid)).toContain(app.core.jwt.kid);
    // the issuer follows the Host the client used (any name of the server certificate), else the advertised one
    expect(oidcIssuer(app.core, 'evil.example:1')).toBe(issuer);
    expect(oidcIssuer(app.core, `localhost:${new URL(app.urls.api).port}`)).toBe(`https://localhost:${new URL(app.urls.api).port}/oidc`);
    expect(oidcIssuer(app.core, 'localhost:1')).toBe(issuer);
    // /oidc is the provider's: never mapped onto the Client API as other paths without a base are
    expect((await http.req('GET', '/oidc/nothing')).status).toBe(404);
  });
});

describe('authorization code flow with PKCE', () => {
  it('certificate login (as the Go SDK: GET authorize, form post) gives access, refresh and ID tokens with OpenZiti claims', async () => {
    const { verifier, challenge } = pkce();
    const id = await authorize(deviceHttp, { method: 'cert', challenge, state: 'go-state' });
    const page = await deviceHttp.req('GET', `/oidc/login/cert?authRequestID=${id}`);
    expect(page.status).toBe(200);
    expect(page.headers['auth-request-id']).toBe(id);
    const posted = await deviceHttp.req('POST', '/oidc/login/cert', {
      form: {
        id,
        username: '',
        password: '',
        configTypes: ['host.v1'],
        envArch: 'amd64',
        envOs: 'linux',
        sdkType: 'ziti-sdk-golang',
        sdkVersion: 'v1.2.10',
      },
    });
    expect(posted.status).toBe(302);
    expect(location(posted)).toBe(`${app.urls.api}/oidc/authorize/callback?id=${id}`);
    const { code, state } = await callback(deviceHttp, id);
    expect(state).toBe('go-state');
    const t = await exchange(deviceHttp, code, verifier);
    expect(t.status, t.text).toBe(200);
    expect(t.headers['cache-control']).toBe('no-store');
    expect(t.body).toMatchObject({ token_type: 'Bearer', expires_in: 1800, scope: 'openid offline_access' });

    const access = decodeJwt(t.body.access_token);
    expect(access).toMatchObject({
      iss: `${app.urls.api}/oidc`,
      sub: device.id,
      aud: ['native'],
      client_id: 'native',
      amr: ['cert'],
      z_t: 'a',
      z_aid: 'native',
      z_ct: ['host.v1'],
      scopes: ['openid', 'offline_access'],
      z_env: { arch: 'amd64', os: 'linux' },
    });
    expect(access.exp! - access.iat!).toBe(1800);
    expect(access.z_cfs).toEqual([fingerprintSha1(device.cert)]);
    expect(decodeJwt(t.body.refresh_token)).toMatchObject({ z_t: 'r', z_asid: access.z_asid, sub: device.id });

    // the ID token verifies with the published keys, as the SDK's relying party checks it
    const jwks = createLocalJWKSet((await http.req('GET', '/oidc/keys')).body as JSONWebKeySet);
    const { payload: idt } = await jwtVerify(t.body.id_token, jwks, { issuer: `${app.urls.api}/oidc`, audience: 'native', currentDate: clock.now() });
    expect(idt).toMatchObject({ sub: device.id, name: 'oidc-device', azp: 'native', sid: access.z_asid, amr: ['cert'] });
    const hash = createHash('sha256').update(t.body.access_token).digest();
    if (app.core.jwt.alg.endsWith('256')) expect(idt.at_hash).toBe(hash.subarray(0, 16).toString('base64url'));

    // the login made an OIDC API session (SDK info recorded as at any login)
    const session = await app.core.store.getSql<any>('SELECT kind, expires_at, identity_id FROM api_sessions WHERE id = ?', access.z_asid);
    expect(session).toMatchObject({ kind: 'oidc', identity_id: device.id });
    expect(Date.parse(session.expires_at)).toBe(clock.now().getTime() + 24 * 60 * MINUTE);
    expect((await admin.get(`/identities/${device.id}`)).body.data.sdkInfo).toMatchObject({ type: 'ziti-sdk-golang', version: 'v1.2.10' });
  });

  it('as the C SDK does it: POST authorize, JSON login with the id in the query, the code read from the redirect', async () => {
    const { verifier, challenge } = pkce();
    const q = new URLSearchParams({
      client_id: 'openziti',
      scope: 'openid offline_access',
      response_type: 'code',
      redirect_uri: 'http://localhost:20314/auth/callback',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'c-state',
      audience: 'openziti',
    });
    const a = await deviceHttp.req('POST', `/oidc/authorize?${q}`, { headers: { accept: 'application/json' } });
    expect(a.status).toBe(302);
    const id = /authRequestID=([\w-]+)/.exec(location(a))![1]!;
    const l = await deviceHttp.req('POST', `/oidc/login/cert?id=${id}`, {
      json: { sdkInfo: { type: 'ziti-sdk-c', version: '1.18.7' }, envInfo: { os: 'Linux' } },
      headers: { accept: 'application/json' },
    });
    expect(l.status).toBe(302);
    const cb = new URL(location(l));
    const c = await deviceHttp.req('GET', cb.pathname + cb.search);
    expect(c.status).toBe(302);
    // the C SDK takes everything after "code=" as the code: the code must come last
    const code = location(c).slice(location(c).indexOf('code=') + 5);
    const t = await deviceHttp.req('POST', '/oidc/oauth/token', {
      form: {
        state: 'c-state',
        code,
        grant_type: 'authorization_code',
        code_verifier: verifier,
        client_id: 'openziti',
        redirect_uri: 'http://localhost:20314/auth/callback',
      },
    });
    expect(t.status, t.text).toBe(200);
    expect(decodeJwt(t.body.access_token)).toMatchObject({ aud: ['openziti'], client_id: 'openziti', z_t: 'a' });
  });

  it('username and password: the login page, a wrong password (401, counted), the right one', async () => {
    await createUser(admin, 'oidc-user', 'oidc-user-password');
    const { verifier, challenge } = pkce();
    const id = await authorize(http, { method: 'password', challenge });
    const page = await http.req('GET', `/oidc/login/username?authRequestID=${id}`);
    expect(page.status).toBe(200);
    expect(page.headers['auth-request-id']).toBe(id);
    expect(page.text).toContain('<form method="post" action="/oidc/login/username">');
    const bad = await http.req('POST', '/oidc/login/username', { form: { id, username: 'oidc-user', password: 'wrong-password' } });
    expect(bad.status).toBe(401);
    const good = await http.req('POST', '/oidc/login/username', { form: { id, username: 'oidc-user', password: 'oidc-user-password' } });
    expect(good.status).toBe(302);
    const { code } = await callback(http, id);
    const t = await exchange(http, code, verifier);
    expect(t.status).toBe(200);
    expect(decodeJwt(t.body.access_token).amr).toEqual(['password']);
    const audit = (await admin.get('/audit-log?filter=' + encodeURIComponent('principal = "oidc-user"'))).body.data;
    expect(audit.map((e: any) => e.outcome).sort()).toEqual(['failure', 'success']);
    expect(audit[0]).toMatchObject({ action: 'login', authMethod: 'password', source: 'client' });
  });

  it('with MFA the login waits for the TOTP step: auth queries, a wrong code refused, the right one completes it', async () => {
    const userId = await createUser(admin, 'oidc-mfa', 'oidc-mfa-password');
    const legacy = (await login(app, 'oidc-mfa', 'oidc-mfa-password')).client;
    await legacy.post('/current-identity/mfa', undefined, { api: 'client' });
    const secret = secretOf((await legacy.get('/current-identity/mfa', { api: 'client' })).body.data.provisioningUrl);
    expect((await legacy.post('/current-identity/mfa/verify', { code: totp(secret, epochSeconds(clock)) }, { api: 'client' })).status).toBe(200);
    await legacy.close();
    clock.advance(30_000); // the enrollment's code is spent

    const { verifier, challenge } = pkce();
    const id = await authorize(http, { method: 'password', challenge, state: 'mfa-state' });
    const l = await http.req('POST', '/oidc/login/username', { form: { id, username: 'oidc-mfa', password: 'oidc-mfa-password' } });
    expect(l.status).toBe(200);
    expect(l.headers['totp-required']).toBe('true');
    expect(l.body.authQueries).toEqual([
      {
        typeId: 'TOTP',
        provider: 'svc',
        format: 'numeric',
        httpMethod: 'POST',
        httpUrl: './oidc/login/totp',
        minLength: 6,
        maxLength: 8,
        isTotpEnrolled: true,
      },
    ]);
    expect((await http.req('GET', `/oidc/login/auth-queries?id=${id}`)).body.authQueries).toHaveLength(1);
    // no code before the TOTP step: the client is told interaction is required
    const early = await http.req('GET', `/oidc/authorize/callback?id=${id}`);
    expect(new URL(location(early)).searchParams.get('error')).toBe('interaction_required');
    expect(new URL(location(early)).searchParams.get('state')).toBe('mfa-state');

    const wrong = await http.req('POST', '/oidc/login/totp', { json: { id, code: '000000' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ code: 'INVALID TOTP CODE', message: 'an invalid TOTP code was supplied' });
    const ok = await http.req('POST', '/oidc/login/totp', { form: { id, code: totp(secret, epochSeconds(clock)) } });
    expect(ok.status).toBe(302);
    expect(location(ok)).toContain('/oidc/authorize/callback?id=');
    const { code } = await callback(http, id);
    const t = await exchange(http, code, verifier);
    expect(t.status).toBe(200);
    expect(decodeJwt(t.body.access_token)).toMatchObject({ sub: userId, amr: ['password', 'totp'] });
    const cur = await anon.get('/current-api-session', bearer(t.body.access_token));
    expect(cur.status).toBe(200);
    expect(cur.body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: true, authQueries: [] });
  });

  it("a policy's secondary external JWT: the login waits with an EXT-JWT auth query until a post brings the JWT", async () => {
    const ca = await createRootCa({ commonName: 'OIDC Second Factor', keyAlg: 'EC-P256' });
    const signerId = await admin.create('/external-jwt-signers', {
      name: 'oidc-second',
      issuer: 'oidc-second-issuer',
      audience: 'oidc-second-aud',
      enabled: true,
      certPem: ca.certPem,
      kid: 'oidc-second-kid',
      externalAuthUrl: 'https://idp.example/auth',
      clientId: 'weft',
      scopes: ['openid'],
    });
    const policy = await admin.create('/auth-policies', authPolicyBody('oidc-second-policy', {}, { requireExtJwtSigner: signerId }));
    const second = await enrolledDevice(app, admin, 'oidc-second-device');
    expect((await admin.patch(`/identities/${second.id}`, { authPolicyId: policy })).status).toBe(200);
    const secondHttp = new Http(app.urls.api, app.core.pki.caBundlePem, { cert: second.cert, key: second.key });
    try {
      const { verifier, challenge } = pkce();
      const id = await authorize(secondHttp, { method: 'cert', challenge });
      const first = await secondHttp.req('POST', '/oidc/login/cert', { json: { id }, headers: { accept: 'application/json' } });
      expect(first.status).toBe(200);
      expect(first.headers['totp-required']).toBeUndefined();
      expect(first.body.authQueries).toEqual([
        { typeId: 'EXT-JWT', provider: 'url', httpUrl: 'https://idp.example/auth', id: signerId, clientId: 'weft', scopes: ['openid'] },
      ]);
      const key = pemSigningKey('oidc-second-kid', 'ES256', ca.keyPem);
      const jwt = await signJwt(key, { iss: 'oidc-second-issuer', aud: 'oidc-second-aud', sub: second.id }, epochSeconds(clock));
      // the C SDK posts the same login path again with the JWT as bearer token
      const done = await secondHttp.req('POST', `/oidc/login/cert?id=${id}`, { form: { id }, headers: { authorization: `Bearer ${jwt}` } });
      expect(done.status).toBe(302);
      const { code } = await callback(secondHttp, id);
      expect((await exchange(secondHttp, code, verifier)).status).toBe(200);
    } finally {
      await secondHttp.close();
    }
  });

  it('refuses bad, expired, replayed and mismatched codes with OAuth errors; a failed or replayed code ends its session', async () => {
    const unknown = await exchange(http, 'no-such-code', 'x'.repeat(43));
    expect([unknown.status, unknown.body]).toEqual([400, { error: 'invalid_grant', error_description: 'invalid code' }]);
    expect((await http.req('POST', '/oidc/oauth/token', { form: { code: 'x' } })).body).toEqual({
      error: 'invalid_request',
      error_description: 'grant_type missing',
    });
    expect((await http.req('POST', '/oidc/oauth/token', { form: { grant_type: 'password' } })).body.error).toBe('unsupported_grant_type');

    // a verifier that does not match the challenge: refused, and the code is spent
    let { verifier, challenge } = pkce();
    let id = await authorize(deviceHttp, { method: 'cert', challenge });
    await deviceHttp.req('POST', '/oidc/login/cert', { form: { id } });
    let { code } = await callback(deviceHttp, id);
    const mismatch = await exchange(deviceHttp, code, pkce().verifier);
    expect([mismatch.status, mismatch.body]).toEqual([400, { error: 'invalid_grant', error_description: 'invalid code_verifier' }]);
    expect((await exchange(deviceHttp, code, verifier)).body).toEqual({ error: 'invalid_grant', error_description: 'invalid code' });

    // no verifier; another redirect URI; another client
    for (const [extra, clientId, expected] of [
      [{ code_verifier: '' }, 'native', { error: 'invalid_request', error_description: 'code_verifier required' }],
      [
        { redirect_uri: 'http://127.0.0.1:1/auth/callback' },
        'native',
        { error: 'invalid_grant', error_description: 'redirect_uri does not correspond' },
      ],
      [{}, 'openziti', { error: 'invalid_grant' }],
      [{}, 'nobody', { error: 'invalid_client', error_description: 'invalid client_id / client_secret' }],
    ] as const) {
      ({ verifier, challenge } = pkce());
      id = await authorize(deviceHttp, { method: 'cert', challenge });
      await deviceHttp.req('POST', '/oidc/login/cert', { form: { id } });
      ({ code } = await callback(deviceHttp, id));
      const r = await exchange(deviceHttp, code, verifier, clientId, extra);
      expect(r.body).toEqual(expected);
      expect(r.status).toBe(clientId === 'nobody' ? 401 : 400);
    }

    // expired: codes live five minutes
    ({ verifier, challenge } = pkce());
    id = await authorize(deviceHttp, { method: 'cert', challenge });
    await deviceHttp.req('POST', '/oidc/login/cert', { form: { id } });
    ({ code } = await callback(deviceHttp, id));
    clock.advance(5 * MINUTE + 1000);
    expect((await exchange(deviceHttp, code, verifier)).body).toEqual({ error: 'invalid_grant', error_description: 'invalid code' });

    // replayed: refused, and the tokens of the first exchange stop working
    ({ verifier, challenge } = pkce());
    id = await authorize(deviceHttp, { method: 'cert', challenge });
    await deviceHttp.req('POST', '/oidc/login/cert', { form: { id } });
    ({ code } = await callback(deviceHttp, id));
    const first = await exchange(deviceHttp, code, verifier);
    expect(first.status).toBe(200);
    expect((await anon.get('/current-api-session', bearer(first.body.access_token))).status).toBe(200);
    expect((await exchange(deviceHttp, code, verifier)).body).toEqual({ error: 'invalid_grant', error_description: 'invalid code' });
    expect((await anon.get('/current-api-session', bearer(first.body.access_token))).status).toBe(401);
    // and a used request gives no new code
    expect((await deviceHttp.req('GET', `/oidc/authorize/callback?id=${id}`)).status).toBe(400);
  });

  it('refuses bad authorization requests: unusable ones with 400, the rest at the redirect URI', async () => {
    const { challenge } = pkce();
    const bad = async (q: Record<string, string>) => http.req('GET', `/oidc/authorize?${new URLSearchParams(q)}`);
    const base = {
      client_id: 'native',
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's1',
    };
    expect((await bad({ ...base, client_id: '' })).status).toBe(400);
    expect((await bad({ ...base, client_id: 'other' })).status).toBe(400);
    expect((await bad({ ...base, redirect_uri: 'https://evil.example/auth/callback' })).status).toBe(400);
    const noPkce = await bad({ ...base, code_challenge: '' });
    expect(noPkce.status).toBe(302);
    expect(Object.fromEntries(new URL(location(noPkce)).searchParams)).toMatchObject({ error: 'invalid_request', state: 's1' });
    expect(new URL(location(await bad({ ...base, code_challenge_method: 'plain' }))).searchParams.get('error')).toBe('invalid_request');
    expect(new URL(location(await bad({ ...base, response_type: 'token' }))).searchParams.get('error')).toBe('unauthorized_client');
    expect(new URL(location(await bad({ ...base, prompt: 'none' }))).searchParams.get('error')).toBe('login_required');
    // an unknown request cannot be logged in
    expect((await deviceHttp.req('POST', '/oidc/login/cert', { form: { id: '00000000-0000-0000-0000-000000000000' } })).status).toBe(401);
  });
});

describe('tokens as API sessions', () => {
  it('the access token is a bearer token of the Client API (never a zt-session); the session shows the JWT', async () => {
    const t = await certTokens();
    const cur = await anon.get('/current-api-session', bearer(t.access_token));
    expect(cur.status).toBe(200);
    expect(cur.body.data).toMatchObject({
      id: decodeJwt(t.access_token).z_asid,
      token: t.access_token,
      identityId: device.id,
      configTypes: ['host.v1'],
    });
    const services = await anon.get('/services', bearer(t.access_token));
    expect(services.body.data.map((s: any) => s.name)).toContain('oidc-echo');
    expect((await admin.get('/current-api-session', { headers: { 'zt-session': t.access_token }, api: 'client' })).status).toBe(401);
    // a token signed with another key under our kid, or altered, is nothing
    const [h, p] = t.access_token.split('.');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const forged = `${h}.${p}.${cryptoSign('sha256', Buffer.from(`${h}.${p}`), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
    expect((await anon.get('/current-api-session', bearer(forged))).status).toBe(401);
  });

  it('refresh: each refresh token once, new tokens each time; token exchange as the Go SDK refreshes', async () => {
    const t = await certTokens();
    const form = (refresh: string) => ({ form: { grant_type: 'refresh_token', refresh_token: refresh, client_id: 'native' } });
    const r1 = await http.req('POST', '/oidc/oauth/token', form(t.refresh_token));
    expect(r1.status, r1.text).toBe(200);
    expect(r1.body.refresh_token).not.toBe(t.refresh_token);
    expect(decodeJwt(r1.body.access_token).z_asid).toBe(decodeJwt(t.access_token).z_asid);
    expect((await http.req('POST', '/oidc/oauth/token', form(t.refresh_token))).body).toEqual({
      error: 'invalid_grant',
      error_description: 'invalid refresh token',
    });
    // the refresh token's client must be the one asking
    expect(
      (
        await http.req('POST', '/oidc/oauth/token', {
          form: { grant_type: 'refresh_token', refresh_token: r1.body.refresh_token, client_id: 'openziti' },
        })
      ).body.error,
    ).toBe('invalid_grant');

    const exchange = (subject: string, requested: string) =>
      http.req('POST', '/oidc/oauth/token', {
        form: {
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token: subject,
          subject_token_type: 'urn:ietf:params:oauth:token-type:refresh_token',
          requested_token_type: `urn:ietf:params:oauth:token-type:${requested}`,
        },
        headers: { authorization: 'Basic ' + Buffer.from('native:').toString('base64') },
      });
    const ex = await exchange(r1.body.refresh_token, 'refresh_token');
    expect(ex.status, ex.text).toBe(200);
    expect(ex.body).toMatchObject({ token_type: 'Bearer', issued_token_type: 'urn:ietf:params:oauth:token-type:refresh_token', expires_in: 1800 });
    // then an ID token for the same (now used) refresh token, as the Go SDK asks next
    const idt = await exchange(r1.body.refresh_token, 'id_token');
    expect(idt.body).toMatchObject({ token_type: 'N_A', issued_token_type: 'urn:ietf:params:oauth:token-type:id_token' });
    expect(decodeJwt(idt.body.access_token)).toMatchObject({ sub: device.id, name: 'oidc-device' });
    expect((await exchange(r1.body.refresh_token, 'refresh_token')).body).toEqual({
      error: 'invalid_request',
      error_description: 'subject_token is invalid',
    });
    expect((await anon.get('/current-identity', bearer(ex.body.access_token))).body.data.name).toBe('oidc-device');

    // the C SDK's refresh: its client in the form and as Basic credentials (base64url), no scope
    const c = await certTokens('openziti');
    const cRefresh = await http.req('POST', '/oidc/oauth/token', {
      form: { client_id: 'openziti', grant_type: 'refresh_token', refresh_token: c.refresh_token },
      headers: { authorization: 'Basic ' + Buffer.from('openziti:').toString('base64url') },
    });
    expect(cRefresh.status, cRefresh.text).toBe(200);
    expect(decodeJwt(cRefresh.body.access_token)).toMatchObject({ client_id: 'openziti', z_asid: decodeJwt(c.access_token).z_asid });

    // each refresh moves the session's end to the new refresh token's
    clock.advance(10 * MINUTE);
    const r2 = await http.req('POST', '/oidc/oauth/token', form(ex.body.refresh_token));
    expect(r2.status).toBe(200);
    const s = await app.core.store.getSql<any>('SELECT expires_at FROM api_sessions WHERE id = ?', decodeJwt(t.access_token).z_asid);
    expect(Date.parse(s.expires_at)).toBe(clock.now().getTime() + 24 * 60 * MINUTE);
  });

  it('an expired access token is refused while its session lives on; logout, revocation and a disabled identity end it', async () => {
    let t = await certTokens();
    clock.advance(31 * MINUTE);
    await relogin(); // the admin's legacy session ended with the inactivity
    expect((await anon.get('/current-api-session', bearer(t.access_token))).status).toBe(401);
    const r = await http.req('POST', '/oidc/oauth/token', {
      form: { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: 'native' },
    });
    expect(r.status).toBe(200);
    expect((await anon.get('/current-api-session', bearer(r.body.access_token))).status).toBe(200);
    // logout with the bearer token: the session and every token of it end
    expect((await anon.del('/current-api-session', bearer(r.body.access_token))).status).toBe(200);
    expect((await anon.get('/current-api-session', bearer(r.body.access_token))).status).toBe(401);
    expect(
      (
        await http.req('POST', '/oidc/oauth/token', {
          form: { grant_type: 'refresh_token', refresh_token: r.body.refresh_token, client_id: 'native' },
        })
      ).body.error,
    ).toBe('invalid_grant');

    // a JTI revocation refuses that one token
    t = await certTokens();
    const jti = decodeJwt(t.access_token).jti!;
    expect((await admin.post('/revocations', { id: jti, type: 'JTI' })).status).toBe(201);
    expect((await anon.get('/current-api-session', bearer(t.access_token))).status).toBe(401);
    // an API_SESSION revocation (or an admin's delete) ends the session
    const r2 = await http.req('POST', '/oidc/oauth/token', {
      form: { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: 'native' },
    });
    expect((await anon.get('/current-api-session', bearer(r2.body.access_token))).status).toBe(200);
    expect((await admin.post('/revocations', { id: decodeJwt(t.access_token).z_asid, type: 'API_SESSION' })).status).toBe(201);
    expect((await anon.get('/current-api-session', bearer(r2.body.access_token))).status).toBe(401);

    // OIDC logout with the ID token; RFC 7009 revocation of a refresh token
    t = await certTokens();
    const out = await http.req(
      'GET',
      `/oidc/end_session?id_token_hint=${t.id_token}&post_logout_redirect_uri=${encodeURIComponent('http://127.0.0.1:9/auth/logout')}&state=x`,
    );
    expect(out.status).toBe(302);
    expect(location(out)).toBe('http://127.0.0.1:9/auth/logout?state=x');
    expect((await anon.get('/current-api-session', bearer(t.access_token))).status).toBe(401);
    t = await certTokens();
    expect((await http.req('POST', '/oidc/revoke', { form: { token: t.refresh_token, client_id: 'native' } })).status).toBe(200);
    expect((await anon.get('/current-api-session', bearer(t.access_token))).status).toBe(401);

    // disabling the identity ends its sessions
    t = await certTokens();
    expect((await http.req('GET', '/oidc/userinfo', { headers: { authorization: `Bearer ${t.access_token}` } })).body).toMatchObject({
      sub: device.id,
      name: 'oidc-device',
    });
    await admin.post(`/identities/${device.id}/disable`, { durationMinutes: 1 });
    expect((await anon.get('/current-api-session', bearer(t.access_token))).status).toBe(401);
    expect(
      (await http.req('POST', '/oidc/oauth/token', { form: { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: 'native' } }))
        .body.error,
    ).toBe('invalid_grant');
    await admin.post(`/identities/${device.id}/enable`);
  });
});

describe('the edge router with a JWT API session', () => {
  it('accepts the access token in the hello, dials and binds with it, takes refreshed tokens, refuses forged ones', async () => {
    const t = await certTokens();
    const api = new ApiClient(app.urls.api, app.core.pki.caBundlePem);
    const session = async (type: string) => {
      const r = await api.post('/sessions', { serviceId, type }, bearer(t.access_token));
      expect(r.status, r.text).toBe(201);
      return (await api.get(`/sessions/${r.body.data.id}`, bearer(t.access_token))).body.data.token as string;
    };
    const host = await RawEdge.connect(app.urls.router!, app.core.pki.caBundlePem, { cert: device.cert, key: device.key });
    expect((await host.hello(t.access_token)).headers.get(Header.ResultSuccess)?.[0]).toBe(1);
    expect((await host.bind(7, await session('Bind'))).contentType).toBe(EdgeType.StateConnected);
    const client = await RawEdge.connect(app.urls.router!, app.core.pki.caBundlePem, { cert: device.cert, key: device.key });
    expect((await client.hello(t.access_token)).headers.get(Header.ResultSuccess)?.[0]).toBe(1);
    const connected = client.dial(3, await session('Dial'));
    const dial = await host.until(() => host.received.find((m) => m.contentType === EdgeType.Dial));
    host.accept(dial);
    expect((await connected).contentType).toBe(EdgeType.StateConnected);

    // the access token expires; the connection stays (its session lives) and takes the refreshed token
    clock.advance(31 * MINUTE);
    await app.router!.sweep();
    expect(client.closed).toBeUndefined();
    const r = await http.req('POST', '/oidc/oauth/token', {
      form: { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: 'native' },
    });
    const update = (token: string) => client.channel.request(message(EdgeType.UpdateToken, [], token), 15_000);
    expect((await update(r.body.access_token)).contentType).toBe(EdgeType.UpdateTokenSuccess);
    const failed = await update('not-a-jwt');
    expect(failed.contentType).toBe(EdgeType.UpdateTokenFailure);
    expect(failed.body.toString()).toBe('message did not contain a valid JWT bearer token');
    expect((await update(t.access_token)).contentType).toBe(EdgeType.UpdateTokenFailure); // expired

    // forged: signed with another key under our kid; and an expired token in a hello
    const [h, p] = r.body.access_token.split('.');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const forged = `${h}.${p}.${cryptoSign('sha256', Buffer.from(`${h}.${p}`), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
    for (const bad of [forged, t.access_token]) {
      const e = await RawEdge.connect(app.urls.router!, app.core.pki.caBundlePem, { cert: device.cert, key: device.key });
      const res = await e.hello(bad);
      expect(res.headers.get(Header.ResultSuccess)?.[0]).not.toBe(1);
      expect(res.body.toString()).toBe('invalid or expired API session');
      e.close();
    }

    // ending the session (logout) closes its router connections
    expect((await api.del('/current-api-session', bearer(r.body.access_token))).status).toBe(200);
    await client.until(() => client.closed);
    await host.until(() => host.closed);
    await api.close();
  });
});
