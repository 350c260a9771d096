import { perCore, type Core, type Ctx } from '../core';
import { requirePermission } from '../permissions';
import { allRows, json, rowShape, type Decoded } from '../store/rows';
import { controllerId } from './controllerNodes';
import { camelCase } from '../entities/define';

/**
 * Events as OpenZiti's controller writes them (controller/event in openziti/ziti v1.7.2: the same namespaces, field
 * names and field order), read from the outbox: a change that rolled back has no event, a committed one always has
 * its event. On PostgreSQL the outbox is the database's, so every node reads every node's events, each once.
 *
 * Sources: the write gate's change events (entityChange, for every resource type), the outbox triggers of migration
 * 015 (apiSession, session, terminator, router: written with the row, whoever writes it) and `event:<namespace>` rows
 * written whole by their engine (authentication: auth/authEvents.ts).
 */
export type ZitiEvent = { namespace: string } & Record<string, unknown>;

/** The event types Weft emits (OpenZiti's subscription names). */
export const EMITTED_TYPES = ['entityChange', 'apiSession', 'session', 'circuit', 'router', 'terminator', 'authentication'] as const;
export type EventType = (typeof EMITTED_TYPES)[number];
/** Types OpenZiti's controller also knows, which Weft does not emit (a subscription to one is accepted with a warning). */
export const SILENT_TYPES = ['alert', 'cluster', 'connect', 'entityCount', 'link', 'metrics', 'service', 'sdk', 'usage'] as const;
/** OpenZiti's names from before 1.4 for the types Weft emits: such a subscription's events carry the old name as namespace. */
export const LEGACY_TYPES: Readonly<Record<string, EventType>> = {
  'edge.apiSessions': 'apiSession',
  'edge.sessions': 'session',
  'fabric.circuits': 'circuit',
  'fabric.routers': 'router',
  'fabric.terminators': 'terminator',
  'edge.authentications': 'authentication',
};

/** One event of the feed: its outbox position (a live stream resumes after it) and the event. */
export interface FeedItem {
  seq: number;
  event: ZitiEvent;
}

const OUTBOX = rowShape({
  seq: 'int',
  entity: 'string',
  op: 'string',
  entity_id: 'string',
  before_row: json<Record<string, unknown>>('?'),
  after_row: json<Record<string, unknown>>('?'),
  node: 'string?',
  author: json<Record<string, unknown>>('?'),
  created_at: 'string',
});
type OutboxRow = Decoded<typeof OUTBOX>;

/** Rows read at a time. */
const BATCH = 500;

/**
 * Go's time.Time JSON (RFC 3339 with nanoseconds, trailing zeros of the fraction dropped) of an ISO time:
 * 2026-01-02T03:04:05.120Z → 2026-01-02T03:04:05.12Z.
 */
export const goTime = (iso: string): string => iso.replace(/\.(\d*?)0*Z$/, (_m, digits: string) => (digits ? `.${digits}Z` : 'Z'));

/** OpenZiti's entity type names (its stores' names; edge and transit routers are both `routers`). */
export function entityTypeOf(entity: string): string {
  if (entity === 'edge-routers' || entity === 'transit-routers') return 'routers';
  return camelCase(entity);
}

/** The outbox's ops (the write gate's and the triggers') as OpenZiti's event types. */
const CHANGE_TYPES: Record<string, string> = { create: 'created', update: 'updated', patch: 'updated', delete: 'deleted' };

/** A trigger row's columns as the API names them (snake_case to camelCase; tags parsed). */
function apiState(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [column, v] of Object.entries(row)) {
    out[camelCase(column)] = column === 'tags' && typeof v === 'string' ? JSON.parse(v) : v;
  }
  return out;
}

