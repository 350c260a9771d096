import { mkdirSync, readFileSync } from 'node:fs';
import { processLogger } from './logFormat';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { bindApiListener, createApiServer } from './api/server';
import { buildRootRoutes, buildRoutes, ROOT_ALIASES } from './api/routes/index';
import { configSchema, loadConfig, splitHostPort, ConfigError, hostPort, type WeftConfig } from './config';
import { apiLimits } from './core/auth/rateLimit';
import { systemClock, type Clock } from './core/clock';
import { Core } from './core/core';
import { newId } from './core/ids';
import { startCore, writeSubscribers } from './core/modules';
import { checkEventLoggers, startEventLoggers, type RunningLogger } from './events/loggers';
import { SCHEMA_MIGRATIONS } from './core/registry';
import { setting } from './core/store/settings';
import { loadOrCreateControllerPki, toPkcs7Base64 } from './core/pki/index';
import { hostname } from 'node:os';
import { openStore } from './core/store/open';
import { loadNetworkPki } from './core/ops/sharedFiles';
import { startCertificateLifecycle, type CertificateLifecycle } from './certificateRenewal';
import { parseDuration } from '../shared/duration';
import { API_BASES } from './api/registry';
import { prepareShares, shareOAuthCheck, startPublicFrontend, type FrontendUrls } from './share/wiring';
import { defaultRendererDir, startConsoleServer } from './console/index';
import { startBuiltinRouter, type EdgeRouter } from './router/index';
import { ControlChannelServer, ctrlAddresses } from './ctrl/index';
import { controllerId } from './core/ops/index';
import { WeftMetrics, type MetricSources } from './metrics/metrics';
import { MetricHistory } from './metrics/history';
import { httpGroups } from './metrics/httpGroups';
import { startMetricsServer } from './metrics/server';
import { NetworkAddressListeners } from './networkAddress';
import { fabricLive } from './fabricLive';

export interface StartOptions {
  dataDir?: string;
  configFile?: string;
  /** overrides store.url: a PostgreSQL URL or a SQLite file */
  database?: string;
  /** overrides api.address from the config file */
  apiAddress?: string;
  /** overrides log_format from the config file */
  logFormat?: string;
  /** overrides api.brand from the config file */
  apiBrand?: string;
  /** overrides api.oidc from the config file: on | off */
  apiOidc?: string;
  /** overrides console.address from the config file */
  consoleAddress?: string;
  /** overrides metrics.address from the config file, or `off` for metrics.enabled false */
  metricsAddress?: string;
  /** overrides router.listener (tls:HOST:PORT), or `off` for router.enabled false */
  routerListener?: string;
  /** overrides ctrl.listener (tls:HOST:PORT), or `off` for ctrl.enabled false */
  ctrlListener?: string;
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
  urls: {
    api: string;
    client: string;
    management: string;
    frontend?: FrontendUrls;
    console?: string;
    metrics?: string;
    router?: string;
    ctrl?: string;
  };
  /** the built-in edge router, unless router.enabled is false */
  router?: EdgeRouter;
  /** the control channel stock routers dial, unless ctrl.enabled is false */
  ctrl?: ControlChannelServer;
  admin: { username: string; generatedPassword?: string };
  /** the operator console, unless console.enabled is false */
  console?: { url: string; createLoginLink(): string };
  /** the configured event loggers (config `events`) */
  eventLoggers: RunningLogger[];
  /** the console's metric samples, when metrics are on (tests take samples with an injected clock) */
  metricHistory?: MetricHistory;
  /** renewal of Weft's own certificates, extension reminders and expiry warnings (certificateRenewal.ts) */
  certificates: CertificateLifecycle;
  /** the listeners behind the advertised address (networkAddress.ts) */
  networkAddress: NetworkAddressListeners;
  close(): Promise<void>;
}

