// Edge sync with stock routers (OpenZiti's "instant" strategy with the router data model, capability bit 4): after
// the hello the controller sends ServerHello and records the router's edge listeners from the ClientHello it gets
// back; the router subscribes to the data model and is sent all of it as one DataState. Weft sends the whole model
// again after every committed change that alters it (coalesced: one build at a time, the last change always
// followed by a build), with a higher index each time: the router replaces its model, and the controller checks
// every terminator and circuit again anyway.
import { createHash, randomUUID } from 'node:crypto';
import { recordRouterListeners, routerModel, ROUTER_MODEL_TABLES, type Core } from '../core/dataPlane/index';
import { bool, message } from '../router/channel/wire';
import { CtrlMsgHeader, dataState, dataStateEvents, EdgeCtrl, parseClientHello, serverHello, type Subscription } from './edgeMessages';
import type { RouterControlChannel } from './routerChannel';

/** How long a router may take to answer the ServerHello with its ClientHello. */
const CLIENT_HELLO_TIMEOUT_MS = 10_000;

export class RouterModelSync {
  /** this controller's timeline: a router subscribing with another one (an earlier run's) gets the full model */
  readonly timelineId = randomUUID();
  private index = 0n;
  private current?: { index: bigint; body: Buffer };
  private readonly subscribed = new Set<RouterControlChannel>();
  private building?: Promise<void>;
  private stale = true;
  /** the model's digest (without its index): an unchanged model is not sent again */
  private digest = '';
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
    this.subscribed.clear();
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

  /** A SubscribeToDataModelRequest: the whole model, unless the router holds this timeline's current one already. */
  async subscribe(ch: RouterControlChannel, sub: Subscription): Promise<void> {
    this.subscribed.add(ch);
    const state = await this.state();
    if (sub.renew && sub.timelineId === this.timelineId && sub.currentIndex === state.index) return;
    ch.channel.send(message(EdgeCtrl.DataState, [], state.body));
  }

  closed(ch: RouterControlChannel): void {
    this.subscribed.delete(ch);
  }

  /** The encoded model, built again when something changed since. */
  private async state(): Promise<{ index: bigint; body: Buffer }> {
    while (this.stale || !this.current) await this.build();
    return this.current;
  }

  private build(): Promise<void> {
    this.building ??= (async () => {
      this.stale = false;
      try {
        const events = dataStateEvents(await routerModel(this.core()));
        // a write that changed nothing the routers hold (a login's sdkInfo, a policy's tags) sends nothing
        const digest = createHash('sha256').update(events).digest('hex');
        if (this.current && digest === this.digest) return;
        this.digest = digest;
        this.index++;
        this.current = { index: this.index, body: dataState(events, this.index, this.timelineId) };
      } catch (err) {
        this.stale = true;
        throw err;
      } finally {
        this.building = undefined;
      }
    })();
    return this.building;
  }

  /** A committed change: every subscribed router gets the new model (the last change is always followed by a send). */
  private changed(): void {
    this.stale = true;
    if (this.subscribed.size === 0 || this.pushing) return;
    this.pushing = true;
    void (async () => {
      try {
        while (this.stale) {
          const before = this.current?.index;
          const state = await this.state();
          if (state.index === before) continue;
          for (const ch of this.subscribed) if (!ch.channel.closed) ch.channel.send(message(EdgeCtrl.DataState, [], state.body));
        }
      } catch (err) {
        // the database may be away: the next committed change (or the router's renewal) sends the model again
        this.onError(err, 'router data model');
      } finally {
        this.pushing = false;
      }
    })();
  }
}
