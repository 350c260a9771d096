import type { Logger } from 'pino';
import { bootstrap, type AdminCredentials, type BootstrapResult } from './bootstrap';
import type { Core, Ctx } from './core';
import { SVC_PROXY_CONFIG_TYPE_ID } from './entities/builtinConfigTypes';
import { configs } from './entities/configs';
import type { WriteSubscriber } from './entities/writeGate';
import { enrollmentOnWrite } from './enrollment/onWrite';
import { validateShareConfig } from './shares/config';
import { outboxOnWrite, pruneOutbox } from './ops/outbox';
import { markRoutersOffline } from './dataPlane/builtinRouter';
import { circuitEventsOf } from './dataPlane/circuitEvents';
import { pruneAuditLog } from './ops/audit';
import { classifyAllUnclassified } from './policy/classes';
import { policyIndexOnWrite } from './policy/onWrite';
import { controllerHeartbeat, controllerStopped, HEARTBEAT_MS, registerController, type ControllerNode } from './ops/controllerNodes';
import { apiSessionsOf } from './auth/apiSessions';
import { sweepOidc } from './auth/oidc';
import { sealMfaSecrets } from './auth/mfa';
import { snapshotsOf } from './ops/snapshot';
import { integrityOf } from './ops/integrity';
import { policyTestsOf } from './policy/policyTests';

/** What the core's start-up work needs from the composition root (app.ts). */
export interface StartSettings {
  admin: AdminCredentials;
  /** this controller's row in /controllers: its name and the API addresses SDKs are given */
  controller: ControllerNode;
  audit: { retentionMs: number; maxEntries: number };
}

export interface StartResult {
  bootstrap?: BootstrapResult;
}

/**
 * A part of the core with work to do when Weft starts, while it runs, or when it stops. Its tables are its
 * migrations (store/migrations), its resource types are in the registry (registry.ts).
 */
export interface CoreModule {
  name: string;
  /** run in list order, before any listener serves requests */
  start?(core: Core, settings: StartSettings, result: StartResult): void | Promise<void>;
  /** periodic work while Weft runs (also once at start with `atStart`); a failing run is logged, not fatal */
  every?: { ms: number; atStart?: boolean; run(core: Core, settings: StartSettings): void | Promise<void> };
  /** run in reverse list order when Weft stops */
  stop?(core: Core): void | Promise<void>;
  /** what it does with every write of a resource, inside the write's transaction (the write gate) */
  onWrite?: WriteSubscriber<Ctx>;
}

const pruneAudit = async (core: Core, s: StartSettings) => void (await pruneAuditLog(core, s.audit));

/**
 * A public share's config (svc.proxy.v1) is checked as a share with the write that gives it data (shares/config.ts):
 * a token no other share uses, a target that fits the backend mode, OAuth options the running frontend offers.
 */
const shareConfigOnWrite: WriteSubscriber<Ctx> = async ({ ctx, def, id, input, after }) => {
  if (def.entity !== configs.entity || input?.data == null || after?.config_type_id !== SVC_PROXY_CONFIG_TYPE_ID) return;
  await validateShareConfig(ctx, input.data as Record<string, unknown>, id);
};