/** Outbox rows as events (a row may make none, or two: a change and its commit). */
async function toEvents(core: Core, rows: OutboxRow[]): Promise<FeedItem[]> {
  const self = await controllerId(core);
  const terminatorCounts = new Map<string, Promise<TerminatorCounts>>();
  const out: FeedItem[] = [];
  for (const r of rows) {
    const head = { event_src_id: r.node ?? self, timestamp: goTime(r.created_at) };
    const state = r.after_row ?? r.before_row ?? {};
    const push = (event: ZitiEvent) => out.push({ seq: r.seq, event });
    /** an entityChange event and its commit (one per change: the outbox position is its id) */
    const change = (eventType: string, entityType: string, initialState: unknown, finalState: unknown, metadata?: object) => {
      const eventId = String(r.seq);
      push({
        namespace: 'entityChange',
        ...head,
        eventId,
        eventType,
        ...(metadata && { metadata }),
        entityType,
        isParentEvent: false,
        initialState,
        finalState,
      });
      push({ namespace: 'entityChange', ...head, eventId, eventType: 'committed' });
    };
    if (r.entity.startsWith('event:')) {
      push({ namespace: r.entity.slice(6), ...head, ...state });
    } else if (!r.entity.startsWith('row:')) {
      change(CHANGE_TYPES[r.op] ?? r.op, entityTypeOf(r.entity), r.before_row, r.after_row, { author: r.author ?? { type: 'controller' } });
    } else if (r.entity === 'row:api_sessions') {
      const jwt = state.kind === 'oidc';
      push({
        namespace: 'apiSession',
        ...head,
        event_type: CHANGE_TYPES[r.op],
        id: state.id,
        type: jwt ? 'jwt' : 'legacy',
        token: jwt ? '' : state.token,
        identity_id: state.identity_id,
        ip_address: state.ip_address,
      });
    }
    if (r.entity === 'row:sessions' || r.entity === 'row:terminators') {
      // their entityChange events come from the trigger rows (the write gate leaves these tables to them)
      change(CHANGE_TYPES[r.op]!, r.entity.slice(4), r.before_row && apiState(r.before_row), r.after_row && apiState(r.after_row));
    }
    if (r.entity === 'row:sessions') {
      push({
        namespace: 'session',
        ...head,
        event_type: CHANGE_TYPES[r.op],
        session_type: state.type,
        provider: 'legacy',
        id: state.id,
        token: state.token,
        api_session_id: state.api_session_id,
        identity_id: state.identity_id,
        service_id: state.service_id,
      });
    } else if (r.entity === 'row:terminators') {
      const service = String(state.service_id);
      if (!terminatorCounts.has(service)) terminatorCounts.set(service, countTerminators(core, service));
      const counts = await terminatorCounts.get(service)!;
      push({
        namespace: 'terminator',
        ...head,
        event_type: CHANGE_TYPES[r.op],
        service_id: service,
        terminator_id: state.id,
        router_id: state.router_id,
        host_id: '',
        instance_id: state.identity,
        router_online: counts.onlineRouters.has(String(state.router_id)),
        precedence: state.precedence,
        static_cost: state.cost,
        dynamic_cost: 0,
        total_terminators: counts.total,
        usable_default_terminators: counts.usableDefault,
        usable_required_terminators: counts.usableRequired,
      });
    } else if (r.entity === 'row:edge_routers') {
      const online = r.op === 'online';
      push({
        namespace: 'router',
        timestamp: head.timestamp,
        event_src_id: head.event_src_id,
        event_type: online ? 'router-online' : 'router-offline',
        router_id: r.entity_id,
        router_online: online,
      });
    }
  }
  return out;
}

interface TerminatorCounts {
  total: number;
  usableDefault: number;
  usableRequired: number;
  onlineRouters: Set<string>;
}

/** A service's terminators now (as OpenZiti counts them when it sends the event). */
async function countTerminators(core: Core, serviceId: string): Promise<TerminatorCounts> {
  const rows = await allRows(
    core.store,
    TERMINATOR_STATE,
    `SELECT t.router_id, t.precedence, coalesce(r.is_online, 0) AS online FROM terminators t
     LEFT JOIN edge_routers r ON r.id = t.router_id WHERE t.service_id = ?`,
    serviceId,
  );
  const usable = rows.filter((t) => t.online);
  return {
    total: rows.length,
    usableDefault: usable.filter((t) => t.precedence === 'default').length,
    usableRequired: usable.filter((t) => t.precedence === 'required').length,
    onlineRouters: new Set(usable.map((t) => t.router_id)),
  };
}
const TERMINATOR_STATE = rowShape({ router_id: 'string', precedence: 'string', online: 'bool' });

/** How a reader of the feed takes its events: in order, one batch at a time; a throw drops the batch (counted). */
export type Deliver = (items: FeedItem[]) => Promise<void>;

