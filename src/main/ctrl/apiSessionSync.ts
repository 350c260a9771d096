// Legacy API sessions for stock routers (OpenZiti's "instant" sync strategy, sync_strats/sync_instant.go): an SDK
// that logged in with POST /authenticate connects to a router with an opaque token, which the router looks up in what
// the controller told it (OIDC logins hand it JWTs it verifies with the data model's keys). After a router's
// ClientHello it gets every legacy session as ApiSessionAdded chunks of 100 marked as one full-state sync (the router
// then drops the sessions it held that are not among them); afterwards each new session as ApiSessionAdded, each new
// session certificate as ApiSessionUpdated, each ended session as ApiSessionRemoved (the router closes its SDKs'
// connections). A router's RequestClientReSync, missed store changes or a failed send bring a full sync again. The
// router's heartbeats keep its SDKs' sessions active; those that no longer exist are named back as removed.
import { apiSessionsOfCertificates, heartbeatApiSessions, routerApiSessions, type Core } from '../core/dataPlane/index';
import { message, str } from '../router/channel/wire';
import { apiSessionAdded, apiSessionRemoved, apiSessionUpdated, CtrlMsgHeader, EdgeCtrl, parseApiSessionHeartbeat } from './edgeMessages';
import type { RouterControlChannel } from './routerChannel';

const CHUNK = 100;
const STRATEGY = 'instant';
const RETRY_MS = 1_000;
const RETRY_MAX_MS = 30_000;

export class ApiSessionSync {
  /** routers that had their full sync (or have it queued) */
  private readonly synced = new Set<RouterControlChannel>();
  /** id -> token of the sessions routers were told of (a deletion names only the id) */
  private readonly told = new Map<string, string>();
  /** syncs and changes, one at a time in the order they happened: a session added after a full sync's read follows it */
  private queue: Promise<void> = Promise.resolve();
  private unwatch?: () => void;
  private retry?: NodeJS.Timeout;
  private retryMs = RETRY_MS;
  private sequence = 0;

  constructor(
    private readonly core: () => Core,
    private readonly onError: (err: unknown, what: string) => void,
  ) {}

  stop(): void {
    this.unwatch?.();
    this.unwatch = undefined;
    clearTimeout(this.retry);
    this.synced.clear();
  }

  /** After the router's ClientHello: its full sync. */
  connected(ch: RouterControlChannel): void {
    this.watch();
    this.synced.add(ch);
    this.run(() => this.fullSync([ch]));
  }

  /** RequestClientReSync: the router lost track (a sync it could not complete). */
  resync(ch: RouterControlChannel): void {
    if (this.synced.has(ch)) this.run(() => this.fullSync([ch]));
  }

  closed(ch: RouterControlChannel): void {
    this.synced.delete(ch);
  }

  async heartbeat(ch: RouterControlChannel, body: Buffer): Promise<void> {
    const gone = await heartbeatApiSessions(this.core(), parseApiSessionHeartbeat(body));
    if (gone.length && !ch.channel.closed) ch.channel.send(message(EdgeCtrl.ApiSessionRemoved, [], apiSessionRemoved(gone, [])));
  }

  /** The store's changes, watched once a router needs them. */
  private watch(): void {
    if (this.unwatch) return;
    const store = this.core().store;
    const off = [
      store.watch('api_sessions', 'insert', (ids) => this.run(() => this.added(ids))),
      store.watch('api_sessions', 'delete', (ids) => this.run(async () => this.removed(ids))),
      store.watch('api_session_certificates', 'insert', (ids) => this.run(() => this.updated(ids))),
      store.watchGaps(() => this.run(() => this.fullSync([...this.synced]))),
    ];
    this.unwatch = () => off.forEach((f) => f());
  }

  private run(work: () => Promise<void>): void {
    this.queue = this.queue.then(work).catch((err) => {
      // the database may be away: every router gets a full sync once it is back
      this.onError(err, 'API session sync');
      this.resyncLater();
    });
  }

  private resyncLater(): void {
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.run(() => this.fullSync([...this.synced]));
    }, this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  /** Every legacy session to `routers`, as one sync (an id later than any before it: the router starts over with it). */
  private async fullSync(routers: RouterControlChannel[]): Promise<void> {
    if (routers.length === 0) return;
    const sessions = await routerApiSessions(this.core());
    this.told.clear();
    for (const s of sessions) this.told.set(s.id, s.token);
    this.retryMs = RETRY_MS;
    const syncId = this.syncId();
    const chunks = Math.max(1, Math.ceil(sessions.length / CHUNK));
    for (let i = 0; i < chunks; i++) {
      const state = JSON.stringify({ id: syncId, isLast: i === chunks - 1, sequence: i });
      this.send(routers, EdgeCtrl.ApiSessionAdded, apiSessionAdded(sessions.slice(i * CHUNK, (i + 1) * CHUNK), true), this.headers(state));
    }
  }

  private async added(ids: string[]): Promise<void> {
    if (this.synced.size === 0) return;
    const sessions = await routerApiSessions(this.core(), ids);
    if (sessions.length === 0) return;
    for (const s of sessions) this.told.set(s.id, s.token);
    const state = JSON.stringify({ id: this.syncId(), isLast: true, sequence: 0 });
    this.send([...this.synced], EdgeCtrl.ApiSessionAdded, apiSessionAdded(sessions, false), this.headers(state));
  }

  /** New session certificates: their sessions' fingerprints again. */
  private async updated(certificateIds: string[]): Promise<void> {
    if (this.synced.size === 0) return;
    const sessions = await routerApiSessions(this.core(), await apiSessionsOfCertificates(this.core(), certificateIds));
    if (sessions.length === 0) return;
    this.send([...this.synced], EdgeCtrl.ApiSessionUpdated, apiSessionUpdated(sessions), [[CtrlMsgHeader.SyncStrategyType, str(STRATEGY)]]);
  }

  private removed(ids: string[]): void {
    const gone = ids.filter((id) => this.told.has(id));
    if (gone.length === 0) return;
    const tokens = gone.map((id) => this.told.get(id)!);
    for (const id of gone) this.told.delete(id);
    this.send([...this.synced], EdgeCtrl.ApiSessionRemoved, apiSessionRemoved(tokens, gone));
  }

  private headers(state: string): Array<[number, Buffer]> {
    return [
      [CtrlMsgHeader.SyncStrategyType, str(STRATEGY)],
      [CtrlMsgHeader.SyncStrategyState, str(state)],
    ];
  }

  private send(routers: RouterControlChannel[], type: number, body: Buffer, headers: Array<[number, Buffer]> = []): void {
    for (const ch of routers) if (!ch.channel.closed) ch.channel.send(message(type, headers, body));
  }

  /** Sync ids only grow (the router compares them as strings): the time, then a counter. */
  private syncId(): string {
    return `${Date.now().toString(36).padStart(10, '0')}${(this.sequence++ % 1e9).toString(36).padStart(6, '0')}`;
  }
}
