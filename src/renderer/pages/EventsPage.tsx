import { skipToken, useQueryClient } from '@tanstack/react-query';
import { useSubscription } from '@trpc/tanstack-react-query';
import { Fragment, useCallback, useEffect, useId, useRef, useState } from 'react';
import { ErrorBox, Notice, Page } from '../components/Status';
import { isUnauthorized } from '../lib/errors';
import type { RouterInputs } from '../lib/types';
import { useTRPC } from '../trpc';

type Namespace = NonNullable<Exclude<RouterInputs['events']['tail'], void | undefined>['types']>[number];

/** The namespaces the controller emits (a Record: a new one on the server fails the type check until it is here). */
const NAMESPACES: Record<Namespace, string> = {
  entityChange: 'Entity changes',
  apiSession: 'API sessions',
  session: 'Sessions',
  circuit: 'Circuits',
  router: 'Routers',
  terminator: 'Terminators',
  authentication: 'Authentications',
};
const ALL = Object.keys(NAMESPACES) as Namespace[];

/** Events kept in memory (the newest), shown or waiting. */
const KEEP = 500;
/** New events are rendered at most this often (a burst is one render, not hundreds). */
const FLUSH_MS = 100;

type ZitiEvent = { namespace: string } & Record<string, unknown>;

interface Row {
  key: string;
  seq: string;
  event: ZitiEvent;
  /** the event as JSON, lower-cased: what the text filter searches */
  text: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
const stateOf = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});

/** eventType (entityChange) or event_type (the others). */
const typeOf = (e: ZitiEvent): string => str(e.eventType ?? e.event_type);

/** A line about what the event is about: the entity (type, name, id) or the ids the event names. */
function summary(e: ZitiEvent): string {
  const parts = (pairs: Array<[string, unknown]>) =>
    pairs
      .filter(([, v]) => str(v))
      .map(([k, v]) => `${k} ${str(v)}`)
      .join(' · ');
  switch (e.namespace) {
    case 'entityChange': {
      if (e.eventType === 'committed') return parts([['change', e.eventId]]);
      const state = { ...stateOf(e.initialState), ...stateOf(e.finalState) };
      const name = str(state.name);
      return `${str(e.entityType)} ${name ? `${name} ` : ''}(${str(state.id)})`;
    }
    case 'apiSession':
      return parts([
        ['API session', e.id],
        ['identity', e.identity_id],
        ['from', e.ip_address],
      ]);
    case 'session':
      return parts([
        [`${str(e.session_type)} session`.trim(), e.id],
        ['service', e.service_id],
        ['identity', e.identity_id],
      ]);
    case 'circuit': {
      const tags = stateOf(e.tags);
      return parts([
        ['circuit', e.circuit_id],
        ['service', e.service_id],
        ['client', tags.clientId],
        ['host', tags.hostId],
        ['cause', e.failure_cause],
      ]);
    }
    case 'terminator':
      return parts([
        ['terminator', e.terminator_id],
        ['service', e.service_id],
        ['router', e.router_id],
      ]);
    case 'router':
      return parts([['router', e.router_id]]);
    case 'authentication':
      return [
        str(e.type),
        parts([
          ['identity', e.identity_id],
          ['from', e.remote_address],
          ['reason', e.reason],
        ]),
      ]
        .filter(Boolean)
        .join(' · ');
    default:
      return '';
  }
}

function time(e: ZitiEvent): string {
  const d = new Date(str(e.timestamp));
  return Number.isNaN(d.getTime())
    ? str(e.timestamp)
    : d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hour12: false });
}

/**
 * The controller's events live (the OpenZiti-shaped events its event loggers write), over a subscription: newest
 * first, the last 500 kept. The namespaces go to the server; the text filter searches the events' JSON here. Paused,
 * events keep coming and wait (counted) until resumed. A dropped stream reconnects and resumes after the last event
 * received.
 */
