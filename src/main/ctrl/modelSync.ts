// Edge sync with stock routers (OpenZiti's "instant" strategy with the router data model, capability bit 4): after
// the hello the controller sends ServerHello and records the router's edge listeners from the ClientHello it gets
// back; the router subscribes to the data model and is sent all of it as one DataState. After every committed change
// that alters the model (coalesced: one build at a time, the last change always followed by a build) each router gets
// a DataState.ChangeSet with what changed and the next index, as OpenZiti's RouterSender does; a router that renews
// its subscription gets the change sets it missed while they are kept, the whole model otherwise.
import { randomUUID } from 'node:crypto';
import { recordRouterListeners, routerModel, ROUTER_MODEL_TABLES, type Core } from '../core/dataPlane/index';
import { bool, message } from '../router/channel/wire';
import {
  changeSetEvents,
  CtrlMsgHeader,
  dataState,
  dataStateChangeSet,
  dataStateEvents,
  EdgeCtrl,
  modelEntries,
  parseClientHello,
  serverHello,
  type ModelEntries,
  type Subscription,
} from './edgeMessages';
import type { RouterControlChannel } from './routerChannel';

/** How long a router may take to answer the ServerHello with its ClientHello. */
const CLIENT_HELLO_TIMEOUT_MS = 10_000;
/** The change sets kept for routers that renew their subscription behind (beyond them: the whole model). */
const KEPT_CHANGE_SETS = 256;
const KEPT_BYTES = 16 * 1024 * 1024;

export class RouterModelSync {
  /** this controller's timeline: a router subscribing with another one (an earlier run's) gets the full model */
  readonly timelineId = randomUUID();
  private index = 0n;
  private entries?: ModelEntries;
  /** the DataState at `index`, encoded when a router needs the whole model */
  private full?: Buffer;
  private readonly kept: Array<{ index: bigint; body: Buffer }> = [];
  private keptBytes = 0;
  /** each subscribed router and the index it holds of this timeline (-1: none) */
  private readonly held = new Map<RouterControlChannel, bigint>();
  private building?: Promise<void>;
  private stale = true;
  private pushing = false;
  private unwatch?: () => void;

  constructor(
    private readonly core: () => Core,
    private readonly version: string,
    private readonly onError: (err: unknown, what: string) => void,
  ) {}

  start(): void {
    const store = this.core().store;
    const off = [store.watchTables(ROUTER_MODEL_TABLES, () => this.changed()), store.watchGaps(() => this.changed())];
    this.unwatch = () => off.forEach((f) => f());
  }

  stop(): void {
    this.unwatch?.();
    this.held.clear();
  }

  /** After the hello: ServerHello, then the router's listeners from its ClientHello (what SDKs are offered). */
  async hello(ch: RouterControlChannel): Promise<void> {
    const reply = await ch.channel.request(
      message(EdgeCtrl.ServerHello, [[CtrlMsgHeader.RouterDataModel, bool(true)]], serverHello(this.version)),
      CLIENT_HELLO_TIMEOUT_MS,
    );
    if (reply.contentType !== EdgeCtrl.ClientHello) throw new Error(`expected a client hello, got message type ${reply.contentType}`);
    const { hostname, protocols } = parseClientHello(reply.body);
    await recordRouterListeners(this.core(), ch.router!.id, hostname, protocols);
  }

  /**
   * A SubscribeToDataModelRequest: the router is brought from the index it names (of this timeline) to the current
   * one; a renewal keeps what it has been sent, as OpenZiti's RouterSender does.
   */
  async subscribe(ch: RouterControlChannel, sub: Subscription): Promise<void> {
    if (!(sub.renew && this.held.has(ch))) this.held.set(ch, sub.timelineId === this.timelineId ? sub.currentIndex : -1n);
    while (this.stale || !this.entries) await this.build();
    this.catchUp(ch);
  }

  closed(ch: RouterControlChannel): void {
    this.held.delete(ch);
  }

  /** The change sets after what the router holds when they are all kept, the whole model otherwise. */
  private catchUp(ch: RouterControlChannel): void {
    const holds = this.held.get(ch);
    if (holds === undefined || holds === this.index || ch.channel.closed) return;
    const first = this.kept[0]?.index;
    if (holds >= 0n && holds < this.index && first !== undefined && first <= holds + 1n) {
      for (const c of this.kept) if (c.index > holds) ch.channel.send(message(EdgeCtrl.DataStateChangeSet, [], c.body));
    } else {
      this.full ??= dataState(dataStateEvents(this.entries!), this.index, this.timelineId);
      ch.channel.send(message(EdgeCtrl.DataState, [], this.full));
    }
    this.held.set(ch, this.index);
  }

  private build(): Promise<void> {
    this.building ??= (async () => {
      this.stale = false;
      try {
        const next = modelEntries(await routerModel(this.core()));
        // a write that changed nothing the routers hold (a login's sdkInfo, a policy's tags) sends nothing
        const events = this.entries && changeSetEvents(this.entries, next);
        if (this.entries && !events) return;
        this.index++;
        this.entries = next;
        this.full = undefined;
        if (events) this.keep(dataStateChangeSet(this.index, events));
      } catch (err) {
        this.stale = true;
        throw err;
      } finally {
        this.building = undefined;
      }
    })();
    return this.building;
  }

  private keep(body: Buffer): void {
    this.kept.push({ index: this.index, body });
    this.keptBytes += body.length;
    while (this.kept.length > KEPT_CHANGE_SETS || this.keptBytes > KEPT_BYTES) this.keptBytes -= this.kept.shift()!.body.length;
  }

  /** A committed change: every subscribed router is brought to the new index (the last change is always followed by a send). */
  private changed(): void {
    this.stale = true;
    if (this.held.size === 0 || this.pushing) return;
    this.pushing = true;
    void (async () => {
      try {
        while (this.stale) {
          await this.build();
          for (const ch of this.held.keys()) this.catchUp(ch);
        }
      } catch (err) {
        // the database may be away: the next committed change (or the router's renewal) sends what changed
        this.onError(err, 'router data model');
      } finally {
        this.pushing = false;
      }
    })();
  }
}
