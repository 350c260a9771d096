import type { Server as NetServer } from 'node:net';
import type { Server } from 'node:tls';
import type { Logger } from 'pino';
import {
  circuitEventsOf,
  type CircuitReport,
  addRouterTerminator,
  authorizeChannel,
  channelStillValid,
  clearRouterTerminators,
  DataPlaneRefusal,
  missingRows,
  newId,
  recordBuiltinRouterStopped,
  removeRouterTerminator,
  routerHostedServices,
  routerIsOnline,
  routerState,
  setBuiltinRouterState,
  tlsUrl,
  updateRouterTerminator,
  watchDataPlane,
  type ChannelCaller,
  type Core,
  type LiveDataPlane,
  type LiveStatus,
  type RouterTerminator,
} from '../core/dataPlane/index';
import { SerialQueue } from '../core/serialQueue';
import { channelTlsServer, forwardingListener, listenOn, replaceCertificate, tlsAddress } from '../listen';
import { WEFT_VERSION } from '../version';
import { Circuit, type CircuitDial, type DialerEnd } from './circuit';
import { EdgeConnection } from './edgeConnection';
import { LinkCircuits } from './link/linkCircuits';
import { LinkDialer } from './link/linkDialer';
import { LinkListener } from './link/linkListener';
import type { LinkHost } from './link/linkSession';
import { terminatorRank, type ConnectionRouter, type LocalTerminator, type SdkTerminator } from './types';

/** How soon a hosting sync that failed is tried again. */
const HOSTING_RETRY_MS = 1_000;

export interface EdgeRouterOptions {
  core: Core;
  id: string;
  name: string;
  /** where the TLS listener binds; port 0 = any free port; a default address falls back to a free port when taken */
  listen: { host: string; port: number; isDefault: boolean };
  /** the host SDKs are told to connect to (the port is the listener's unless given) */
  advertise: { host: string; port?: number };
  tls: { keyPem: string; certChainPem: string };
  /**
   * how often every connection's API session is checked (one that ended closes the connection), and the idle time
   * after which TCP keepalive probes a silent peer (a vanished one is dropped by the operating system)
   */
  heartbeatMs: number;
  /** where stock routers dial to link with this one (none: the router is not part of their mesh) */
  linkListener?: { listen: { host: string; port: number }; advertiseHost: string };
  /** the router's enrolled client certificate and key as they are now: without a link listener it dials stock routers' */
  clientTls?: () => { keyPem: string; certChainPem: string };
  log: Logger;
}

export type RouterStatus = LiveStatus;

export interface RouterCounts {
  connections: number;
  open: number;
  circuits: number;
  bytesIn: number;
  bytesOut: number;
}

/**
 * Weft's built-in edge router: OpenZiti's edge protocol for SDKs and tunnelers on a TLS listener. It asks the core
 * (in process) whether a connection, dial or bind is allowed, reports its terminators through the core, and reacts
 * to the core's changes (ended sessions, deleted terminators, a disabled router) after they commit.
 */
export class EdgeRouter implements LiveDataPlane, ConnectionRouter {
  readonly core: Core;
  readonly id: string;
  readonly log: Logger;
  /** the router's name when it started */
  readonly name: string;
  readonly versionHeader = `${WEFT_VERSION}|weft|unknown|${process.platform}|${process.arch}`;
  url = '';
  /** the port the listener is bound to */
  port = 0;
  private server!: Server;
  /** circuits over links from stock routers, and the listener they dial (router.link_listener) */
  readonly links: LinkCircuits;
  private linkListener?: LinkListener;
  /** dials stock routers' link listeners when the router has none of its own (they dial it otherwise) */
  readonly linkDialer?: LinkDialer;
  /** tls:host:port stock routers are told to link to (empty without a link listener) */
  linkAddress = '';
  private readonly conns = new Set<EdgeConnection>();
  private readonly terminators = new Map<string, LocalTerminator>();
  /** the terminators of each service (a dial looks at its service's only: a router may hold tens of thousands) */
  private readonly byService = new Map<string, Set<LocalTerminator>>();
  /** ids of the SDK terminators bound with each listener id: a re-Bind finds those it replaces without a scan */
  private readonly byListener = new Map<string, Set<string>>();
  private readonly circuits = new Map<string, Circuit>();
  /** circuits made, and bytes of those that closed (counts()) */
  private readonly closedTraffic = { circuits: 0, bytesIn: 0, bytesOut: 0 };
  private accepting = true;
  private unwatch?: () => void;
  private sweeper?: NodeJS.Timeout;
  private hostingSync?: Promise<void>;
  private hostingDirty = false;
  private hostingRetry?: NodeJS.Timeout;
  /** close() has begun: nothing is scheduled any more */
  private stopped = false;
  /** the router's reactions to changes of its row, one after another (see routerChanged) */
  private readonly routerChanges = new SerialQueue();
  /** whether a sweep is still under way (the next one waits for the interval after it) */
  private sweeping = false;
  /** sessions and API sessions that ended, noted for the dials, binds and hellos being authorized (see noteEnded) */
  private readonly endedNotes = new Set<Set<string>>();