/** Every module of the core, in start order. */
export const CORE_MODULES: readonly CoreModule[] = [
  // the secret key (<data dir>/secrets.key): created at the first start, refused when others may read it; MFA
  // secrets still stored in clear are sealed with it. Integrity runs and snapshots stop with it.
  {
    name: 'security',
    start: async (core) => void (await sealMfaSecrets(core)),
    stop: async (core) => {
      integrityOf(core).close();
      await snapshotsOf(core).idle();
    },
  },
  // the default admin, auth policy, identity and posture check types, built-in config types
  { name: 'bootstrap', start: async (core, s, out) => void (out.bootstrap = await bootstrap(core, s.admin)) },
  // a share's config is checked before anything else happens with its write
  { name: 'shares', onWrite: shareConfigOnWrite },
  // role attributes and classes follow every write; entities written before the policy index existed (or around it)
  // get their role classes at start
  { name: 'policy index', start: (core) => classifyAllUnclassified(core.store), onWrite: policyIndexOnWrite },
  // this node in /controllers; online while its heartbeat runs (nodes sharing a PostgreSQL database see each other)
  {
    name: 'controllers',
    start: (core, s) => registerController(core, s.controller),
    every: { ms: HEARTBEAT_MS, run: (core) => controllerHeartbeat(core) },
    stop: async (core) => {
      try {
        await controllerStopped(core);
      } catch {
        // the database is gone: the others will see the heartbeat stop
      }
    },
  },
  // a crash leaves routers marked online: none is until it connects
  { name: 'routers', start: (core) => markRoutersOffline(core) },
  { name: 'api sessions', every: { ms: 60_000, run: (core) => apiSessionsOf(core).sweep() } },
  // OIDC authorization requests that were abandoned or whose code was used (kept until they expire: replays are seen)
  { name: 'oidc', every: { ms: 60_000, run: (core) => sweepOidc(core) } },
  // a request's audit entry is written with its first write (its own onWrite, see ops/audit.ts); entries are pruned
  { name: 'audit log', every: { ms: 10 * 60_000, atStart: true, run: pruneAudit } },
  // every write is also a change event, in the outbox (ops/outbox.ts); kept for a while, then pruned
  // circuit events are written in the background: the last ones before the store closes
  {
    name: 'outbox',
    onWrite: outboxOnWrite,
    every: { ms: 60_000, atStart: true, run: (core) => pruneOutbox(core) },
    stop: (core) => circuitEventsOf(core).idle(),
  },
  // identities created with enrollments get them, created routers their enrollment JWT (enrollment/onWrite.ts); after
  // the outbox, so a create's own change event comes before those of the enrollments it makes
  { name: 'enrollment', onWrite: enrollmentOnWrite },
  // saved policy tests run at start and again after every committed change that can affect access (policy/policyTests.ts)
  { name: 'policy tests', start: (core) => policyTestsOf(core).start(), stop: (core) => policyTestsOf(core).stop() },
];

/** The write gate's subscribers, in module order (Core takes them when it is built). */
export function writeSubscribers(modules = CORE_MODULES): Array<WriteSubscriber<Ctx>> {
  return modules.flatMap((m) => (m.onWrite ? [m.onWrite] : []));
}

/** Runs every module's start-up work, then its periodic work; `stop` ends both. */
export async function startCore(core: Core, settings: StartSettings, log: Logger, modules = CORE_MODULES) {
  const result: StartResult = {};
  const started: CoreModule[] = [];
  const timers: NodeJS.Timeout[] = [];
  /** periodic runs at work: stop waits for them */
  const busy = new Set<Promise<void>>();
  const stop = async () => {
    for (const t of timers) clearInterval(t);
    await Promise.all(busy);
    for (const m of started.reverse()) await m.stop?.(core);
  };
  try {
    for (const m of modules) {
      started.push(m);
      await m.start?.(core, settings, result);
    }
  } catch (e) {
    await stop();
    throw e;
  }
  for (const m of modules) {
    if (!m.every) continue;
    const { ms, atStart, run } = m.every;
    // one run at a time: a tick that comes while the last run is still at work is skipped
    let running: Promise<void> | undefined;
    const guarded = async () => {
      if (running) return;
      const work = (running = (async () => {
        try {
          await run(core, settings);
        } catch (err) {
          log.warn({ err, module: m.name }, 'periodic work failed');
        }
      })());
      busy.add(work);
      try {
        await work;
      } finally {
        busy.delete(work);
        running = undefined;
      }
    };
    if (atStart) await guarded();
    const timer = setInterval(() => void guarded(), ms);
    timer.unref();
    timers.push(timer);
  }
  return { result, stop };
}
