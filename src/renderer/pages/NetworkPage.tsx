import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId, useMemo, useState, type KeyboardEvent } from 'react';
import { RefSelect } from '../components/inputs';
import { RouterMesh } from '../components/RouterMesh';
import { ErrorBox, Notice, Page, Panel, Spinner } from '../components/Status';
import { ROLE_KINDS } from '../../shared/roleKinds';
import type { RouterOutputs } from '../lib/types';
import { Link } from '../router';
import { useTRPC } from '../trpc';
import '../workflows.css';
import { formatAge, formatBytes } from '../lib/format';
import { livePolling } from '../lib/polling';

type Graph = RouterOutputs['network']['graph'];
type GraphNode = Graph['nodes'][number];
type GraphEdge = Graph['edges'][number];
type Live = RouterOutputs['network']['live'];
type Fabric = RouterOutputs['network']['fabric'];
type Kind = GraphNode['kind'];

const GRAPH_REFRESH_MS = 15_000;

const KINDS: Kind[] = ['identity', 'service', 'edge-router'];
const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const WIDTH = 1000;
const NODE_W = 250;
const NODE_H = 30;
const GAP = 8;
const TOP = 34;
const COL_X: Record<Kind, number> = { identity: 12, service: (WIDTH - NODE_W) / 2, 'edge-router': WIDTH - NODE_W - 12 };

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const curve = (x1: number, y1: number, x2: number, y2: number) => {
  const dx = (x2 - x1) / 2;
  return `M${x1},${y1} C${x1 + dx},${y1} ${x2 - dx},${y2} ${x2},${y2}`;
};

type FilterMode = 'all' | 'attribute' | 'name' | 'identity';
interface Filter {
  mode: FilterMode;
  text: string;
  identityId: string | null;
}

interface LiveOnNodes {
  /** node key -> open circuits touching it */
  circuits: Map<string, number>;
  /** service node key -> bound terminators */
  terminators: Map<string, number>;
  /** "identity>service" node keys -> bytes of the circuits between them */
  edges: Map<string, { circuits: number; bytes: number }>;
  routerOnline: Map<string, boolean>;
}

/** Where live state lands: the entity's own node when it is shown, else the group node holding its class. */
function liveOnNodes(graph: Graph | undefined, live: Live | undefined, fabric: Fabric | undefined): LiveOnNodes {
  const out: LiveOnNodes = { circuits: new Map(), terminators: new Map(), edges: new Map(), routerOnline: new Map() };
  if (!graph || !live) return out;
  const byEntity = new Map(graph.nodes.filter((n) => n.id).map((n) => [`${n.kind}:${n.id}`, n.key]));
  const byClass = new Map<string, string>();
  for (const n of graph.nodes) if (n.type === 'group' && !n.expanded) for (const c of n.classes) byClass.set(`${n.kind}:${c}`, n.key);
  const find = (kind: Kind, id: string | undefined, cls: number | undefined) =>
    (id && byEntity.get(`${kind}:${id}`)) || (cls !== undefined ? byClass.get(`${kind}:${cls}`) : undefined);
  const add = (m: Map<string, number>, k: string | undefined, n = 1) => k && m.set(k, (m.get(k) ?? 0) + n);
  for (const c of live.circuits) {
    const i = find('identity', c.identityId, c.identityClass);
    const s = find('service', c.serviceId, c.serviceClass);
    add(out.circuits, i);
    add(out.circuits, s);
    if (i && s) {
      const e = out.edges.get(`${i}>${s}`) ?? { circuits: 0, bytes: 0 };
      out.edges.set(`${i}>${s}`, { circuits: e.circuits + 1, bytes: e.bytes + (c.bytesIn ?? 0) + (c.bytesOut ?? 0) });
    }
  }
  for (const t of live.terminators) add(out.terminators, find('service', t.serviceId, t.serviceClass), t.count);
  // every router's state (the stock routers' too), the built-in router's own report last
  for (const r of fabric?.routers ?? []) {
    const k = byEntity.get(`edge-router:${r.id}`);
    if (k) out.routerOnline.set(k, r.isOnline);
  }
  if (live.router) {
    const k = byEntity.get(`edge-router:${live.router.id}`);
    if (k) out.routerOnline.set(k, live.router.isOnline);
  }
  return out;
}