  constructor(private readonly opts: EdgeRouterOptions) {
    this.core = opts.core;
    this.id = opts.id;
    this.name = opts.name;
    this.log = opts.log;
    this.links = new LinkCircuits(this, opts.log);
    const clientTls = opts.clientTls;
    if (!opts.linkListener && clientTls)
      this.linkDialer = new LinkDialer({
        ...this.linkHost(),
        credentials: () => ({ ...clientTls(), caPem: this.core.pki.caBundlePem }),
      });
  }

  /** What the router's link ends (accepted or dialed) call. */
  private linkHost(): LinkHost {
    const links = this.links;
    return {
      core: this.core,
      routerId: this.id,
      log: this.log,
      linked: (link) => links.linked(link),
      xgress: (link, msg) => links.xgress(link, msg),
      unlinked: (link) => links.unlinked(link),
    };
  }

  /** The router's renewed certificate for new connections (certificateRenewal.ts); open connections keep theirs. */
  replaceCertificate(tls: { keyPem: string; certChainPem: string }): void {
    replaceCertificate(this.server, tls);
    this.linkListener?.replaceCertificate(tls);
  }

  async start(): Promise<void> {
    await clearRouterTerminators(this.core, this.id);
    this.server = channelTlsServer({
      tls: this.opts.tls,
      label: 'edge router',
      log: this.log,
      accepting: () => this.accepting,
      onSocket: (socket) => this.conns.add(new EdgeConnection(this, socket)),
    });
    const { host, port: wanted, isDefault } = this.opts.listen;
    const bound = await listenOn(
      this.server,
      host,
      wanted,
      isDefault
        ? {
            onFallback: () =>
              this.log.warn({ listener: `tls:${host}:${wanted}` }, 'edge router: the default listener address is in use; taking a free port'),
          }
        : undefined,
    );
    this.port = bound;
    const port = this.opts.advertise.port ?? bound;
    this.url = tlsUrl(this.opts.advertise.host, port);
    this.unwatch = watchDataPlane(this.core, {
      sessionsEnded: (ids) => this.inBackground('session clean-up', this.sessionsEnded(new Set(ids))),
      apiSessionsEnded: (ids) => {
        const gone = new Set(ids);
        this.noteEndedIds(gone);
        for (const c of this.conns) if (c.caller && gone.has(c.caller.apiSessionId)) c.channel.close(new Error('API session ended'));
      },
      terminatorsDeleted: (ids) => {
        // a terminator being made may be deleted before the router holds it: its maker finds it noted
        this.noteEndedIds(new Set(ids));
        this.inBackground('terminator clean-up', this.removeTerminators(ids, true));
      },
      routersChanged: (ids) => {
        if (ids.includes(this.id)) this.inBackground('router update', this.routerChanged());
      },
      hostingMayHaveChanged: () => this.syncHosting(),
      changesMissed: () => this.inBackground('resync', this.resync()),
    });
    await this.routerChanged();
    if (this.opts.linkListener) await this.listenForLinks(this.opts.linkListener);
    this.sweeper = setInterval(() => this.inBackground('connection sweep', this.sweep()), Math.max(1, this.opts.heartbeatMs));
    this.sweeper.unref();
  }

