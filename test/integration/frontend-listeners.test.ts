// Listener behaviour: TLS, public_url, Secure cookies, two frontends in one process, close(),
// and resolver/provider failures that must not take the process down.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import forge from 'node-forge';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFrontend } from '../../src/main/frontend';
import type { FrontendConfig } from '../../src/main/frontend/config';
import {
  COOKIE_DOMAIN,
  COOKIE_NAME,
  freePort,
  HttpUserAgent,
  oauthSection,
  SHARE_DOMAIN,
  startEchoBackend,
  type EchoBackend,
} from '../support/browser';

const silent = pino({ level: 'silent' });
const githubProvider = { name: 'github', type: 'idp_a' as const, client_id: 'id', client_secret: 'secret' };

function selfSigned(): { cert: string; key: string } {
  const keys = forge.pki.rsa.generateKeyPair(2048);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  const attrs = [{ name: 'commonName', value: `*.${SHARE_DOMAIN}` }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([{ name: 'subjectAltName', altNames: [{ type: 2, value: `*.${SHARE_DOMAIN}` }] }]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: forge.pki.privateKeyToPem(keys.privateKey) };
}

function httpsGet(
  port: number,
  host: string,
  pathName: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(
        { hostname: '127.0.0.1', port, path: pathName, servername: host, headers: { host, accept: 'text/html' }, rejectUnauthorized: false },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      )
      .on('error', reject);
  });
}

