import { mkdirSync } from 'node:fs';
import { processLogger } from './logFormat';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { createApiServer } from './api/server';
import { buildRoutes, ROOT_ALIASES } from './api/routes/index';
import { configSchema, loadConfig, splitHostPort, ConfigError, hostPort, type WeftConfig } from './config';
import { apiLimits } from './core/auth/rateLimit';
import { bootstrap } from './core/bootstrap';
import { systemClock, type Clock } from './core/clock';
import { Core } from './core/core';
import { newId } from './core/ids';
import { pruneAuditLog } from './core/ops/audit';
import { markRoutersOffline } from './core/dataPlane/builtinRouter';
import { classifyAllUnclassified } from './core/policy/classes';
import { fingerprintSha1, loadOrCreateControllerPki, toPkcs7Base64 } from './core/pki/index';
import { Store } from './core/store/db';
import { parseDuration } from '../shared/duration';
import { API_BASES } from './api/registry';
import { prepareShares, shareOAuthCheck, startPublicFrontend, type FrontendUrls } from './share/wiring';
import { defaultRendererDir, startConsoleServer } from './console/index';
import { startBuiltinRouter, type EdgeRouter } from './router/index';

export interface StartOptions {
  dataDir?: string;
  configFile?: string;
  /** overrides api.address from the config file */
  apiAddress?: string;
  /** overrides log_format from the config file */
  logFormat?: string;
  /** overrides api.brand from the config file */
  apiBrand?: string;
  /** overrides console.address from the config file */
  consoleAddress?: string;
  /** overrides router.listener (tls:HOST:PORT), or `off` for router.enabled false */
  routerListener?: string;
  /** the built renderer the console serves (default: out/renderer of this checkout) */
  consoleRendererDir?: string;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  logger?: Logger;
}

export interface App {
  core: Core;
  config: WeftConfig;
  dataDir: string;
  urls: { api: string; client: string; management: string; frontend?: FrontendUrls; console?: string; router?: string };
  /** the built-in edge router, unless router.enabled is false */
  router?: EdgeRouter;
  admin: { username: string; generatedPassword?: string };
  /** the operator console, unless console.enabled is false */
  console?: { url: string; createLoginLink(): string };
  close(): Promise<void>;
}

/** Validates everything that can be validated before anything is written. Throws ConfigError. */
export function resolveConfig(opts: StartOptions): { config: WeftConfig; dataDir: string } {
  const config = loadConfig(opts.configFile);
  if (opts.apiAddress !== undefined) {
    const r = hostPort.safeParse(opts.apiAddress);
    if (!r.success) throw new ConfigError(`--api-address: ${r.error.issues[0]!.message}`);
    config.api.address = opts.apiAddress;
  }
  if (opts.logFormat !== undefined) {
    const r = configSchema.shape.log_format.safeParse(opts.logFormat);
    if (!r.success) throw new ConfigError('--log-format: must be auto, pretty or json');
    config.log_format = r.data;
  }
  if (opts.apiBrand !== undefined) {
    const r = configSchema.shape.api.safeParse({ ...config.api, brand: opts.apiBrand });
    if (!r.success) throw new ConfigError(`--api-brand: must be svc or ziti`);
    config.api = r.data;
  }
  if (opts.routerListener !== undefined) {
    const off = opts.routerListener === 'off';
    const r = configSchema.shape.router.safeParse({ ...config.router, enabled: !off, ...(off ? {} : { listener: opts.routerListener }) });
    if (!r.success) throw new ConfigError(`--router-listener: ${r.error.issues[0]!.message}`);
    config.router = r.data;
  }
  if (opts.consoleAddress !== undefined) {
    const r = configSchema.shape.console.safeParse({ ...config.console, address: opts.consoleAddress });
    if (!r.success) throw new ConfigError(`--console-address: ${r.error.issues[0]!.message}`);
    config.console = r.data;
  }
  const dataDir = resolve(opts.dataDir ?? config.data_dir ?? '.weft');
  return { config, dataDir };
}

