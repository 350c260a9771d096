// A loopback stand-in for Google's OAuth 2.0 endpoints in their real wire format:
// /o/oauth2/v2/auth (code + PKCE S256), POST /token (form; errors as HTTP 400 {"error"}),
// GET /oauth2/v2/userinfo ({id, email, verified_email, hd} — hd only for Google Workspace accounts), POST /revoke
// (form token=...).
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { json, readBody } from './httpUtil';

export interface GoogleUser {
  /** Without one, userinfo answers without email and verified_email (the email scope not granted). */
  email?: string;
  verifiedEmail: boolean;
  /** The account's Google Workspace domain (userinfo's `hd`); absent for consumer accounts. */
  hostedDomain?: string;
}

export interface FakeGoogle {
  /** The endpoint keys of an idp_b provider entry pointing at this fake. */
  endpoints: { auth_url: string; token_url: string; userinfo_url: string; revoke_url: string };
  setUser(id: string, user: GoogleUser): void;
  /** The account the "browser" is signed in as; authorize redirects straight back for it. */
  signInAs(id: string | undefined): void;
  failRevocation(fail: boolean): void;
  readonly revokedTokens: string[];
  /** Authorization requests seen (query parameters), to check PKCE etc. */
  readonly authorizeRequests: URLSearchParams[];
  close(): Promise<void>;
}

interface PendingCode {
  user: string;
  redirectUri: string;
  challenge?: string;
  method?: string;
}

export async function startFakeGoogle(opts: { clientId: string; clientSecret: string }): Promise<FakeGoogle> {
  const users = new Map<string, GoogleUser>();
  const codes = new Map<string, PendingCode>();
  const tokens = new Map<string, string>(); // access token -> user id
  const revokedTokens: string[] = [];
  const authorizeRequests: URLSearchParams[] = [];
  let signedIn: string | undefined;
  let revocationFails = false;

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://google.invalid');

    if (req.method === 'GET' && url.pathname === '/o/oauth2/v2/auth') {
      const q = url.searchParams;
      authorizeRequests.push(q);
      const redirectUri = q.get('redirect_uri');
      if (q.get('client_id') !== opts.clientId || !redirectUri) {
        res.writeHead(400, { 'Content-Type': 'text/html' }).end('<p>Error 401: invalid_client</p>');
        return;
      }
      if (q.get('response_type') !== 'code') {
        res.writeHead(400, { 'Content-Type': 'text/html' }).end('<p>Error 400: unsupported_response_type</p>');
        return;
      }
      if (!signedIn) {
        res.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>Choose an account (fake): call signInAs() first.</p>');
        return;
      }
      const code = `4/${randomBytes(16).toString('base64url')}`;
      codes.set(code, {
        user: signedIn,
        redirectUri,
        challenge: q.get('code_challenge') ?? undefined,
        method: q.get('code_challenge_method') ?? undefined,
      });
      const back = new URL(redirectUri);
      const state = q.get('state');
      if (state !== null) back.searchParams.set('state', state);
      back.searchParams.set('code', code);
      back.searchParams.set('scope', 'email openid https://www.googleapis.com/auth/userinfo.email');
      back.searchParams.set('authuser', '0');
      back.searchParams.set('prompt', 'none');
      res.writeHead(302, { Location: back.href }).end();
      return;
    }

    if (req.method === 'POST' && url.pathname === '/token') {
      const params = new URLSearchParams(await readBody(req));
      if (params.get('client_id') !== opts.clientId || params.get('client_secret') !== opts.clientSecret) {
        return json(res, 401, { error: 'invalid_client', error_description: 'Unauthorized' });
      }
      if (params.get('grant_type') !== 'authorization_code') return json(res, 400, { error: 'unsupported_grant_type' });
      const code = params.get('code') ?? '';
      const pending = codes.get(code);
      codes.delete(code);
      if (!pending) return json(res, 400, { error: 'invalid_grant', error_description: 'Malformed auth code.' });
      if (params.get('redirect_uri') !== pending.redirectUri)
        return json(res, 400, { error: 'redirect_uri_mismatch', error_description: 'Bad Request' });
      if (pending.challenge) {
        const verifier = params.get('code_verifier') ?? '';
        const computed = pending.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
        if (computed !== pending.challenge) return json(res, 400, { error: 'invalid_grant', error_description: 'Invalid code verifier.' });
      }
      const token = `ya29.${randomBytes(24).toString('base64url')}`;
      tokens.set(token, pending.user);
      return json(res, 200, {
        access_token: token,
        expires_in: 3599,
        scope: 'openid https://www.googleapis.com/auth/userinfo.email',
        token_type: 'Bearer',
      });
    }

    if (req.method === 'GET' && url.pathname === '/oauth2/v2/userinfo') {
      const token = String(req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
      const id = tokens.get(token);
      const user = id ? users.get(id) : undefined;
      if (!id || !user) {
        return json(res, 401, { error: { code: 401, message: 'Request is missing required authentication credential.', status: 'UNAUTHENTICATED' } });
      }
      const email = user.email === undefined ? {} : { email: user.email, verified_email: user.verifiedEmail };
      return json(res, 200, { id, ...email, ...(user.hostedDomain ? { hd: user.hostedDomain } : {}), picture: 'https://example.invalid/photo.jpg' });
    }

    if (req.method === 'POST' && url.pathname === '/revoke') {
      const params = new URLSearchParams(await readBody(req));
      if (revocationFails) return json(res, 503, { error: 'backend_error' });
      const token = params.get('token') ?? '';
      if (!tokens.delete(token)) return json(res, 400, { error: 'invalid_token', error_description: 'Token expired or revoked' });
      revokedTokens.push(token);
      return json(res, 200, {});
    }

    json(res, 404, { error: 'not_found' });
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) json(res, 500, { error: 'internal_failure' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    endpoints: {
      auth_url: `${base}/o/oauth2/v2/auth`,
      token_url: `${base}/token`,
      userinfo_url: `${base}/oauth2/v2/userinfo`,
      revoke_url: `${base}/revoke`,
    },
    setUser: (id, user) => void users.set(id, user),
    signInAs: (id) => {
      signedIn = id;
    },
    failRevocation: (fail) => {
      revocationFails = fail;
    },
    revokedTokens,
    authorizeRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