describe('frontend listeners', () => {
  let dir: string;
  let backend: EchoBackend;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weft-tls-'));
    const { cert, key } = selfSigned();
    await writeFile(path.join(dir, 'cert.pem'), cert);
    await writeFile(path.join(dir, 'key.pem'), key);
    backend = await startEchoBackend();
  });

  afterAll(async () => {
    await backend?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves https with tls, prints https share URLs and marks cookies Secure', async () => {
    const config: FrontendConfig = {
      bind_address: '127.0.0.1:0',
      share_domain: SHARE_DOMAIN,
      tls: { cert_file: path.join(dir, 'cert.pem'), key_file: path.join(dir, 'key.pem') },
      oauth: { ...oauthSection(await freePort(), [githubProvider]), endpoint_url: 'https://auth.weft.test' },
    };
    const fe = await startFrontend({
      config,
      logger: silent,
      resolver: {
        resolve: (t) =>
          t === 'app'
            ? { token: 'app', backendMode: 'proxy', target: backend.url, oauth: { provider: 'github', emailPatterns: [], checkIntervalMs: 60_000 } }
            : undefined,
      },
    });
    try {
      const { port } = fe.publicAddress;
      expect(fe.shareUrl('app')).toBe(`https://app.${SHARE_DOMAIN}:${port}`);
      expect((await httpsGet(port, '127.0.0.1', '/health')).body).toBe('{"status":"ok"}');
      const login = await httpsGet(port, `app.${SHARE_DOMAIN}:${port}`, '/x?y=1');
      expect(login.status).toBe(302);
      const binding = (login.headers['set-cookie'] as string[])[0];
      expect(binding).toMatch(/; Secure$/);
      expect(binding).toContain(`Domain=${COOKIE_DOMAIN}`);
    } finally {
      await fe.close();
    }
  });

  it('uses public_url for share URLs and the Secure flag', async () => {
    const fe = await startFrontend({
      config: {
        bind_address: '127.0.0.1:0',
        share_domain: SHARE_DOMAIN,
        public_url: 'https://ignored.example:8443',
        oauth: oauthSection(await freePort(), [githubProvider]),
      },
      logger: silent,
      resolver: {
        resolve: () => ({
          token: 'app',
          backendMode: 'proxy',
          target: backend.url,
          oauth: { provider: 'github', emailPatterns: [], checkIntervalMs: 60_000 },
        }),
      },
    });
    try {
      expect(fe.shareUrl('tok')).toBe(`https://tok.${SHARE_DOMAIN}:8443`);
      const res = await new HttpUserAgent().request(`http://app.${SHARE_DOMAIN}:${fe.publicAddress.port}/`);
      expect(res.status).toBe(302);
      expect(res.setCookies[0]).toMatch(/; Secure$/);
    } finally {
      await fe.close();
    }
  });

  it('runs two frontends in one process without sharing sessions or state', async () => {
    const make = async (signing: string) =>
      startFrontend({
        config: {
          bind_address: '127.0.0.1:0',
          share_domain: SHARE_DOMAIN,
          oauth: { ...oauthSection(await freePort(), [githubProvider]), signing_key: signing },
        },
        logger: silent,
        resolver: {
          resolve: () => ({
            token: 'app',
            backendMode: 'proxy',
            target: backend.url,
            oauth: { provider: 'github', emailPatterns: [], checkIntervalMs: 60_000 },
          }),
        },
      });
    const a = await make('a'.repeat(40));
    const b = await make('b'.repeat(40));
    try {
      expect(a.publicAddress.port).not.toBe(b.publicAddress.port);
      expect(a.oauthAddress!.port).not.toBe(b.oauthAddress!.port);
      // A state minted by A is meaningless to B.
      const agent = new HttpUserAgent();
      const start = await agent.request(`http://app.${SHARE_DOMAIN}:${a.publicAddress.port}/`);
      const state = new URL(start.location!).searchParams.get('state')!;
      const res = await agent.request(`http://auth.weft.test:${b.oauthAddress!.port}/github/auth/callback?code=x&state=${encodeURIComponent(state)}`);
      expect(res.status).toBe(400);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('releases its ports on close()', async () => {
    const fe = await startFrontend({
      config: { bind_address: '127.0.0.1:0', share_domain: SHARE_DOMAIN, oauth: oauthSection(0, [githubProvider]) },
      logger: silent,
      resolver: { resolve: () => undefined },
    });
    expect(fe.oauthAddress!.port).toBeGreaterThan(0); // port 0 works for both listeners
    const ports = [fe.publicAddress.port, fe.oauthAddress!.port];
    await fe.close();
    await fe.close(); // idempotent
    for (const port of ports) {
      const refused = await new Promise<boolean>((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        socket.on('connect', () => (socket.destroy(), resolve(false)));
        socket.on('error', () => resolve(true));
      });
      expect(refused, `port ${port}`).toBe(true);
    }
  });

  it('answers failures of the share resolver with a page, not a crash', async () => {
    const fe = await startFrontend({
      config: { bind_address: '127.0.0.1:0', share_domain: SHARE_DOMAIN },
      logger: silent,
      resolver: {
        resolve: async (token) => {
          if (token === 'boom') throw new Error('database is locked');
          return { token, backendMode: 'proxy', target: 'not a url' };
        },
      },
    });
    try {
      const agent = new HttpUserAgent();
      expect((await agent.request(`http://boom.${SHARE_DOMAIN}:${fe.publicAddress.port}/`)).status).toBe(502);
      expect((await agent.request(`http://bad.${SHARE_DOMAIN}:${fe.publicAddress.port}/`)).status).toBe(502);
      expect((await agent.request(`http://127.0.0.1:${fe.publicAddress.port}/health`)).status).toBe(200);
    } finally {
      await fe.close();
    }
  });

  it('answers 503 when a share needs OAuth the frontend does not have, or an unknown provider', async () => {
    const shares: Record<string, unknown> = {
      a: { token: 'a', backendMode: 'proxy', target: backend.url, oauth: { provider: 'github', emailPatterns: [], checkIntervalMs: 1 } },
      b: { token: 'b', backendMode: 'proxy', target: backend.url, oauth: { provider: 'gitlab', emailPatterns: [], checkIntervalMs: 1 } },
    };
    const noOAuth = await startFrontend({
      config: { bind_address: '127.0.0.1:0', share_domain: SHARE_DOMAIN },
      logger: silent,
      resolver: { resolve: (t) => shares[t] as any },
    });
    const withOAuth = await startFrontend({
      config: { bind_address: '127.0.0.1:0', share_domain: SHARE_DOMAIN, oauth: oauthSection(await freePort(), [githubProvider]) },
      logger: silent,
      resolver: { resolve: (t) => shares[t] as any },
    });
    try {
      const agent = new HttpUserAgent();
      expect((await agent.request(`http://a.${SHARE_DOMAIN}:${noOAuth.publicAddress.port}/`)).status).toBe(503);
      expect((await agent.request(`http://b.${SHARE_DOMAIN}:${withOAuth.publicAddress.port}/`)).status).toBe(503);
      expect(backend.requests).toHaveLength(0);
    } finally {
      await noOAuth.close();
      await withOAuth.close();
    }
  });

  it('answers 502 when the OIDC issuer cannot be reached at login time', async () => {
    const deadIssuer = `http://127.0.0.1:${await freePort()}`;
    const fe = await startFrontend({
      config: {
        bind_address: '127.0.0.1:0',
        share_domain: SHARE_DOMAIN,
        oauth: oauthSection(await freePort(), [
          { name: 'corp', type: 'oidc', client_id: 'x', client_secret: 'y', issuer: deadIssuer, scopes: ['openid', 'email'], supports_pkce: true },
        ]),
      },
      logger: silent,
      resolver: {
        resolve: (t) => ({
          token: t,
          backendMode: 'proxy',
          target: backend.url,
          oauth: { provider: 'corp', emailPatterns: [], checkIntervalMs: 60_000 },
        }),
      },
    });
    try {
      const res = await new HttpUserAgent().request(`http://app.${SHARE_DOMAIN}:${fe.publicAddress.port}/`);
      expect(res.status).toBe(502);
      expect(res.body).toContain('identity provider cannot be reached');
      expect(res.setCookies.some((c) => c.startsWith(COOKIE_NAME))).toBe(false);
    } finally {
      await fe.close();
    }
  });
});