  private async listenForLinks(config: NonNullable<EdgeRouterOptions['linkListener']>): Promise<void> {
    this.linkListener = new LinkListener(this.linkHost(), this.opts.tls);
    const port = await this.linkListener.listen(config.listen.host, config.listen.port);
    this.linkAddress = tlsAddress(config.advertiseHost, port);
    this.log.info({ listener: this.linkAddress }, 'edge router: link listener up');
  }

  /** the host the listener is bound to */
  get listenHost(): string {
    return this.opts.listen.host;
  }

  /** A listener at `host` (the router's port) whose connections the router takes as its own (ops: networkAddress). */
  listenAlsoOn(host: string): Promise<NetServer> {
    return forwardingListener(this.server, host, this.port);
  }

  /** SDKs are told to connect to `host` from now on (sessions' router URLs); the row is the core's to update. */
  advertiseHost(host: string): void {
    this.opts.advertise = { ...this.opts.advertise, host };
    this.url = tlsUrl(host, this.opts.advertise.port ?? this.port);
  }

  /** Another connection may not take this one's place: the hello's token and certificate are checked by the core. */
  async authorizeHello(token: string, certDer: Buffer | undefined): Promise<ChannelCaller> {
    if (!this.accepting) throw new DataPlaneRefusal('the router is disabled');
    return authorizeChannel(this.core, token, certDer);
  }

  /** Runs what an event, a timer or the store's change listener started; its failure is logged. */
  private inBackground(what: string, work: Promise<void>): void {
    void work.catch((err) => this.log.error({ err }, `edge router: ${what} failed`));
  }

  /**
   * Runs `fn` (the authorization of a hello, dial or bind) and returns the ids of the sessions and API sessions that
   * ended while it ran: their clean-up found nothing of what `fn` led to yet.
   */
  async noteEnded<T>(fn: () => Promise<T>): Promise<{ result: T; ended: Set<string> }> {
    const ended = new Set<string>();
    this.endedNotes.add(ended);
    try {
      return { result: await fn(), ended };
    } finally {
      this.endedNotes.delete(ended);
    }
  }

  private noteEndedIds(ids: Set<string>): void {
    for (const note of this.endedNotes) for (const id of ids) note.add(id);
  }

  /**
   * Enabled and present: accept and be online; disabled or deleted: drop everyone and be offline. A deleted router
   * stays so while Weft runs (its listener refuses every connection and no session offers it); at the next start
   * provisionBuiltinRouter enrolls a new one (a new id) under the configured name. Changes are handled one after another.
   */
  private routerChanged(): Promise<void> {
    return this.routerChanges.run(() => this.applyRouterState());
  }

  private async applyRouterState(): Promise<void> {
    const state = await routerState(this.core, this.id);
    const enabled = state === 'enabled';
    if (enabled && (!this.accepting || !(await routerIsOnline(this.core, this.id)))) {
      this.accepting = true;
      const port = Number(this.url.split(':').pop());
      await setBuiltinRouterState(this.core, this.id, { online: true, host: this.opts.advertise.host, port });
      this.log.info({ url: this.url }, 'edge router online');
    } else if (!enabled && this.accepting) {
      this.accepting = false;
      // recorded before the connections go: a client that sees its connection closed finds the router offline
      try {
        await this.removeTerminators([...this.terminators.keys()], false);
        if (state === 'disabled') await setBuiltinRouterState(this.core, this.id, { online: false });
      } finally {
        for (const c of [...this.conns]) c.channel.close(new Error(`router ${state}`));
      }
      this.log.info(`edge router ${state}: offline`);
    }
    this.syncHosting();
  }

  // ---- terminators ------------------------------------------------------------------------------------------

  terminator(id: string): LocalTerminator | undefined {
    return this.terminators.get(id);
  }

