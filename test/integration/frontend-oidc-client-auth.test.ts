// OIDC client authentication at the token endpoint: token_endpoint_auth_method client_secret_basic or
// client_secret_post, each against an oidc-provider client that requires it, with a client id and secret holding
// the characters RFC 6749's form-encoding of Basic credentials changes (-_.!~*'()); a provider that compares Basic
// credentials raw (the reason for the setting); and the default: client_secret_post when the discovery document lists
// both and Basic would change the id or secret, else the first method it lists.
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_NAME, freePort, HttpUserAgent, startEchoBackend, startTestFrontend, type EchoBackend, type TestFrontend } from '../support/browser';
import { signInAtOidcProvider, startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';

const SPECIAL = "-_.!~*'()";
const BASIC = { clientId: `weft${SPECIAL}basic`, clientSecret: `basic-secret${SPECIAL}0123456789` };
const POST = { clientId: `weft${SPECIAL}post`, clientSecret: `post-secret${SPECIAL}0123456789` };
const RAW = { clientId: `weft${SPECIAL}raw`, clientSecret: `raw-secret${SPECIAL}0123456789` };
const LISTED_POST_FIRST = { clientId: 'weft-listed', clientSecret: `listed-secret${SPECIAL}0123456789` };
const PLAIN = { clientId: 'weftplain', clientSecret: 'PlainSecret0123456789abcdef' };

describe('frontend: OIDC token endpoint client authentication', () => {
  let idp: TestOidcProvider;
  let postFirstIdp: TestOidcProvider;
  let backend: EchoBackend;
  let fe: TestFrontend;

  beforeAll(async () => {
    const oauthPort = await freePort();
    const callback = (name: string) => `http://auth.weft.test:${oauthPort}/${name}/auth/callback`;
    idp = await startOidcProvider({
      clients: [
        { ...BASIC, tokenEndpointAuthMethod: 'client_secret_basic', redirectUris: [callback('basic')] },
        { ...PLAIN, tokenEndpointAuthMethod: 'client_secret_basic', redirectUris: [callback('plain-by-default')] },
        { ...POST, tokenEndpointAuthMethod: 'client_secret_post', redirectUris: [callback('post'), callback('post-as-basic')] },
        { ...RAW, rawBasicCredentials: true, redirectUris: [callback('raw-basic'), callback('raw-post'), callback('raw-by-default')] },
      ],
    });
    postFirstIdp = await startOidcProvider({
      clientAuthMethods: ['client_secret_post', 'client_secret_basic'],
      clients: [{ ...LISTED_POST_FIRST, tokenEndpointAuthMethod: 'client_secret_post', redirectUris: [callback('listed')] }],
    });
    backend = await startEchoBackend();
    const oidc = (
      name: string,
      client: { clientId: string; clientSecret: string },
      issuer: string,
      method?: 'client_secret_basic' | 'client_secret_post',
    ) => ({
      name,
      type: 'oidc' as const,
      client_id: client.clientId,
      client_secret: client.clientSecret,
      issuer,
      scopes: ['openid', 'email', 'offline_access'],
      supports_pkce: true,
      ...(method ? { token_endpoint_auth_method: method } : {}),
    });
    const share = (token: string) => ({
      token,
      backendMode: 'proxy' as const,
      target: backend.url,
      oauth: { provider: token, emailPatterns: [], checkIntervalMs: 3_600_000 },
    });
    fe = await startTestFrontend({
      oauthPort,
      providers: [
        oidc('basic', BASIC, idp.issuer, 'client_secret_basic'),
        oidc('plain-by-default', PLAIN, idp.issuer),
        oidc('raw-by-default', RAW, idp.issuer),
        oidc('post', POST, idp.issuer, 'client_secret_post'),
        oidc('post-as-basic', POST, idp.issuer, 'client_secret_basic'),
        oidc('raw-basic', RAW, idp.issuer, 'client_secret_basic'),
        oidc('raw-post', RAW, idp.issuer, 'client_secret_post'),
        oidc('listed', LISTED_POST_FIRST, postFirstIdp.issuer),
      ],
      shares: ['basic', 'plain-by-default', 'raw-by-default', 'post', 'post-as-basic', 'raw-basic', 'raw-post', 'listed'].map(share),
    });
  });

  afterAll(async () => {
    await fe?.close();
    await backend?.close();
    await idp?.close();
    await postFirstIdp?.close();
  });

  async function login(agent: HttpUserAgent, token: string) {
    const start = await agent.request(fe.shareUrl(token, '/'));
    expect(start.status).toBe(302);
    return agent.request(await signInAtOidcProvider(agent, start.location!, 'alice'));
  }

  async function expectLoginWorks(token: string, provider: TestOidcProvider) {
    const agent = new HttpUserAgent();
    const done = await login(agent, token);
    expect(done.status, done.body).toBe(302);
    expect((await agent.request(done.location!)).json().headers['svc-auth-email']).toBe('alice@example.test');
    // Revocation authenticates the client the same way.
    const revoked = once(provider.events, 'revoked');
    await agent.request(`${fe.endpointUrl}/${token}/logout`);
    await revoked;
    expect(agent.cookie(`${COOKIE_NAME}_${token}`)).toBeUndefined();
  }

  it('client_secret_basic, against a client that requires it', async () => {
    await expectLoginWorks('basic', idp);
  });

  it('client_secret_post, against a client that requires it', async () => {
    await expectLoginWorks('post', idp);
  });

  async function expectLoginRefused(token: string) {
    const agent = new HttpUserAgent();
    const done = await login(agent, token);
    expect(done.status).toBe(502);
    expect(done.body).toContain('could not complete the sign-in');
    const failures = fe.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'oauth code exchange failed' && l.provider === token);
    expect(failures.map((l) => l.err)).toEqual([expect.stringContaining('invalid_client')]);
  }

  it('sends what is configured: client_secret_basic for a client that requires post is refused', async () => {
    await expectLoginRefused('post-as-basic');
  });

  it('a provider comparing Basic credentials raw refuses client_secret_basic and accepts client_secret_post', async () => {
    await expectLoginRefused('raw-basic');
    await expectLoginWorks('raw-post', idp);
  });

  it('defaults to client_secret_post when both are listed and Basic would encode the id or secret (a raw-comparing provider accepts it)', async () => {
    // oidc-provider lists client_secret_basic first; RAW's id and secret hold characters Basic's form-encoding changes
    await expectLoginWorks('raw-by-default', idp);
    const exchanges = fe.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'oauth code exchange failed' && l.provider === 'raw-by-default');
    expect(exchanges).toEqual([]);
  });

  it('otherwise defaults to the first method the discovery document lists', async () => {
    await expectLoginWorks('plain-by-default', idp); // nothing to encode: client_secret_basic, listed first
    await expectLoginWorks('listed', postFirstIdp); // this one lists client_secret_post first
  });

  it('never logs the secrets', () => {
    const text = fe.logs.join('\n');
    for (const c of [BASIC, POST, RAW, LISTED_POST_FIRST, PLAIN]) expect(text).not.toContain(c.clientSecret);
  });
});
