// The router's parts as each sees the others, so that imports run one way: channel/ ← circuit.ts ← types.ts ←
// edgeConnection.ts ← edgeRouter.ts. A connection knows its router as a ConnectionRouter (the EdgeRouter implements
// it); the router, and a connection dialing another's terminator, know a binding connection as a BindingConnection
// (the EdgeConnection implements it); a circuit knows its connections as CircuitConnections (circuit.ts).
import type { Logger } from 'pino';
import { PRECEDENCE_RANK, type ChannelCaller, type Core, type HostV1, type RouterTerminator } from '../core/dataPlane/index';
import type { Circuit, CircuitConnection, CircuitDial, DialerEnd } from './circuit';
import type { LinkCircuits } from './link/linkCircuits';

/** A terminator bound by an SDK on one of the router's connections. */
export interface SdkTerminator {
  kind: 'sdk';
  id: string;
  serviceId: string;
  sessionId: string;
  conn: BindingConnection;
  bindConnId: number;
  /** the Bind's body, sent back byte for byte in every Dial */
  token: Buffer;
  publicKey?: Buffer;
  listenerId?: string;
  identity: string;
  cost: number;
  precedence: RouterTerminator['precedence'];
  healthy: boolean;
}

/** A service the router hosts itself (host.v1 on a tunneler-enabled router): it dials the configured address. */
export interface HostTerminator {
  kind: 'host';
  id: string;
  serviceId: string;
  host: HostV1;
  identity: string;
  cost: number;
  precedence: RouterTerminator['precedence'];
  healthy: boolean;
}

export type LocalTerminator = SdkTerminator | HostTerminator;

/** Where a terminator stands in the choice: its precedence's rank (required 0, default 1, failed 2; failed when unhealthy). */
export const terminatorRank = (t: LocalTerminator): number => (t.healthy ? PRECEDENCE_RANK[t.precedence] : PRECEDENCE_RANK.failed);

/** What the router and other connections use of a connection that binds services (an EdgeConnection). */
export interface BindingConnection extends CircuitConnection {
  /** who is connected, once the hello has been accepted */
  readonly caller?: ChannelCaller;
  /** bind conn id -> terminator id */
  readonly binds: Map<number, string>;
  /** ends what depends on a terminator of this connection without touching the terminator itself */
  dropBind(connId: number, reason: string): void;
  /** an incoming dial: a conn id of this connection, unused, becomes the host side of `circuit` */
  acceptCircuit(circuit: Circuit): number;
}

/** What a connection asks of its router (the EdgeRouter). */
export interface ConnectionRouter {
  readonly core: Core;
  readonly id: string;
  readonly log: Logger;
  /** the hello's version header */
  readonly versionHeader: string;
  /** the idle time after which TCP keepalive probes a connection */
  readonly keepAliveMs: number;
  authorizeHello(token: string, certDer: Buffer | undefined): Promise<ChannelCaller>;
  /** runs an authorization; returns with it the ids of the sessions, API sessions and terminators that ended meanwhile */
  noteEnded<T>(fn: () => Promise<T>): Promise<{ result: T; ended: Set<string> }>;
  terminator(id: string): LocalTerminator | undefined;
  pickTerminator(serviceId: string, instance: string): LocalTerminator | undefined;
  addSdkTerminator(t: Omit<SdkTerminator, 'id'>, hostIdentityId: string): Promise<string>;
  updateTerminator(id: string, change: { cost?: number; precedence?: RouterTerminator['precedence'] }): Promise<void>;
  removeTerminator(id: string, external: boolean): Promise<void>;
  removeTerminators(ids: readonly string[], external: boolean): Promise<void>;
  newCircuit(info: CircuitDial, dialer: DialerEnd, id?: string): Circuit;
  /** circuits over links with stock routers (dials here for terminators elsewhere among them) */
  readonly links: LinkCircuits;
  /** a circuit event for the event loggers (created, deleted, failed) */
  reportCircuit(eventType: 'created' | 'deleted' | 'failed', circuitId: string, info: CircuitDial, elapsedMs: number, failureCause?: string): void;
  /** the connection is gone (its clean-up under way) */
  connectionClosed(conn: BindingConnection): void;
}