/** The composition root: config → store → PKI → bootstrap → listeners. close() releases everything. */
export async function startApp(opts: StartOptions = {}): Promise<App> {
  const { config, dataDir } = resolveConfig(opts);
  const env = opts.env ?? process.env;
  const clock = opts.clock ?? systemClock;
  const log = opts.logger ?? processLogger(config.log_level, config.log_format);
  const cleanups: Array<() => Promise<void> | void> = [];
  const close = async () => {
    for (const fn of cleanups.reverse()) await fn();
  };
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const store = new Store(join(dataDir, 'weft.db'));
    cleanups.push(() => store.close());
    store.migrate();

    const trustDomain = setting(store, 'trust_domain', () => `weft-${newId(8).toLowerCase()}`);
    const { host, port } = splitHostPort(config.api.address);
    const hosts = [...config.api.advertised_hosts, ...(host === '0.0.0.0' || host === '::' ? [] : [host])];
    const pki = await loadOrCreateControllerPki(join(dataDir, 'pki'), {
      trustDomain,
      serverSans: { dns: hosts.filter((h) => !isIP(h)), ip: hosts.filter((h) => isIP(h)) },
    });
    const caBundle = [pki.root.certPem, pki.intermediate.certPem, pki.signing.certPem];
    const advertisedHost = config.api.advertised_hosts[0] ?? (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);
    const core = new Core(
      store,
      clock,
      {
        dataDir,
        apiPublicUrl: '',
        sessionTimeoutMs: parseDuration(config.api.session_timeout),
        brand: config.api.brand,
        snapshotIntervalMs: parseDuration(config.rate_limits.snapshot_interval),
        checkShareOAuth: shareOAuthCheck(config.frontend),
      },
      { ...pki, caBundlePkcs7: toPkcs7Base64(caBundle) },
      log,
    );
    cleanups.push(() => core.security.close());
    // the secret key (<data dir>/secrets.key): created at the first start, refused when others may read it;
    // MFA secrets still stored in clear are sealed with it
    core.security.prepareSecrets();

    const boot = await bootstrap(core, {
      username: env.WEFT_ADMIN_USERNAME || 'admin',
      password: env.WEFT_ADMIN_PASSWORD || undefined,
    });
    classifyAllUnclassified(store);
    await prepareShares(core);

    const routes = buildRoutes(core);
    const server = createApiServer(core, {
      tls: { key: pki.server.keyPem, cert: pki.serverChainPem },
      routes,
      rootAliases: ROOT_ALIASES,
      limits: apiLimits(config.rate_limits, clock),
    });
    await server.listen({ host, port });
    cleanups.push(() => server.close());
    const realPort = (server.server.address() as { port: number }).port;
    const hostForUrl = isIP(advertisedHost) === 6 ? `[${advertisedHost}]` : advertisedHost;
    core.config.apiPublicUrl = `https://${hostForUrl}:${realPort}`;
    registerController(core, trustDomain);

    markRoutersOffline(core);
    const router = config.router.enabled ? await startBuiltinRouter(core, config.router, dataDir, log) : undefined;
    if (router) cleanups.push(() => router.close());

    const sweeper = setInterval(() => core.sessions.sweep(), 60_000);
    sweeper.unref();
    cleanups.push(() => clearInterval(sweeper));
    const auditRetention = { retentionMs: parseDuration(config.audit.retention), maxEntries: config.audit.max_entries };
    const pruneAudit = () => {
      try {
        pruneAuditLog(core, auditRetention);
      } catch (err) {
        log.warn({ err }, 'audit log pruning failed');
      }
    };
    pruneAudit();
    const auditPruner = setInterval(pruneAudit, 10 * 60_000);
    auditPruner.unref();
    cleanups.push(() => clearInterval(auditPruner));

    const api = core.config.apiPublicUrl;
    const frontend = await startPublicFrontend(core, {
      frontend: config.frontend,
      dataDir,
      apiUrl: api,
      logger: log,
      clock,
      router: router && { url: router.url, id: router.id },
    });
    cleanups.push(() => frontend.close());
    const urls = { api, client: api + API_BASES.client, management: api + API_BASES.management };
    const consoleServer = config.console.enabled
      ? await startConsoleServer({
          core,
          address: config.console.address,
          rendererDir: opts.consoleRendererDir ?? defaultRendererDir(),
          loginLinkTtlMs: parseDuration(config.console.login_link_ttl),
          apiUrls: () => ({ ...urls, shareUrl: frontend.urls?.shareUrl }),
          shareProviders: config.frontend?.oauth?.providers.map((p) => p.name),
          dataPlane: router,
        })
      : undefined;
    if (consoleServer) cleanups.push(() => consoleServer.close());
    log.info({ api, console: consoleServer?.url, router: router?.url, dataDir }, 'weft started');
    return {
      core,
      config,
      dataDir,
      urls: { ...urls, frontend: frontend.urls, console: consoleServer?.url, router: router?.url },
      router,
      admin: { username: boot.adminUsername, generatedPassword: boot.generatedAdminPassword },
      console: consoleServer,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

function setting(store: Store, key: string, create: () => string): string {
  const row = store.getSql<{ value: string }>('SELECT value FROM settings WHERE key = ?', key);
  if (row) return row.value;
  const value = create();
  store.runSql('INSERT INTO settings (key, value) VALUES (?, ?)', key, value);
  return value;
}

/** Upserts this controller's own row (Weft is a single-controller network). */
function registerController(core: Core, trustDomain: string): void {
  const id = setting(core.store, 'controller_id', () => newId());
  const now = core.clock.now().toISOString();
  const api = core.config.apiPublicUrl;
  const addresses = {
    'edge-client': [{ url: api + API_BASES.client, version: 'v1' }],
    'edge-management': [{ url: api + API_BASES.management, version: 'v1' }],
  };
  core.store.runSql(
    `INSERT INTO controllers (id, name, ctrl_address, cert_pem, fingerprint, api_addresses, is_online, is_preferred_leader, last_joined_at, created_at, updated_at)
     VALUES (?, ?, NULL, ?, ?, ?, 1, 1, ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET cert_pem = excluded.cert_pem, fingerprint = excluded.fingerprint, api_addresses = excluded.api_addresses,
       is_online = 1, last_joined_at = excluded.last_joined_at, updated_at = excluded.updated_at`,
    id,
    trustDomain,
    core.pki.server.certPem,
    fingerprintSha1(core.pki.server.certPem),
    JSON.stringify(addresses),
    now,
    now,
    now,
  );
}