  async addSdkTerminator(t: Omit<SdkTerminator, 'id'>, hostIdentityId: string): Promise<string> {
    // a re-Bind of the same listener (e.g. after a reconnect) replaces its old terminator
    if (t.listenerId) {
      const replaced: string[] = [];
      for (const oldId of [...(this.byListener.get(t.listenerId) ?? [])]) {
        const old = this.terminators.get(oldId);
        if (
          old?.kind === 'sdk' &&
          old.listenerId === t.listenerId &&
          old.serviceId === t.serviceId &&
          old.conn.caller?.identityId === hostIdentityId
        ) {
          old.conn.binds.delete(old.bindConnId);
          replaced.push(old.id);
        }
      }
      await this.removeTerminators(replaced, false);
    }
    const id = await addRouterTerminator(this.core, {
      serviceId: t.serviceId,
      routerId: this.id,
      binding: 'edge',
      address: newId(),
      identity: t.identity,
      cost: t.cost,
      precedence: t.precedence,
      hostId: hostIdentityId,
    });
    this.hold({ ...t, id });
    if (t.listenerId) {
      const ids = this.byListener.get(t.listenerId) ?? new Set<string>();
      this.byListener.set(t.listenerId, ids.add(id));
    }
    return id;
  }

  /** A terminator this router holds from now on. */
  private hold(t: LocalTerminator): void {
    this.terminators.set(t.id, t);
    const ofService = this.byService.get(t.serviceId) ?? new Set<LocalTerminator>();
    this.byService.set(t.serviceId, ofService.add(t));
  }

  async updateTerminator(id: string, change: { cost?: number; precedence?: RouterTerminator['precedence'] }): Promise<void> {
    const t = this.terminators.get(id);
    if (!t) return;
    if (change.cost !== undefined) t.cost = change.cost;
    if (change.precedence !== undefined) t.precedence = change.precedence;
    await updateRouterTerminator(this.core, id, change);
  }

  /**
   * Forgets a terminator and deletes its row. `external`: it was deleted elsewhere (by an admin, with its service),
   * so its SDK is told (it binds again if it may).
   */
  removeTerminator(id: string, external: boolean): Promise<void> {
    return this.removeTerminators([id], external);
  }

  /** removeTerminator for several: all are forgotten at once (no dial picks one of them meanwhile), then their rows go in order. */
  async removeTerminators(ids: readonly string[], external: boolean): Promise<void> {
    const forgotten: string[] = [];
    for (const id of ids) {
      const t = this.terminators.get(id);
      if (!t) continue;
      this.terminators.delete(id);
      const ofService = this.byService.get(t.serviceId);
      ofService?.delete(t);
      if (!ofService?.size) this.byService.delete(t.serviceId);
      if (t.kind === 'sdk' && t.listenerId) {
        const ids = this.byListener.get(t.listenerId);
        ids?.delete(id);
        if (!ids?.size) this.byListener.delete(t.listenerId);
      }
      if (t.kind === 'sdk' && external) t.conn.dropBind(t.bindConnId, 'terminator removed');
      forgotten.push(id);
    }
    if (!external) for (const id of forgotten) await removeRouterTerminator(this.core, id);
  }

  /** The best live terminator of a service for an instance id: required before default before failed, then cheapest. */
  pickTerminator(serviceId: string, instance: string): LocalTerminator | undefined {
    let best: LocalTerminator | undefined;
    let bestScore = Infinity;
    for (const t of this.byService.get(serviceId) ?? []) {
      if (t.identity !== instance) continue;
      if (t.kind === 'sdk' && t.conn.channel.closed) continue;
      const score = terminatorRank(t) * 1e6 + t.cost + Math.random();
      if (score < bestScore) {
        best = t;
        bestScore = score;
      }
    }
    return best;
  }

  /** Keeps the router-hosted terminators in step with the host.v1 services its identity may Bind. */
  private syncHosting(): void {
    this.hostingDirty = true;
    if (this.hostingSync) return;
    this.hostingSync = Promise.resolve()
      .then(async () => {
        while (this.hostingDirty) {
          this.hostingDirty = false;
          await this.reconcileHosting();
        }
        this.hostingSync = undefined;
      })
      .catch((err) => {
        this.hostingSync = undefined;
        this.log.error({ err }, 'edge router: hosting sync failed');
        // what was asked for is not done: tried again a little later (not at once: the store may be away)
        if (!this.hostingRetry && !this.stopped) {
          this.hostingRetry = setTimeout(() => {
            this.hostingRetry = undefined;
            this.syncHosting();
          }, HOSTING_RETRY_MS);
          this.hostingRetry.unref();
        }
      });
  }

