import { perCore, type Core } from '../core';
import { recordEvents, type EventRow } from '../eventRows';

/** OpenZiti's circuit event (controller/event/circuits.go, version 2), as a router of this node reports it. */
export interface CircuitReport {
  eventType: 'created' | 'deleted' | 'failed';
  circuitId: string;
  /** the Dial session (OpenZiti's client id for SDK circuits) */
  sessionId: string;
  serviceId: string;
  terminatorId: string;
  /** the terminator's instance id ('' for none) */
  instanceId: string;
  routerId: string;
  /** across routers: the routers from ingress to egress and the links between them (else the one router) */
  path?: { routers: string[]; links: string[]; ingressId: string; egressId: string };
  /** the dialing identity and the hosting one (tags clientId and hostId) */
  clientIdentityId: string;
  hostId: string;
  /** created/failed: time from the dial to its answer; deleted: the circuit's lifetime */
  elapsedMs: number;
  /** created/failed: the terminator's cost */
  cost?: number;
  /** failed: OpenZiti's failure cause (NO_TERMINATORS, ROUTER_ERR_CONN_REFUSED, …) */
  failureCause?: string;
}

/** Circuit reports waiting to be written at most; beyond it new ones are dropped (counted and logged). */
export const MAX_PENDING = 10_000;

const NS = (ms: number) => Math.round(ms * 1e6);

/** The event's fields in OpenZiti's order (durations in nanoseconds; nil slices as null). */
export function circuitEventFields(r: CircuitReport): Record<string, unknown> {
  const created = r.eventType === 'created';
  return {
    version: 2,
    event_type: r.eventType,
    circuit_id: r.circuitId,
    client_id: r.sessionId,
    service_id: r.serviceId,
    terminator_id: r.terminatorId,
    instance_id: r.instanceId,
    ...(r.eventType !== 'deleted' && { creation_timespan: NS(r.elapsedMs) }),
    path: r.path
      ? { nodes: r.path.routers, links: r.path.links.length ? r.path.links : null, ingress_id: r.path.ingressId, egress_id: r.path.egressId }
      : { nodes: [r.routerId], links: null, ingress_id: '', egress_id: '' },
    link_count: r.path?.links.length ?? 0,
    ...(r.cost !== undefined && (created || r.eventType === 'failed') && { path_cost: r.cost }),
    ...(r.failureCause && { failure_cause: r.failureCause }),
    ...(r.eventType === 'deleted' && { duration: NS(r.elapsedMs) }),
    tags: { clientId: r.clientIdentityId, hostId: r.hostId, serviceId: r.serviceId },
  };
}

/**
 * Circuit events go to the outbox like every event (each node's loggers read every node's), but a circuit is no
 * database change and a dial must not wait for a write: reports are queued and written in batches, one statement
 * per batch, by one writer at a time. A batch the database refuses (it is down) is dropped, counted and logged; so
 * is a report that finds MAX_PENDING waiting. `idle()` resolves once everything queued has been written.
 */
export class CircuitEventLog {
  private pending: EventRow[] = [];
  private writing: Promise<void> | undefined;
  dropped = 0;

  constructor(private readonly core: Core) {}

  report(r: CircuitReport): void {
    if (this.pending.length >= MAX_PENDING) {
      this.drop(1);
      return;
    }
    this.pending.push({ namespace: 'circuit', op: r.eventType, entityId: r.circuitId, fields: circuitEventFields(r), at: this.core.clock.now() });
    this.writing ??= this.drain();
  }

  async idle(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    // the reports of the current turn of the event loop go together
    await new Promise<void>((r) => setImmediate(r));
    while (this.pending.length) {
      const batch = this.pending.splice(0, 500);
      try {
        await recordEvents(this.core, batch);
      } catch (err) {
        this.drop(batch.length, err);
      }
    }
    this.writing = undefined;
  }

  private drop(n: number, err?: unknown): void {
    this.dropped += n;
    this.core.log.warn({ err, count: n, droppedTotal: this.dropped }, 'circuit events dropped: they could not be written to the outbox');
  }
}

export const circuitEventsOf = perCore((core) => new CircuitEventLog(core));