/** Validates everything that can be validated before anything is written. Throws ConfigError. */
export function resolveConfig(opts: StartOptions): { config: WeftConfig; dataDir: string; metricsToken?: string } {
  const config = loadConfig(opts.configFile);
  if (opts.database !== undefined) {
    if (!opts.database) throw new ConfigError('--database: must be a PostgreSQL URL or a SQLite file');
    config.store = { url: opts.database };
  }
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
  if (opts.apiOidc !== undefined) {
    if (opts.apiOidc !== 'on' && opts.apiOidc !== 'off') throw new ConfigError('--api-oidc: must be on or off');
    config.api = { ...config.api, oidc: { ...config.api.oidc, enabled: opts.apiOidc === 'on' } };
  }
  if (opts.routerListener !== undefined) {
    const off = opts.routerListener === 'off';
    const r = configSchema.shape.router.safeParse({ ...config.router, enabled: !off, ...(off ? {} : { listener: opts.routerListener }) });
    if (!r.success) throw new ConfigError(`--router-listener: ${r.error.issues[0]!.message}`);
    config.router = r.data;
  }
  if (opts.ctrlListener !== undefined) {
    const off = opts.ctrlListener === 'off';
    const r = configSchema.shape.ctrl.safeParse({ ...config.ctrl, enabled: !off, ...(off ? {} : { listener: opts.ctrlListener }) });
    if (!r.success) throw new ConfigError(`--ctrl-listener: ${r.error.issues[0]!.message}`);
    config.ctrl = r.data;
  }
  if (opts.consoleAddress !== undefined) {
    const r = configSchema.shape.console.safeParse({ ...config.console, address: opts.consoleAddress });
    if (!r.success) throw new ConfigError(`--console-address: ${r.error.issues[0]!.message}`);
    config.console = r.data;
  }
  if (opts.metricsAddress !== undefined) {
    const off = opts.metricsAddress === 'off';
    const r = configSchema.shape.metrics.safeParse({ ...config.metrics, enabled: !off, ...(off ? {} : { address: opts.metricsAddress }) });
    if (!r.success) throw new ConfigError(`--metrics-address: ${r.error.issues[0]!.message}`);
    config.metrics = r.data;
  }
  checkEventLoggers(config.events);
  const dataDir = resolve(opts.dataDir ?? config.data_dir ?? '.weft');
  return { config, dataDir, metricsToken: metricsToken(config) };
}