  private async reconcileHosting(): Promise<void> {
    const wanted = this.accepting ? await routerHostedServices(this.core, this.id) : [];
    const byService = new Map(wanted.map((s) => [s.serviceId, s]));
    const outdated: string[] = [];
    for (const t of [...this.terminators.values()]) {
      if (t.kind !== 'host') continue;
      const w = byService.get(t.serviceId);
      if (!w || JSON.stringify(w.host) !== JSON.stringify(t.host)) outdated.push(t.id);
      else byService.delete(t.serviceId);
    }
    await this.removeTerminators(outdated, false);
    for (const s of byService.values()) {
      const listen = s.host.listenOptions ?? {};
      const precedence = (['default', 'required', 'failed'] as const).find((p) => p === listen.precedence) ?? 'default';
      const cost = Number.isInteger(listen.cost) ? listen.cost! : 0;
      const identity = listen.identity ?? '';
      const address = s.host.forwardAddress || s.host.forwardPort ? 'tcp:forwarded' : `tcp:${s.host.address}:${s.host.port}`;
      const { result: id, ended } = await this.noteEnded(() =>
        addRouterTerminator(this.core, {
          serviceId: s.serviceId,
          routerId: this.id,
          binding: 'tunnel',
          address,
          identity,
          cost,
          precedence,
          hostId: this.id,
        }),
      );
      // deleted by someone else before it was held: made again at the next sync
      if (ended.has(id)) this.hostingDirty = true;
      else this.hold({ kind: 'host', id, serviceId: s.serviceId, host: s.host, identity, cost, precedence, healthy: true });
    }
  }

  // ---- circuits --------------------------------------------------------------------------------------------

  newCircuit(info: CircuitDial, dialer: DialerEnd, id = newId()): Circuit {
    const c = new Circuit(id, info, dialer, (done) => {
      this.circuits.delete(done.id);
      this.closedTraffic.bytesIn += done.bytesIn;
      this.closedTraffic.bytesOut += done.bytesOut;
      // a circuit over a link is the controller's to report
      if (done.openedAt !== undefined && done.dialer.kind === 'sdk' && done.host?.kind !== 'link')
        this.reportCircuit('deleted', done.id, done.info, Date.now() - done.openedAt);
    });
    this.circuits.set(c.id, c);
    this.closedTraffic.circuits++;
    return c;
  }

  /** Ends one of the router's circuits (the fabric API's delete); false when it has none by that id. */
  closeCircuit(id: string): boolean {
    const c = this.circuits.get(id);
    if (!c) return false;
    c.close('the circuit was deleted');
    return true;
  }

  /** A circuit event (created, deleted, failed) for the event loggers (written in the background). */
  reportCircuit(eventType: CircuitReport['eventType'], circuitId: string, info: CircuitDial, elapsedMs: number, failureCause?: string): void {
    circuitEventsOf(this.core).report({
      eventType,
      circuitId,
      sessionId: info.sessionId,
      serviceId: info.serviceId,
      terminatorId: info.terminatorId,
      instanceId: info.instanceId,
      routerId: this.id,
      clientIdentityId: info.callerId,
      hostId: info.hostId,
      elapsedMs,
      cost: eventType === 'deleted' ? undefined : info.cost,
      failureCause,
    });
  }

  /** Connections and open circuits now; circuits made and bytes relayed since the router started (metrics). */
  counts(): RouterCounts {
    let { bytesIn, bytesOut } = this.closedTraffic;
    for (const c of this.circuits.values()) {
      bytesIn += c.bytesIn;
      bytesOut += c.bytesOut;
    }
    return { connections: this.conns.size, open: this.circuits.size, circuits: this.closedTraffic.circuits, bytesIn, bytesOut };
  }