function nodeLabel(n: GraphNode, live: LiveOnNodes): string {
  const parts: string[] = [];
  if (n.type === 'group') {
    parts.push(`${ROLE_KINDS[n.kind].label} group ${n.name}: ${n.count} ${ROLE_KINDS[n.kind].plural}, ${n.expanded ? 'expanded' : 'collapsed'}`);
  } else {
    parts.push(`${ROLE_KINDS[n.kind].label} ${n.name}${n.attributes.length ? ` (${n.attributes.map((a) => `#${a}`).join(' ')})` : ''}`);
  }
  const online = live.routerOnline.get(n.key) ?? (n.online === undefined ? undefined : n.type === 'group' ? n.online : n.online > 0);
  if (n.kind === 'edge-router' && online !== undefined) parts.push(n.type === 'group' ? `${online} online` : online ? 'online' : 'offline');
  const t = live.terminators.get(n.key);
  if (t) parts.push(`${t} terminator${t === 1 ? '' : 's'}`);
  const c = live.circuits.get(n.key);
  if (c) parts.push(`${c} open circuit${c === 1 ? '' : 's'}`);
  return parts.join(', ');
}

/**
 * The network as a graph: identities, services and edge routers in three columns, joined by the policies that
 * connect them; groups of the same role attributes are one node (click to expand), and the live state of the
 * router (online, bound terminators, open circuits with bytes) is drawn on top, refreshed without a reload.
 */