/** The metrics' bearer token (metrics.bearer_token_file's first line). Throws ConfigError naming the field. */
function metricsToken(config: WeftConfig): string | undefined {
  const file = config.metrics.enabled ? config.metrics.bearer_token_file : undefined;
  if (!file) return undefined;
  let token: string;
  try {
    token = readFileSync(file, 'utf8').split('\n')[0]!.trim();
  } catch (e) {
    throw new ConfigError(`metrics.bearer_token_file: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (token.length < 16) throw new ConfigError(`metrics.bearer_token_file: ${file} must hold a token of at least 16 characters`);
  return token;
}

/** The composition root: config → store → PKI → bootstrap → listeners. close() releases everything. */
export async function startApp(opts: StartOptions = {}): Promise<App> {
  const { config, dataDir, metricsToken } = resolveConfig(opts);
  const env = opts.env ?? process.env;
  const clock = opts.clock ?? systemClock;
  const log = opts.logger ?? processLogger(config.log_level, config.log_format);
  const cleanups: Array<() => Promise<void> | void> = [];
  const close = async () => {
    for (const fn of cleanups.reverse()) await fn();
  };
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const store = openStore(config.store.url, dataDir);
    cleanups.push(() => store.close());
    await store.migrate(SCHEMA_MIGRATIONS);

    const trustDomain = await setting(store, 'trust_domain', () => `weft-${newId(8).toLowerCase()}`);
    const { host, port } = splitHostPort(config.api.address);
    const hosts = [...config.api.advertised_hosts, ...(host === '0.0.0.0' || host === '::' ? [] : [host])];
    // routers verify the control channel's certificate (the API's) against the host they dial
    const ctrlHost = config.ctrl.enabled ? ctrlAddresses(config.ctrl).advertise.host : undefined;
    if (ctrlHost && !hosts.includes(ctrlHost)) hosts.push(ctrlHost);
    const pki = await loadNetworkPki(store, dataDir, clock.now(), () =>
      loadOrCreateControllerPki(join(dataDir, 'pki'), {
        trustDomain,
        serverSans: { dns: hosts.filter((h) => !isIP(h)), ip: hosts.filter((h) => isIP(h)) },
        now: clock.now(),
      }),
    );
    const caBundle = [pki.root.certPem, pki.intermediate.certPem, pki.signing.certPem];
    const advertisedHost = config.api.advertised_hosts[0] ?? (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);
    // the listener first: the core is built knowing the API's public URL (it answers 503 until the routes are in)
    const listener = await bindApiListener({ key: pki.server.keyPem, cert: pki.serverChainPem }, host, port);
    cleanups.push(() => new Promise<void>((done) => (listener.server.listening ? listener.server.close(() => done()) : done())));
    // the control channel is bound before the core too: router enrollment JWTs name its address
    const ctrl = config.ctrl.enabled
      ? await ControlChannelServer.bind({ config: config.ctrl, tls: { keyPem: pki.server.keyPem, certChainPem: pki.serverChainPem }, log })
      : undefined;
    if (ctrl) cleanups.push(() => ctrl.close());
    const hostForUrl = isIP(advertisedHost) === 6 ? `[${advertisedHost}]` : advertisedHost;
    const core = new Core(
      store,
      clock,
      {
        dataDir,
        apiPublicUrl: `https://${hostForUrl}:${listener.port}`,
        sessionTimeoutMs: parseDuration(config.api.session_timeout),
        brand: config.api.brand,
        oidc: {
          enabled: config.api.oidc.enabled,
          accessTokenMs: parseDuration(config.api.oidc.access_token_lifetime),
          idTokenMs: parseDuration(config.api.oidc.id_token_lifetime),
          refreshTokenMs: parseDuration(config.api.oidc.refresh_token_lifetime),
        },
        snapshotIntervalMs: parseDuration(config.rate_limits.snapshot_interval),
        schemaMigrations: SCHEMA_MIGRATIONS,
        checkShareOAuth: shareOAuthCheck(config.frontend),
      },
      { ...pki, caBundlePkcs7: toPkcs7Base64(caBundle) },
      log,
      writeSubscribers(),
    );
    const api = core.config.apiPublicUrl;
    const modules = await startCore(
      core,
      {
        admin: { username: env.WEFT_ADMIN_USERNAME || 'admin', password: env.WEFT_ADMIN_PASSWORD || undefined },
        controller: {
          // one controller on SQLite; several nodes on one PostgreSQL database are told apart by host and port
          name: store.dialect === 'sqlite' ? trustDomain : `${hostname()}:${listener.port}`,
          apiAddresses: {
            'edge-client': [{ url: api + API_BASES.client, version: 'v1' }],
            'edge-management': [{ url: api + API_BASES.management, version: 'v1' }],
          },
          ctrlAddress: ctrl?.address,
        },
        audit: { retentionMs: parseDuration(config.audit.retention), maxEntries: config.audit.max_entries },
      },
      log,
    );
    cleanups.push(modules.stop);
    const boot = modules.result.bootstrap!;
    const eventLoggers = await startEventLoggers(core, config.events, log);
    cleanups.push(eventLoggers.stop);
    await prepareShares(core);

    // the built-in router starts after the API: the fabric API finds it once it is there
    let router: EdgeRouter | undefined;
    const fabric = fabricLive({ ctrl, router: () => router });
    const routes = buildRoutes(core, { fabric });
    const rootRoutes = buildRootRoutes(core);
    // metrics read the router and control channel when scraped (set once they exist)
    const sources: MetricSources = { core, ctrl, eventLoggers: eventLoggers.loggers };
    const metrics = config.metrics.enabled ? new WeftMetrics(sources) : undefined;
    if (metrics) cleanups.push(() => metrics.close());
    const groupOf = httpGroups(routes, [...rootRoutes.map((r) => r.path), ...ROOT_ALIASES.map((a) => a.path)]);
    const server = createApiServer(core, {
      server: listener.server,
      routes,
      rootAliases: ROOT_ALIASES,
      rootRoutes,
      limits: apiLimits(config.rate_limits, clock),
      observe: metrics && ((req, res) => metrics.observe(req, res, groupOf(req.url ?? '/'))),
    });
    await server.ready();
    cleanups.push(() => server.close());
    ctrl?.start(core, await controllerId(core));
    // at stop, the control channel closes first: no router is accepted once the rest starts going
    if (ctrl) cleanups.push(() => ctrl.close());
    router = config.router.enabled ? await startBuiltinRouter(core, config.router, dataDir, log) : undefined;
    if (router) cleanups.push(() => router.close());
    // the built-in router is a router of the stock routers' mesh (it dials their link listeners, or they dial its own)
    if (ctrl && router) ctrl.attachBuiltin(router);
    sources.router = router;
    const history = metrics && new MetricHistory(() => metrics.runningTotals(), clock).start();
    if (history) cleanups.push(() => history.stop());
    const metricsServer = metrics && (await startMetricsServer({ metrics, address: config.metrics.address, bearerToken: metricsToken, log }));
    if (metricsServer) cleanups.push(() => metricsServer.close());
    const certificates = startCertificateLifecycle({ core, log, serverListeners: [listener.server, ...(ctrl ? [ctrl] : [])], router });
    cleanups.push(() => certificates.stop());
    certificates.check().catch((err: unknown) => log.warn({ err }, 'certificate check failed'));
    // the address the operator chose in the console (network-address.json): listened on and advertised again
    const networkAddress = new NetworkAddressListeners({
      core,
      api: { server: listener.server, host, port: listener.port },
      serverListeners: [listener.server, ...(ctrl ? [ctrl] : [])],
      router,
    });
    cleanups.push(() => networkAddress.close());
    await networkAddress.restoreSaved(log);

    const frontend = await startPublicFrontend(core, {
      frontend: config.frontend,
      dataDir,
      apiUrl: api,
      logger: log,
      clock,
      router: router && { url: router.url, id: router.id },
    });
    cleanups.push(() => frontend.close());
    // what is advertised now (the console shows it as it changes)
    const advertisedUrls = () => {
      const url = core.config.apiPublicUrl;
      return { api: url, client: url + API_BASES.client, management: url + API_BASES.management };
    };
    const urls = advertisedUrls();
    const consoleServer = config.console.enabled
      ? await startConsoleServer({
          core,
          address: config.console.address,
          rendererDir: opts.consoleRendererDir ?? defaultRendererDir(),
          loginLinkTtlMs: parseDuration(config.console.login_link_ttl),
          apiUrls: () => ({ ...advertisedUrls(), shareUrl: frontend.urls?.shareUrl, metrics: metricsServer?.url }),
          shareProviders: config.frontend?.oauth?.providers.map((p) => p.name),
          dataPlane: router,
          fabric,
          metricHistory: history,
          networkAddress,
        })
      : undefined;
    if (consoleServer) cleanups.push(() => consoleServer.close());
    log.info(
      { api: urls.api, console: consoleServer?.url, metrics: metricsServer?.url, router: router?.url, ctrl: ctrl?.address, dataDir },
      'weft started',
    );
    return {
      core,
      config,
      dataDir,
      urls: { ...urls, frontend: frontend.urls, console: consoleServer?.url, metrics: metricsServer?.url, router: router?.url, ctrl: ctrl?.address },
      router,
      ctrl,
      admin: { username: boot.adminUsername, generatedPassword: boot.generatedAdminPassword },
      console: consoleServer,
      eventLoggers: eventLoggers.loggers,
      certificates,
      metricHistory: history,
      networkAddress,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