  private async sessionsEnded(ids: Set<string>): Promise<void> {
    this.noteEndedIds(ids);
    for (const c of [...this.circuits.values()]) if (ids.has(c.info.sessionId)) c.close('the session ended');
    const ended = [...this.terminators.values()].filter((t) => t.kind === 'sdk' && ids.has(t.sessionId));
    // the rows go before the SDK hears of it: a bind it makes again finds the old terminator gone
    try {
      await this.removeTerminators(
        ended.map((t) => t.id),
        false,
      );
    } finally {
      for (const t of ended) if (t.kind === 'sdk') t.conn.dropBind(t.bindConnId, 'the session ended');
    }
  }

  connectionClosed(conn: EdgeConnection): void {
    this.conns.delete(conn);
  }

  /** The idle time after which TCP keepalive probes a connection. */
  get keepAliveMs(): number {
    return this.opts.heartbeatMs;
  }

  /**
   * Every heartbeat interval: connections whose API session ended (expired, or missed while the change feed was
   * down) are closed. Nothing is sent to the others. A sweep still under way (a slow store) is not overtaken.
   */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      await this.liveConnections();
    } finally {
      this.sweeping = false;
    }
  }

  /** The accepted connections whose API session is still valid; the others are closed. */
  private async liveConnections(): Promise<EdgeConnection[]> {
    const live: EdgeConnection[] = [];
    for (const c of [...this.conns]) {
      if (!c.caller || c.channel.closed) continue;
      if (await channelStillValid(this.core, c.caller)) live.push(c);
      else c.channel.close(new Error('API session ended'));
    }
    return live;
  }

  /**
   * Changes may have gone untold (on PostgreSQL, other nodes' changes while the change feed was down): what the
   * router holds is checked against the store — ended sessions and API sessions, deleted terminators, its own row
   * and what it hosts — as if each change had been told.
   */
  private async resync(): Promise<void> {
    const sessions = new Set<string>();
    for (const c of this.circuits.values()) sessions.add(c.info.sessionId);
    for (const t of this.terminators.values()) if (t.kind === 'sdk') sessions.add(t.sessionId);
    const ended = await missingRows(this.core, 'sessions', [...sessions]);
    if (ended.size) await this.sessionsEnded(ended);
    await this.removeTerminators([...(await missingRows(this.core, 'terminators', [...this.terminators.keys()]))], true);
    await this.liveConnections();
    await this.routerChanged();
  }

  status(): RouterStatus {
    return {
      id: this.id,
      url: this.url,
      online: this.accepting,
      connections: this.conns.size,
      terminators: [...this.terminators.values()].map((t) => ({
        id: t.id,
        serviceId: t.serviceId,
        kind: t.kind,
        identity: t.identity,
        cost: t.cost,
        precedence: t.precedence,
        ...(t.kind === 'sdk' ? { caller: t.conn.caller?.identityName } : {}),
      })),
      circuits: [...this.circuits.values()].map((c) => c.describe()),
    };
  }

  /** Closes every circuit and connection, removes the router's terminators and marks it offline. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.stopped = true;
    clearTimeout(this.hostingRetry);
    this.unwatch?.();
    // a change of the router's row under way finishes first (it could otherwise mark the router online again)
    await this.routerChanges.settled();
    this.accepting = false;
    this.links.close();
    this.linkDialer?.close();
    await this.linkListener?.close();
    for (const c of [...this.circuits.values()]) c.close('the router is stopping');
    // end() flushes what is queued (the StateClosed just sent) before the connection goes; peers that do not
    // close their side in time are cut off
    const conns = [...this.conns];
    await Promise.all(
      conns.map(
        (c) =>
          new Promise<void>((resolve) => {
            // gone already (its clean-up may still be queued behind the frames it sent): nothing to wait for
            if (c.socket.destroyed) return resolve();
            const cut = setTimeout(() => c.channel.close(), 2000);
            c.socket.once('close', () => (clearTimeout(cut), resolve()));
            c.socket.end();
          }),
      ),
    );
    // what the connections were handling, their clean-up included, is done before the store is told the router stopped
    await Promise.all(conns.map((c) => c.settled()));
    await this.hostingSync;
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    try {
      await recordBuiltinRouterStopped(this.core, this.id);
    } catch (err) {
      // the store may be gone already (closed, or unavailable); the next start clears both anyway
      this.log.warn({ err }, 'edge router: could not record that it stopped');
    }
  }
}
