// User agents for frontend tests — a real Chromium (playwright-core + Debian's /usr/bin/chromium, or the one the
// @sparticuz/chromium devDependency ships)
// and an HTTP-level agent with a cookie jar — plus the things they visit: an echo backend and a
// frontend started with a test configuration.
//
// Host names: shares live at <token>.share.weft.test, the OAuth endpoint at auth.weft.test and
// cookies use Domain=weft.test. Chromium maps *.weft.test to 127.0.0.1 through
// --host-resolver-rules; the HTTP agent always connects to 127.0.0.1 and sends the Host header.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { chromium, type BrowserContext } from 'playwright-core';
import { Agent } from 'undici';
import { WebSocketServer } from 'ws';
import { startFrontend } from '../../src/main/frontend';
import type { FrontendConfig, OAuthConfig, ProviderConfig } from '../../src/main/frontend/config';
import type { FrontendHandle, PublicShare } from '../../src/main/frontend/types';

export const COOKIE_DOMAIN = 'weft.test';
export const SHARE_DOMAIN = 'share.weft.test';
export const AUTH_HOST = 'auth.weft.test';
export const COOKIE_NAME = 'svc-auth-session';
/** Debian's Chromium, used when installed (WEFT_SYSTEM_CHROMIUM points elsewhere, e.g. to test without it). */
const systemChromium = () => process.env.WEFT_SYSTEM_CHROMIUM ?? '/usr/bin/chromium';

let chromiumPath: Promise<string> | undefined;

/**
 * The Chromium the browser tests drive: the system one when installed, otherwise the one the @sparticuz/chromium
 * devDependency ships inside its npm package (unpacked to the temp dir on first use), so `npm install && npm test`
 * needs nothing else. Says which once per test process.
 */
export function chromiumExecutable(): Promise<string> {
  chromiumPath ??= (async () => {
    const system = systemChromium();
    if (existsSync(system)) {
      process.stderr.write(`browser tests: using the system Chromium at ${system}\n`);
      return system;
    }
    const bundled = (await import('@sparticuz/chromium')).default;
    const file = await bundled.executablePath();
    process.stderr.write(`browser tests: no system Chromium; using the one from the npm package @sparticuz/chromium (${file})\n`);
    return file;
  })();
  return chromiumPath;
}

// ---------------------------------------------------------------------------------------------
// Chromium

export interface LaunchedBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Launches Chromium with a fresh profile; *.weft.test (and `hosts`, e.g. a share's custom domain) resolve to
 * 127.0.0.1. `ignoreHTTPSErrors` accepts the tests' self-signed certificates (check which one was served with
 * response.securityDetails()).
 */