export function EventsPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const filterId = useId();
  const [selected, setSelected] = useState<ReadonlySet<Namespace>>(() => new Set(ALL));
  const [rows, setRows] = useState<Row[]>([]);
  const [waiting, setWaiting] = useState(0);
  const [paused, setPaused] = useState(false);
  const [filter, setFilter] = useState('');
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(() => new Set());
  /** the subscription (its namespaces) that has started at least once: "reconnecting" rather than "connecting" */
  const [startedFor, setStartedFor] = useState<string | undefined>();

  // events received but not rendered yet (oldest first): until the next flush, or while paused
  const pending = useRef<Row[]>([]);
  const pendingCount = useRef(0);
  const pausedRef = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const counter = useRef(0);

  const flush = useCallback(() => {
    timer.current = undefined;
    if (pausedRef.current) {
      setWaiting(pendingCount.current);
      return;
    }
    const newest = pending.current.reverse();
    pending.current = [];
    pendingCount.current = 0;
    setWaiting(0);
    if (newest.length) setRows((prev) => [...newest, ...prev].slice(0, KEEP));
  }, []);
  useEffect(() => () => clearTimeout(timer.current), []);

  const types = ALL.filter((n) => selected.has(n));
  const subscriptionKey = types.join(',');
  // every namespace: no filter on the server; none: no subscription
  const input = types.length === ALL.length ? {} : { types };
  const sub = useSubscription(
    trpc.events.tail.subscriptionOptions(types.length ? input : skipToken, {
      onStarted: () => setStartedFor(subscriptionKey),
      // as for queries (main.tsx): the session may have expired; the sign-in page follows if so
      onError: (error) => {
        if (isUnauthorized(error)) void qc.invalidateQueries({ queryKey: [['session', 'me']] });
      },
      onData: ({ id, data }) => {
        const event = data as ZitiEvent;
        pending.current.push({ key: `${id}-${counter.current++}`, seq: id, event, text: JSON.stringify(event).toLowerCase() });
        if (pending.current.length > KEEP) pending.current.splice(0, pending.current.length - KEEP);
        pendingCount.current++;
        timer.current ??= setTimeout(flush, FLUSH_MS);
      },
    }),
  );

  // live once this subscription (these namespaces) has started; connecting again after a change of namespaces
  const started = startedFor === subscriptionKey;
  const state =
    types.length === 0
      ? { label: 'off', className: 'badge' }
      : sub.status === 'error'
        ? { label: 'stopped', className: 'badge badge-off' }
        : !started
          ? { label: 'connecting', className: 'badge' }
          : sub.status === 'pending'
            ? { label: 'live', className: 'badge badge-ok' }
            : { label: 'reconnecting', className: 'badge badge-off' };

  const toggleType = (n: Namespace, on: boolean) =>
    setSelected((prev) => {
      const next = new Set(prev);
      if (on) next.add(n);
      else next.delete(n);
      return next;
    });
  const togglePaused = () => {
    pausedRef.current = !paused;
    setPaused(!paused);
    if (paused) {
      clearTimeout(timer.current);
      flush();
    }
  };
  const clear = () => {
    pending.current = [];
    pendingCount.current = 0;
    setWaiting(0);
    setRows([]);
    setExpanded(new Set());
  };
  const toggleRow = (key: string) =>
    setExpanded((prev) => {
      const next = new Set(prev);
      if (!next.delete(key)) next.add(key);
      return next;
    });

  // the namespaces unticked go from the view at once (the stream has none of them from then on)
  const needle = filter.trim().toLowerCase();
  const shown = rows.filter((r) => selected.has(r.event.namespace as Namespace) && (!needle || r.text.includes(needle)));

  return (
    <Page
      title="Events"
      description="The controller's events as they happen (OpenZiti's event format): newest first, the last 500 kept."
      actions={
        <span className={state.className} data-testid="events-state" role="status">
          {state.label}
        </span>
      }
    >
      <fieldset>
        <legend>Namespaces</legend>
        <div className="radio-group">
          {ALL.map((n) => (
            <label key={n} className="inline" title={NAMESPACES[n]}>
              <input type="checkbox" checked={selected.has(n)} onChange={(e) => toggleType(n, e.target.checked)} />
              {n}
            </label>
          ))}
        </div>
      </fieldset>
      <div className="table-filter" role="search">
        <label htmlFor={filterId}>Filter</label>
        <input id={filterId} type="search" value={filter} placeholder="Text in the event's JSON" onChange={(e) => setFilter(e.target.value)} />
      </div>
      <div className="button-row">
        <button type="button" onClick={togglePaused} aria-pressed={paused}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <button type="button" className="secondary" onClick={clear}>
          Clear
        </button>
        {paused && (
          <span data-testid="events-waiting" role="status">
            {waiting} waiting
          </span>
        )}
        <span className="muted">
          {shown.length === rows.length ? rows.length : `${shown.length} of ${rows.length}`} event{rows.length === 1 ? '' : 's'}
        </span>
      </div>
      {types.length === 0 && <Notice kind="warning">Choose at least one namespace to see events.</Notice>}
      {sub.status === 'error' && <ErrorBox error={sub.error} retry={() => sub.reset()} title="The event stream stopped:" />}
      <div className="resource-table">
        <div className="table-scroll">
          <table aria-label="Events">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Namespace</th>
                <th scope="col">Type</th>
                <th scope="col">Entity</th>
                <th scope="col">
                  <span className="visually-hidden">Details</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.length === 0 && (
                <tr>
                  <td className="empty" colSpan={5}>
                    {rows.length ? 'No event matches the filter.' : 'No events yet: they appear here as they happen.'}
                  </td>
                </tr>
              )}
              {shown.map((r) => {
                const open = expanded.has(r.key);
                return (
                  <Fragment key={r.key}>
                    <tr data-testid="event-row" data-seq={r.seq}>
                      <td data-label="Time">
                        <time dateTime={str(r.event.timestamp)}>{time(r.event)}</time>
                      </td>
                      <td data-label="Namespace">{r.event.namespace}</td>
                      <td data-label="Type">{typeOf(r.event)}</td>
                      <td data-label="Entity">{summary(r.event)}</td>
                      <td className="row-actions">
                        <button type="button" className="link-button" aria-expanded={open} onClick={() => toggleRow(r.key)}>
                          {open ? 'Hide JSON' : 'JSON'}
                        </button>
                      </td>
                    </tr>
                    {open && (
                      <tr>
                        <td colSpan={5} data-label="JSON">
                          <pre className="code" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', margin: 0 }}>
                            {JSON.stringify(r.event, null, 2)}
                          </pre>
                        </td>
                      </tr>
                    )}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </div>
      </div>
    </Page>
  );
}