export function NetworkPage() {
  const trpc = useTRPC();
  const modeId = useId();
  const textId = useId();
  const identityId = useId();
  const [draft, setDraft] = useState<Filter>({ mode: 'all', text: '', identityId: null });
  const [filter, setFilter] = useState<Filter>(draft);
  const [expand, setExpand] = useState<string[]>([]);
  const [selected, setSelected] = useState<string>();
  const [showErp, setShowErp] = useState(false);
  const query = {
    ...(filter.mode === 'attribute' && filter.text.trim() ? { attribute: filter.text.trim() } : {}),
    ...(filter.mode === 'name' && filter.text.trim() ? { name: filter.text.trim() } : {}),
    ...(filter.mode === 'identity' && filter.identityId ? { identityId: filter.identityId } : {}),
    expand: [...expand].sort(),
  };
  const graph = useQuery(trpc.network.graph.queryOptions({ query }, { placeholderData: keepPreviousData, refetchInterval: GRAPH_REFRESH_MS }));
  const live = useQuery(trpc.network.live.queryOptions(undefined, livePolling));
  const fabric = useQuery(trpc.network.fabric.queryOptions(undefined, livePolling));
  const g = graph.data;
  const onNodes = useMemo(() => liveOnNodes(g, live.data, fabric.data), [g, live.data, fabric.data]);

  const layout = useMemo(() => {
    const pos = new Map<string, { x: number; y: number; w: number }>();
    let rows = 0;
    if (g) {
      for (const kind of KINDS) {
        const list = g.nodes.filter((n) => n.kind === kind);
        // members of an expanded group are indented under it
        list.forEach((n, i) => pos.set(n.key, { x: COL_X[kind] + (n.group ? 14 : 0), y: TOP + i * (NODE_H + GAP), w: NODE_W - (n.group ? 14 : 0) }));
        rows = Math.max(rows, list.length);
      }
    }
    return { pos, height: TOP + Math.max(rows, 1) * (NODE_H + GAP) + 8 };
  }, [g]);

  const nodeByKey = useMemo(() => new Map((g?.nodes ?? []).map((n) => [n.key, n])), [g]);
  /** The node itself, or (for an expanded group) one of its members. */
  const within = (nodeKey: string, key: string) => nodeKey === key || nodeByKey.get(nodeKey)?.group === key;
  const touching = (e: GraphEdge, key: string | undefined) => !!key && (within(e.from, key) || within(e.to, key));
  const neighbours = useMemo(() => {
    const out = new Set<string>();
    if (!selected || !g) return out;
    for (const e of g.edges) {
      if (within(e.from, selected)) out.add(e.to);
      else if (within(e.to, selected)) out.add(e.from);
    }
    for (const n of g.nodes) if (n.group === selected) out.add(n.key);
    return out;
  }, [g, selected, nodeByKey]);

  function toggle(n: GraphNode) {
    setSelected(n.key);
    if (n.type === 'group') setExpand((cur) => (cur.includes(n.key) ? cur.filter((k) => k !== n.key) : [...cur, n.key]));
  }
  function onKey(e: KeyboardEvent, n: GraphNode) {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      toggle(n);
    } else if (e.key === 'Escape') {
      setSelected(undefined);
    }
  }
  function apply(f: Filter) {
    setFilter(f);
    setExpand([]);
    setSelected(undefined);
  }

  const sel = selected ? nodeByKey.get(selected) : undefined;
  // the selected node's connections, one per node on the other side (an expanded group: its members' connections)
  const selEdges: GraphEdge[] = [];
  if (sel && g) {
    const byOther = new Map<string, GraphEdge>();
    for (const e of g.edges) {
      if (!touching(e, sel.key)) continue;
      const other = within(e.from, sel.key) ? e.to : e.from;
      const known = byOther.get(`${e.kind}|${other}`);
      if (!known) {
        byOther.set(`${e.kind}|${other}`, {
          ...e,
          from: within(e.from, sel.key) ? sel.key : e.from,
          to: within(e.to, sel.key) ? sel.key : e.to,
          policies: [...e.policies],
        });
        continue;
      }
      known.dial ||= e.dial;
      known.bind ||= e.bind;
      for (const p of e.policies) if (!known.policies.some((x) => x.id === p.id)) known.policies.push(p);
      known.policyCount = Math.max(known.policyCount, known.policies.length);
    }
    selEdges.push(...byOther.values());
  }
  const circuits = live.data?.circuits ?? [];

  return (
    <Page
      title="Network map"
      description="Identities, services and edge routers joined by the policies that connect them, with the routers' live state, the links between routers and the circuits open through them. Groups share role attributes: activate one to expand it."
    >
      <form
        className="network-filter"
        role="search"
        aria-label="Network map filter"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        <div className="field">
          <label htmlFor={modeId}>Show</label>
          <select id={modeId} value={draft.mode} onChange={(e) => setDraft({ ...draft, mode: e.target.value as FilterMode })}>
            <option value="all">Everything</option>
            <option value="attribute">A role attribute</option>
            <option value="name">Names containing</option>
            <option value="identity">One identity's reach</option>
          </select>
        </div>
        {(draft.mode === 'attribute' || draft.mode === 'name') && (
          <div className="field">
            <label htmlFor={textId}>{draft.mode === 'attribute' ? 'Attribute' : 'Name contains'}</label>
            <input
              id={textId}
              type="text"
              value={draft.text}
              onChange={(e) => setDraft({ ...draft, text: e.target.value })}
              placeholder={draft.mode === 'attribute' ? '#staff' : 'web'}
              autoComplete="off"
              spellCheck={false}
            />
          </div>
        )}
        {draft.mode === 'identity' && (
          <div className="field">
            <label htmlFor={identityId}>Identity</label>
            <RefSelect
              id={identityId}
              label="Identity"
              resource="identities"
              value={draft.identityId}
              onChange={(v) => setDraft({ ...draft, identityId: v })}
            />
          </div>
        )}
        <button type="submit">Apply</button>
        {filter.mode !== 'all' && (
          <button
            type="button"
            className="secondary"
            onClick={() => (setDraft({ mode: 'all', text: '', identityId: null }), apply({ mode: 'all', text: '', identityId: null }))}
          >
            Show everything
          </button>
        )}
        <label className="inline">
          <input type="checkbox" checked={showErp} onChange={(e) => setShowErp(e.target.checked)} />
          Show identity–router links (edge router policies)
        </label>
      </form>
      {graph.error && <ErrorBox error={graph.error} retry={() => graph.refetch()} />}
      {live.error && <ErrorBox error={live.error} title="Live state unavailable:" retry={() => live.refetch()} />}
      {graph.isPending && <Spinner label="Drawing the network…" />}
      {g && (
        <>
          <p className="hint" aria-live="polite" data-testid="network-summary">
            {`${KINDS.map((k) => `${g.nodes.filter((n) => n.kind === k).length} ${ROLE_KINDS[k].label} nodes (of ${g.totals[k]} ${ROLE_KINDS[k].plural})`).join(', ')}; ${g.edges.length} connections.`}
            {live.data?.router
              ? ` Router ${live.data.router.name} is ${live.data.router.isOnline ? 'online' : 'offline'}; ${live.data.totalCircuits} open circuit${live.data.totalCircuits === 1 ? '' : 's'}.`
              : ''}
          </p>
          {g.truncated && <Notice kind="warning">{g.truncated}</Notice>}
          <ul className="legend" aria-label="Legend">
            <li>
              <span className="swatch dial" />
              Dial (service policy)
            </li>
            <li>
              <span className="swatch bind" />
              Bind (service policy)
            </li>
            <li>
              <span className="swatch" />
              Service edge router policy
            </li>
            <li>
              <span className="swatch erp" />
              Edge router policy
            </li>
            <li>
              <span className="swatch live" />
              Open circuit
            </li>
          </ul>
          <div className="network-map">
            <svg viewBox={`0 0 ${WIDTH} ${layout.height}`} role="group" aria-label="Network map" data-testid="network-map">
              {KINDS.map((k) => (
                <text key={k} className="col-title" x={COL_X[k]} y={18}>
                  {capitalized(ROLE_KINDS[k].plural)}
                </text>
              ))}
              <g aria-hidden="true">
                {g.edges.map((e) => {
                  const a = layout.pos.get(e.from);
                  const b = layout.pos.get(e.to);
                  if (!a || !b) return null;
                  const erp = e.kind === 'edge-router-policy';
                  const hl = touching(e, selected);
                  if (erp && !showErp && !hl) return null;
                  const liveEdge = onNodes.edges.get(`${e.from}>${e.to}`);
                  const cls = [
                    'net-edge',
                    erp ? 'erp' : e.kind === 'service-edge-router-policy' ? 'router' : e.dial ? 'dial' : 'bind',
                    hl ? 'hl' : selected ? 'dim' : '',
                  ].join(' ');
                  return (
                    <g key={`${e.from}>${e.to}`}>
                      <path className={cls} d={curve(a.x + a.w, a.y + NODE_H / 2, b.x, b.y + NODE_H / 2)} />
                      {liveEdge && (
                        <path className="net-edge live" data-testid="live-edge" d={curve(a.x + a.w, a.y + NODE_H / 2, b.x, b.y + NODE_H / 2)} />
                      )}
                    </g>
                  );
                })}
              </g>
              {g.nodes.map((n) => {
                const p = layout.pos.get(n.key)!;
                const online = onNodes.routerOnline.get(n.key) ?? (n.online === undefined ? undefined : n.online > 0);
                const t = onNodes.terminators.get(n.key);
                const c = onNodes.circuits.get(n.key);
                const cls = [
                  'net-node',
                  n.type,
                  n.pinned ? 'pinned' : '',
                  selected === n.key ? 'selected' : '',
                  selected && selected !== n.key && !neighbours.has(n.key) ? 'dim' : '',
                ].join(' ');
                const badges = [t ? `⇄${t}` : '', c ? `●${c}` : ''].filter(Boolean).join(' ');
                return (
                  <g
                    key={n.key}
                    className={cls}
                    transform={`translate(${p.x},${p.y})`}
                    role="button"
                    tabIndex={0}
                    aria-label={nodeLabel(n, onNodes)}
                    aria-expanded={n.type === 'group' ? !!n.expanded : undefined}
                    aria-pressed={n.type === 'entity' ? selected === n.key : undefined}
                    data-testid="net-node"
                    data-key={n.key}
                    onClick={() => toggle(n)}
                    onKeyDown={(e) => onKey(e, n)}
                  >
                    <rect width={p.w} height={NODE_H} rx={6} />
                    {n.kind === 'edge-router' && online !== undefined && (
                      <circle cx={12} cy={NODE_H / 2} r={5} className={online ? 'net-dot-on' : 'net-dot-off'} />
                    )}
                    <text x={n.kind === 'edge-router' ? 24 : 10} y={NODE_H / 2 + 4}>
                      {n.type === 'group' ? `${n.expanded ? '▾' : '▸'} ${cut(n.name, 22)} ` : cut(n.name, badges ? 24 : 30)}
                      {n.type === 'group' && <tspan className="count">{n.count}</tspan>}
                    </text>
                    {badges && (
                      <text className="live" x={p.w - 8} y={NODE_H / 2 + 4} textAnchor="end">
                        {badges}
                      </text>
                    )}
                  </g>
                );
              })}
            </svg>
          </div>
          {sel && (
            <Panel title={`${sel.type === 'group' ? 'Group' : capitalized(ROLE_KINDS[sel.kind].label)}: ${sel.name}`}>
              <div className="node-details" aria-live="polite">
                {sel.type === 'entity' && sel.id && (
                  <p>
                    <Link to={`/${ROLE_KINDS[sel.kind].resource}/${encodeURIComponent(sel.id)}`}>{`Open ${sel.name}`}</Link>
                    {sel.kind === 'identity' && (
                      <>
                        {' · '}
                        <button
                          type="button"
                          className="link-button"
                          onClick={() => {
                            const f: Filter = { mode: 'identity', text: '', identityId: sel.id! };
                            setDraft(f);
                            apply(f);
                          }}
                        >
                          Show only its reach
                        </button>
                      </>
                    )}
                  </p>
                )}
                {sel.type === 'group' && (
                  <p>{`${sel.count} ${ROLE_KINDS[sel.kind].plural} with ${sel.name}${sel.expanded ? '' : ' (activate the node to list them)'}.`}</p>
                )}
                <p>{sel.attributes.length ? `Attributes: ${sel.attributes.map((a) => `#${a}`).join(' ')}` : 'No role attributes.'}</p>
                <h3>{`Connections (${selEdges.length})`}</h3>
                {selEdges.length === 0 ? (
                  <p className="muted">No policy connects it to anything in view.</p>
                ) : (
                  <ul>
                    {selEdges.map((e) => {
                      const other = nodeByKey.get(e.from === sel.key ? e.to : e.from)!;
                      const what =
                        e.kind === 'service-policy'
                          ? [e.dial ? 'Dial' : '', e.bind ? 'Bind' : ''].filter(Boolean).join(' and ')
                          : e.kind === 'edge-router-policy'
                            ? 'may use router'
                            : 'carried by router';
                      const identity = e.kind === 'service-policy' ? nodeByKey.get(e.from) : undefined;
                      const service = e.kind === 'service-policy' ? nodeByKey.get(e.to) : undefined;
                      return (
                        <li key={`${e.from}>${e.to}`}>
                          {`${what}: `}
                          <strong>{other.name}</strong>
                          {' via '}
                          {e.policies.map((p, i) => (
                            <span key={p.id}>
                              {i > 0 && ', '}
                              <Link to={`/${p.entity}/${encodeURIComponent(p.id)}`}>{p.name}</Link>
                            </span>
                          ))}
                          {e.policyCount > e.policies.length ? ` and ${e.policyCount - e.policies.length} more` : ''}
                          {identity?.id && service?.id && (
                            <>
                              {' · '}
                              <Link to={`/policy-advice/${encodeURIComponent(identity.id)}/${encodeURIComponent(service.id)}`}>Why?</Link>
                            </>
                          )}
                        </li>
                      );
                    })}
                  </ul>
                )}
              </div>
            </Panel>
          )}
        </>
      )}
      <Panel title="Routers and links">
        {fabric.error && <ErrorBox error={fabric.error} retry={() => fabric.refetch()} />}
        {fabric.data ? <RouterMesh fabric={fabric.data} /> : !fabric.error && <Spinner />}
      </Panel>
      <Panel title={`Open circuits (${live.data?.totalCircuits ?? 0})`}>
        {(live.data?.totalCircuits ?? 0) > circuits.length && (
          <p className="hint">{`The newest ${circuits.length} of ${live.data!.totalCircuits} circuits.`}</p>
        )}
        {circuits.length === 0 ? (
          <p className="muted">
            {live.data?.router === null && !fabric.data?.routers.length ? 'This Weft runs no edge router.' : 'No circuit is open.'}
          </p>
        ) : (
          <div className="table-scroll">
            <table className="resource-table" aria-label="Open circuits">
              <thead>
                <tr>
                  <th scope="col">Dialer</th>
                  <th scope="col">Service</th>
                  <th scope="col">Path</th>
                  <th scope="col">Hops</th>
                  <th scope="col">Bytes in</th>
                  <th scope="col">Bytes out</th>
                  <th scope="col">Age</th>
                </tr>
              </thead>
              <tbody>
                {circuits.map((c) => (
                  <tr key={c.id} data-testid="network-circuit">
                    <td data-label="Dialer">
                      {c.identityId ? <Link to={`/identities/${encodeURIComponent(c.identityId)}`}>{c.identityName}</Link> : c.identityName}
                    </td>
                    <td data-label="Service">
                      <Link to={`/services/${encodeURIComponent(c.serviceId)}`}>{c.serviceName}</Link>
                    </td>
                    <td data-label="Path">{c.path.join(' → ')}</td>
                    <td data-label="Hops">{c.hops}</td>
                    <td data-label="Bytes in">{c.bytesIn === undefined ? '—' : formatBytes(c.bytesIn)}</td>
                    <td data-label="Bytes out">{c.bytesOut === undefined ? '—' : formatBytes(c.bytesOut)}</td>
                    <td data-label="Age">{formatAge(c.ageSeconds)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Panel>
    </Page>
  );
}