export async function launchChromium(opts: { extraArgs?: string[]; hosts?: string[]; ignoreHTTPSErrors?: boolean } = {}): Promise<LaunchedBrowser> {
  const executablePath = await chromiumExecutable();
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'weft-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      ignoreHTTPSErrors: opts.ignoreHTTPSErrors ?? false,
      args: [
        '--headless=new',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        `--host-resolver-rules=${[`*.${COOKIE_DOMAIN}`, ...(opts.hosts ?? [])].map((h) => `MAP ${h} 127.0.0.1`).join(', ')}`,
        ...(opts.extraArgs ?? []),
      ],
    });
    return {
      context,
      async close() {
        await context.close().catch(() => undefined);
        await rm(userDataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP-level user agent with a cookie jar (RFC 6265 subset: Domain, Path, Max-Age, Expires, Secure)

export interface StoredCookie {
  name: string;
  value: string;
  domain: string;
  hostOnly: boolean;
  path: string;
  expiresAt?: number;
  secure: boolean;
  httpOnly: boolean;
  sameSite?: string;
}

export interface AgentResponse {
  url: string;
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  location?: string;
  setCookies: string[];
  json<T = any>(): T;
}

function domainMatch(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

export class HttpUserAgent {
  readonly jar = new Map<string, StoredCookie>();

  /** Cookies that would be sent to `url`. */
  cookiesFor(url: string): StoredCookie[] {
    const u = new URL(url);
    const host = u.hostname.toLowerCase();
    const now = Date.now();
    return [...this.jar.values()].filter(
      (c) =>
        (c.expiresAt === undefined || c.expiresAt > now) &&
        (c.hostOnly ? host === c.domain : domainMatch(host, c.domain)) &&
        (u.pathname === c.path || u.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`)) &&
        (!c.secure || u.protocol === 'https:'),
    );
  }

  cookie(name: string): StoredCookie | undefined {
    return [...this.jar.values()].find((c) => c.name === name && (c.expiresAt === undefined || c.expiresAt > Date.now()));
  }

  setCookie(c: Omit<StoredCookie, 'hostOnly' | 'secure' | 'httpOnly' | 'path'> & Partial<StoredCookie>): void {
    const full: StoredCookie = { hostOnly: false, secure: false, httpOnly: true, path: '/', ...c };
    this.jar.set(`${full.name}|${full.domain}|${full.path}`, full);
  }

  deleteCookie(name: string): void {
    for (const [k, c] of this.jar) if (c.name === name) this.jar.delete(k);
  }

  storeSetCookie(requestUrl: string, header: string): void {
    const u = new URL(requestUrl);
    const [pair, ...attrs] = header.split(';');
    const eq = pair.indexOf('=');
    if (eq <= 0) return;
    const c: StoredCookie = {
      name: pair.slice(0, eq).trim(),
      value: pair.slice(eq + 1).trim(),
      domain: u.hostname.toLowerCase(),
      hostOnly: true,
      path: u.pathname.replace(/\/[^/]*$/, '') || '/',
      secure: false,
      httpOnly: false,
    };
    let maxAge: number | undefined;
    for (const attr of attrs) {
      const [k, ...rest] = attr.trim().split('=');
      const v = rest.join('=');
      switch (k.toLowerCase()) {
        case 'domain': {
          const d = v.replace(/^\./, '').toLowerCase();
          if (!domainMatch(c.domain, d)) return; // a host may not set cookies for foreign domains
          c.domain = d;
          c.hostOnly = false;
          break;
        }
        case 'path':
          if (v.startsWith('/')) c.path = v;
          break;
        case 'max-age':
          maxAge = Number(v);
          break;
        case 'expires':
          if (maxAge === undefined && !Number.isNaN(Date.parse(v))) c.expiresAt = Date.parse(v);
          break;
        case 'secure':
          c.secure = true;
          break;
        case 'httponly':
          c.httpOnly = true;
          break;
        case 'samesite':
          c.sameSite = v;
          break;
      }
    }
    if (maxAge !== undefined) c.expiresAt = Date.now() + maxAge * 1000;
    const key = `${c.name}|${c.domain}|${c.path}`;
    if (c.expiresAt !== undefined && c.expiresAt <= Date.now()) this.jar.delete(key);
    else this.jar.set(key, c);
  }

  /**
   * One request, no redirects followed; every loopback host is reached on 127.0.0.1.
   * `rawPath` is sent byte for byte (URL parsing would resolve "..", "." and "\\").
   */
  request(
    url: string,
    opts: { method?: string; headers?: Record<string, string>; body?: string; cookies?: boolean; rawPath?: string } = {},
  ): Promise<AgentResponse> {
    const u = new URL(url);
    const headers: Record<string, string> = { host: u.host, accept: 'text/html,application/xhtml+xml', ...opts.headers };
    if (opts.cookies !== false) {
      const cookies = this.cookiesFor(url);
      if (cookies.length && headers.cookie === undefined) headers.cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    }
    if (opts.body !== undefined) headers['content-length'] = String(Buffer.byteLength(opts.body));
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          hostname: '127.0.0.1',
          port: Number(u.port || 80),
          path: opts.rawPath ?? `${u.pathname}${u.search}`,
          method: opts.method ?? 'GET',
          headers,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const setCookies = res.headers['set-cookie'] ?? [];
            for (const sc of setCookies) this.storeSetCookie(url, sc);
            const body = Buffer.concat(chunks).toString('utf8');
            const location = res.headers.location ? new URL(res.headers.location, url).href : undefined;
            resolve({ url, status: res.statusCode ?? 0, headers: res.headers, body, location, setCookies, json: () => JSON.parse(body) });
          });
        },
      );
      req.on('error', reject);
      req.end(opts.body);
    });
  }

  /** Follows redirects like a browser navigation; returns every response in order. */
  async navigate(
    url: string,
    opts: { headers?: Record<string, string>; maxRedirects?: number; stopAt?: (url: string) => boolean } = {},
  ): Promise<AgentResponse[]> {
    const chain: AgentResponse[] = [];
    let next: string | undefined = url;
    for (let i = 0; next && i <= (opts.maxRedirects ?? 10); i++) {
      if (chain.length && opts.stopAt?.(next)) break;
      const res = await this.request(next, { headers: opts.headers });
      chain.push(res);
      next = res.status >= 300 && res.status < 400 ? res.location : undefined;
    }
    return chain;
  }
}

/** An undici dispatcher that connects every host name to 127.0.0.1 (for undici's WebSocket/fetch). */
export function loopbackDispatcher(): Agent {
  return new Agent({
    connect: {
      lookup: (_hostname: string, options: { all?: boolean }, callback: (...args: any[]) => void) => {
        if (options?.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
        else callback(null, '127.0.0.1', 4);
      },
    } as any,
  });
}

// ---------------------------------------------------------------------------------------------
// Echo backend (HTTP + WebSocket): answers with what it received

export interface EchoedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface EchoBackend {
  url: string;
  requests: EchoedRequest[];
  close(): Promise<void>;
}

export async function startEchoBackend(): Promise<EchoBackend> {
  const requests: EchoedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const echoed = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(echoed);
      const text = JSON.stringify(echoed);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Set-Cookie': 'backend=1; Path=/' });
      res.end(text);
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket, req) => {
    socket.send(JSON.stringify({ type: 'hello', url: req.url, headers: req.headers }));
    socket.on('message', (data) => socket.send(JSON.stringify({ type: 'echo', data: data.toString() })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Frontend under test

/** A free loopback port, for listeners whose URL must be known before they start (endpoint_url). */
import { freePort } from './freePort';
export { freePort };

export const SIGNING_KEY = 'test-signing-key-0123456789abcdef-0123';
export const ENCRYPTION_KEY = 'test-encryption-key-0123456789';

export function oauthSection(oauthPort: number, providers: ProviderConfig[], overrides: Partial<OAuthConfig> = {}): OAuthConfig {
  return {
    bind_address: `127.0.0.1:${oauthPort}`,
    endpoint_url: `http://${AUTH_HOST}:${oauthPort}`,
    cookie_name: COOKIE_NAME,
    cookie_domain: COOKIE_DOMAIN,
    session_lifetime: '6h',
    intermediate_lifetime: '5m',
    signing_key: SIGNING_KEY,
    encryption_key: ENCRYPTION_KEY,
    providers,
    ...overrides,
  };
}

export interface TestClock {
  now(): number;
  advance(ms: number): void;
}

/** Real time plus an adjustable offset (the frontend's clock; providers keep real time). */
export function testClock(): TestClock {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms) => void (offset += ms) };
}

export interface TestFrontend {
  handle: FrontendHandle;
  config: FrontendConfig;
  shares: Map<string, PublicShare>;
  endpointUrl: string;
  shareUrl(token: string, pathAndQuery?: string): string;
  logs: string[];
  logger: Logger;
  close(): Promise<void>;
}

export async function startTestFrontend(opts: {
  shares: PublicShare[];
  providers?: ProviderConfig[];
  oauthPort?: number;
  oauth?: Partial<OAuthConfig>;
  now?: () => number;
  noOAuth?: boolean;
  /** serve the public listener (and an https endpoint_url) over TLS */
  tls?: { cert_file: string; key_file: string };
}): Promise<TestFrontend> {
  const logs: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(line) });
  const oauthPort = opts.oauthPort ?? (await freePort());
  const config: FrontendConfig = {
    bind_address: '127.0.0.1:0',
    share_domain: SHARE_DOMAIN,
    ...(opts.tls ? { tls: opts.tls } : {}),
    ...(opts.noOAuth ? {} : { oauth: oauthSection(oauthPort, opts.providers ?? [], opts.oauth) }),
  };
  const shares = new Map(opts.shares.map((s) => [s.token, s]));
  const handle = await startFrontend({
    config,
    resolver: {
      resolve: (token) => shares.get(token),
      resolveDomain: (host) => [...shares.values()].find((s) => s.domains?.includes(host)),
    },
    logger,
    now: opts.now,
  });
  return {
    handle,
    config,
    shares,
    endpointUrl: (config.oauth?.endpoint_url ?? `http://${AUTH_HOST}:${oauthPort}`).replace(/\/+$/, ''),
    shareUrl: (token, pathAndQuery = '/') => `${handle.shareUrl(token)}${pathAndQuery}`,
    logs,
    logger,
    close: () => handle.close(),
  };
}