export interface FollowOptions {
  /** a durable reader: its position is kept per node under this name, and a restart goes on from there */
  name?: string;
  /** start after this outbox position (a live stream resuming); default: the position kept under `name`, else now */
  after?: number;
  /** a batch it could not take (a full disk, a closed stream) */
  onDropped?: (count: number, error: unknown) => void;
}

/** A reader of the feed; `close` stops it (a batch in delivery finishes). */
export interface Follower {
  readonly position: number;
  readonly dropped: number;
  close(): void;
  /** resolves once every event committed before the call has been delivered (or dropped) */
  caughtUp(): Promise<void>;
}

/** The change feed of a core: readers follow the outbox, each at its own pace (a slow one holds back no write). */
export class EventFeed {
  constructor(private readonly core: Core) {}

  /** Where the outbox ends now. */
  async head(): Promise<number> {
    return (await this.core.store.getSql<{ n: number | null }>('SELECT max(seq) AS n FROM outbox'))?.n ?? 0;
  }

  async follow(opts: FollowOptions, deliver: Deliver): Promise<Follower> {
    const core = this.core;
    const head = () => this.head();
    const store = core.store;
    const node = await controllerId(core);
    const end = await this.head();
    // a position past the end (a database restored from before) reads from the end
    let position = Math.min(opts.after ?? (opts.name ? await savedPosition(core, node, opts.name) : undefined) ?? end, end);
    let dropped = 0;
    let closed = false;
    let running: Promise<void> | undefined;
    let again = false;
    const drop = (count: number, error: unknown) => {
      dropped += count;
      opts.onDropped?.(count, error);
    };
    const drain = async () => {
      for (;;) {
        if (closed || !store.open) return;
        const rows = await allRows(store, OUTBOX, 'SELECT * FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?', position, BATCH);
        if (!rows.length) return;
        // rows pruned before this reader took them (it was stopped, or slower than the retention) are lost to it
        if (opts.name && rows[0]!.seq > position + 1 && position > 0) {
          const first = rows[0]!.seq;
          drop(first - position - 1, new Error('events were pruned from the outbox before they were written'));
        }
        const items = await toEvents(core, rows);
        try {
          if (items.length) await deliver(items);
        } catch (err) {
          drop(items.length, err);
        }
        position = rows.at(-1)!.seq;
        if (opts.name) {
          await store.touchSql(
            `INSERT INTO event_cursors (node, logger, seq, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (node, logger) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at`,
            node,
            opts.name,
            position,
            core.clock.now().toISOString(),
          );
        }
        if (rows.length < BATCH) return;
      }
    };
    // one drain at a time; a change that comes meanwhile makes it run once more
    const pump = (): Promise<void> => {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        do {
          again = false;
          try {
            await drain();
          } catch (err) {
            // the database went away: the next change (or the gap report when it is back) reads on
            if (!closed && store.open) core.log.warn({ err }, 'the event feed could not read the outbox; it reads on at the next change');
          }
        } while (again && !closed);
        running = undefined;
      })();
      return running;
    };
    const unwatch = store.watchTables(['outbox'], () => void pump());
    const unwatchGaps = store.watchGaps(() => void pump());
    void pump();
    return {
      get position() {
        return position;
      },
      get dropped() {
        return dropped;
      },
      close() {
        closed = true;
        unwatch();
        unwatchGaps();
      },
      async caughtUp() {
        const end = await head();
        for (let before = -1; !closed && position < end && position !== before;) {
          before = position;
          await pump();
        }
      },
    };
  }
}

async function savedPosition(core: Core, node: string, name: string): Promise<number | undefined> {
  return (await core.store.getSql<{ seq: number }>('SELECT seq FROM event_cursors WHERE node = ? AND logger = ?', node, name))?.seq;
}

export const eventFeedOf = perCore((core) => new EventFeed(core));

/**
 * A live stream of every event for a caller who may read operations data (the console's live tail): from now, or
 * after `after` (a stream resuming where it broke off, while the outbox still holds the events).
 */
export async function followEvents(ctx: Ctx, after: number | undefined, deliver: Deliver): Promise<Follower> {
  requirePermission(ctx.caller, 'ops', 'read');
  return eventFeedOf(ctx.core).follow({ after }, deliver);
}
