import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Core } from '../core/core';
import { metersOf } from '../core/meters';
import { certificateInventory, type CertificateEntry } from '../core/ops/index';
import { summary } from '../core/registry';
import { servedFromCache } from '../api/server';
import type { HttpGroup } from './httpGroups';
import type { RouterCounts } from '../router/edgeRouter';
import { FastHistogram } from './histogram';

/** What the metrics read at scrape time besides the core: the data plane, the control channel, the event loggers. */
export interface MetricSources {
  core: Core;
  router?: { counts(): RouterCounts };
  ctrl?: { connectedRouters(): string[] };
  eventLoggers?: Array<{ name: string; follower: { dropped: number } }>;
}

/** Running totals the console's charts sample (history.ts): cheap to read, no database. */
export interface MetricTotals {
  requests: number;
  serverErrors: number;
  loginsOk: number;
  loginsFailed: number;
  circuitsOpen: number;
  bytes: number;
}

const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The process's own metrics (CPU, memory, event loop lag, GC), shared by every Weft in the process: they describe the
 * process, and prom-client's collectors cannot be stopped once started.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * Weft's Prometheus metrics (prom-client): requests by API, route group, method and status; reply-cache hits; logins;
 * policy index work; store transactions and their waits; resource counts (API sessions, sessions, terminators, …);
 * router connections, circuits and bytes; time left on certificates; dropped events. Counters kept elsewhere (the core's
 * meters, the router's traffic) are read when scraped, so the hot paths only bump numbers.
 */
export class WeftMetrics {
  readonly registry = new Registry();
  /** bumped per request (the console's charts and the cache counter read them) */
  private readonly totals = { requests: 0, serverErrors: 0, cacheHits: 0, cacheMisses: 0 };
  private readonly http: FastHistogram<'api' | 'group' | 'method' | 'status'>;
  private readonly transactions: FastHistogram<'kind' | 'outcome'>;
  private readonly waits: FastHistogram<'kind'>;

  constructor(private readonly sources: MetricSources) {
    const registers = [this.registry];
    const { core } = sources;
    this.http = new FastHistogram(
      'weft_http_request_duration_seconds',
      'API requests (client, management and root paths) by route group, method and status, and how long they took',
      SECONDS,
      this.registry,
    );
    const totals = this.totals;
    new Counter({
      name: 'weft_reply_cache_requests_total',
      help: 'GET requests answered from the reply cache (hit) or computed (miss)',
      labelNames: ['result'],
      registers,
      collect() {
        this.reset();
        this.inc({ result: 'hit' }, totals.cacheHits);
        this.inc({ result: 'miss' }, totals.cacheMisses);
      },
    });
    this.transactions = new FastHistogram(
      'weft_store_transaction_seconds',
      'Store transactions (read snapshots, writes) from their turn to their end, by outcome',
      SECONDS,
      this.registry,
    );
    this.waits = new FastHistogram(
      'weft_store_transaction_wait_seconds',
      "Time store transactions waited for their turn (SQLite's connection; PostgreSQL's pool, write lock and BEGIN)",
      SECONDS,
      this.registry,
    );
    core.store.observeTransactions = (kind, wait, run, committed) => {
      this.waits.observe(kind, () => ({ kind }), wait);
      const outcome = committed ? 'commit' : 'rollback';
      this.transactions.observe(`${kind} ${outcome}`, () => ({ kind, outcome }), run);
    };
    const meters = metersOf(core);
    new Counter({
      name: 'weft_authentications_total',
      help: 'Logins decided, by primary method (password, cert, ext-jwt) and outcome (success, fail)',
      labelNames: ['method', 'outcome'],
      registers,
      collect() {
        this.reset();
        for (const [key, n] of meters.authentications) {
          const [method, outcome] = key.split('|');
          this.inc({ method, outcome }, n);
        }
      },
    });
    new Counter({
      name: 'weft_policy_index_updates_total',
      help: 'Policy index updates: a policy written (policy), or an entity whose role attributes changed (entity)',
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset();
        this.inc({ kind: 'policy' }, meters.policyIndex.policies);
        this.inc({ kind: 'entity' }, meters.policyIndex.entities);
      },
    });
    new Counter({
      name: 'weft_policy_index_seconds_total',
      help: 'Time spent updating the policy index',
      registers,
      collect() {
        this.reset();
        this.inc(meters.policyIndex.seconds);
      },
    });
    new Gauge({
      name: 'weft_resources',
      help: 'Rows of each resource type, as /summary counts them (apiSessions, sessions, terminators, identities, …)',
      labelNames: ['type'],
      registers,
      async collect() {
        this.reset();
        try {
          for (const [type, n] of Object.entries(await summary(core.system))) this.set({ type }, n);
        } catch (err) {
          core.log.warn({ err }, 'metrics: resource counts unavailable');
        }
      },
    });
    // one series per certificate of Weft's own (CAs, servers, routers); identities' only counted (there may be many).
    // A scrape collects every metric at once: both read one inventory.
    let inventory: Promise<CertificateEntry[]> | undefined;
    const inventoryOnce = () => {
      if (!inventory) {
        inventory = certificateInventory(core).catch((err: unknown) => {
          core.log.warn({ err }, 'metrics: certificate inventory unavailable');
          return [];
        });
        setImmediate(() => (inventory = undefined));
      }
      return inventory;
    };
    new Gauge({
      name: 'weft_certificate_expires_in_seconds',
      help: "Time left until each certificate of Weft's own expires (CAs, TLS servers, routers), by the controller's clock",
      labelNames: ['kind', 'name'],
      registers,
      async collect() {
        this.reset();
        const now = core.clock.now().getTime();
        for (const c of await inventoryOnce()) {
          if (c.kind !== 'identity') this.set({ kind: c.kind, name: c.name }, Math.round((Date.parse(c.notAfter) - now) / 1000));
        }
      },
    });
    new Gauge({
      name: 'weft_certificates',
      help: 'Certificates Weft issued or trusts, by kind and warning state (ok, warning-30, warning-7, warning-1, expired)',
      labelNames: ['kind', 'state'],
      registers,
      async collect() {
        this.reset();
        const counts = new Map<string, { kind: string; state: string; n: number }>();
        for (const c of await inventoryOnce()) {
          const key = `${c.kind} ${c.state}`;
          const entry = counts.get(key) ?? { kind: c.kind, state: c.state, n: 0 };
          entry.n++;
          counts.set(key, entry);
        }
        for (const { kind, state, n } of counts.values()) this.set({ kind, state }, n);
      },
    });
    // the router starts after the API (sources.router is set then): read when scraped
    const router = () => sources.router;
    new Gauge({
      name: 'weft_router_connections',
      help: 'SDK and tunneler connections to the built-in edge router',
      registers,
      collect() {
        const r = router();
        if (r) this.set(r.counts().connections);
      },
    });
    new Gauge({
      name: 'weft_circuits_open',
      help: 'Circuits open on the built-in edge router',
      registers,
      collect() {
        const r = router();
        if (r) this.set(r.counts().open);
      },
    });
    new Counter({
      name: 'weft_circuits_total',
      help: 'Circuits made by the built-in edge router since it started',
      registers,
      collect() {
        const r = router();
        this.reset();
        if (r) this.inc(r.counts().circuits);
      },
    });
    new Counter({
      name: 'weft_circuit_bytes_total',
      help: 'Bytes relayed by the built-in edge router: from dialers to hosts (in) and back (out)',
      labelNames: ['direction'],
      registers,
      collect() {
        const r = router();
        this.reset();
        if (!r) return;
        const t = r.counts();
        this.inc({ direction: 'in' }, t.bytesIn);
        this.inc({ direction: 'out' }, t.bytesOut);
      },
    });
    const ctrl = sources.ctrl;
    if (ctrl) {
      new Gauge({
        name: 'weft_ctrl_routers_connected',
        help: 'Stock OpenZiti routers connected to the control channel',
        registers,
        collect() {
          this.set(ctrl.connectedRouters().length);
        },
      });
    }
    const loggers = sources.eventLoggers ?? [];
    new Counter({
      name: 'weft_events_dropped_total',
      help: 'Events an event logger could not write (a full disk, a broken pipe), by logger',
      labelNames: ['logger'],
      registers,
      collect() {
        this.reset();
        for (const l of loggers) this.inc({ logger: l.name }, l.follower.dropped);
      },
    });
  }

  /** Times one request from its arrival to its end (or its connection's end, status `aborted`). */
  observe(req: IncomingMessage, res: ServerResponse, group: HttpGroup): void {
    const t0 = performance.now();
    res.once('close', () => {
      const status = res.writableFinished ? res.statusCode : 0;
      const method = req.method ?? '';
      const t = this.totals;
      t.requests++;
      if (status >= 500) t.serverErrors++;
      if (method === 'GET') {
        if (servedFromCache(res)) t.cacheHits++;
        else t.cacheMisses++;
      }
      this.http.observe(
        `${group.api} ${group.group} ${method} ${status}`,
        () => ({ api: group.api, group: group.group, method, status: status ? String(status) : 'aborted' }),
        (performance.now() - t0) / 1000,
      );
    });
  }

  /** The Prometheus text exposition: Weft's metrics, then the process's. */
  async text(): Promise<string> {
    return (await this.registry.metrics()) + (await processMetrics().metrics());
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Totals for the console's charts. */
  runningTotals(): MetricTotals {
    const auth = metersOf(this.sources.core).authentications;
    let loginsOk = 0;
    let loginsFailed = 0;
    for (const [key, n] of auth) {
      if (key.endsWith('|success')) loginsOk += n;
      else loginsFailed += n;
    }
    const traffic = this.sources.router?.counts();
    return {
      requests: this.totals.requests,
      serverErrors: this.totals.serverErrors,
      loginsOk,
      loginsFailed,
      circuitsOpen: traffic?.open ?? 0,
      bytes: traffic ? traffic.bytesIn + traffic.bytesOut : 0,
    };
  }

  /** Stops observing the store. */
  close(): void {
    this.sources.core.store.observeTransactions = undefined;
  }
}
