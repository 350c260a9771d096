import type { RouterOutputs } from '../lib/types';

type Fabric = RouterOutputs['network']['fabric'];

/** At most this many routers are drawn (online first, then those links name); the rest are counted. */
const MAX_DRAWN = 24;
const WIDTH = 1000;
const NODE_W = 190;
const NODE_H = 30;

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

interface MeshNode {
  id: string;
  name: string;
  /** undefined: not an edge router of the list (a transit router named by a link) */
  isOnline?: boolean;
  builtin: boolean;
  circuits: number;
}

/** What a router is, for its label: "router r1, online, Weft's built-in router, 2 open circuits". */
function routerLabel(n: MeshNode): string {
  const parts = [`router ${n.name}`];
  if (n.isOnline !== undefined) parts.push(n.isOnline ? 'online' : 'offline');
  parts.push(n.builtin ? "Weft's built-in router" : n.isOnline === undefined ? 'transit router' : 'stock router');
  if (n.circuits) parts.push(`${n.circuits} open circuit${n.circuits === 1 ? '' : 's'}`);
  return parts.join(', ');
}

/**
 * The routers of this node (Weft's built-in one and the stock routers) placed on an ellipse, with the links between
 * them as edges (a failed link dashed, its cost at the middle). Read-only; refreshed by its page's polling.
 */
export function RouterMesh({ fabric }: { fabric: Fabric }) {
  const byId = new Map<string, MeshNode>();
  for (const r of fabric.routers) byId.set(r.id, r);
  for (const l of fabric.links)
    for (const end of [l.src, l.dst]) if (!byId.has(end.id)) byId.set(end.id, { id: end.id, name: end.name, builtin: false, circuits: 0 });
  const linked = new Set(fabric.links.flatMap((l) => [l.src.id, l.dst.id]));
  // routers with links first (so edges are drawn), then the rest as listed (online first)
  const all = [...byId.values()];
  const nodes = [...all.filter((n) => linked.has(n.id)), ...all.filter((n) => !linked.has(n.id))].slice(0, MAX_DRAWN);
  const hidden = fabric.totalRouters + all.filter((n) => n.isOnline === undefined).length - nodes.length;
  const rows = Math.ceil(nodes.length / 2);
  const height = Math.max(90, rows * (NODE_H + 26) + 40);
  const cx = WIDTH / 2;
  const cy = height / 2;
  const rx = nodes.length > 1 ? WIDTH / 2 - NODE_W / 2 - 16 : 0;
  const ry = nodes.length > 2 ? height / 2 - NODE_H / 2 - 14 : 0;
  const pos = new Map(
    nodes.map((n, i) => {
      // clockwise from the left, so two routers sit side by side
      const a = Math.PI + (2 * Math.PI * i) / Math.max(nodes.length, 1);
      return [n.id, { x: cx + rx * Math.cos(a), y: cy + ry * Math.sin(a) }];
    }),
  );
  return (
    <>
      <div className="network-map">
        <svg viewBox={`0 0 ${WIDTH} ${height}`} role="group" aria-label="Routers and links" data-testid="router-mesh">
          {fabric.links.map((l) => {
            const a = pos.get(l.src.id);
            const b = pos.get(l.dst.id);
            if (!a || !b) return null;
            return (
              <g
                key={l.id}
                role="img"
                aria-label={`link ${l.src.name} → ${l.dst.name}, ${l.state}, cost ${l.cost}`}
                data-testid="mesh-link"
                className={`mesh-link ${l.state}`}
              >
                <line x1={a.x} y1={a.y} x2={b.x} y2={b.y} />
                <text x={(a.x + b.x) / 2} y={(a.y + b.y) / 2 - 6} textAnchor="middle">
                  {l.cost}
                </text>
              </g>
            );
          })}
          {nodes.map((n) => {
            const p = pos.get(n.id)!;
            return (
              <g
                key={n.id}
                className={`net-node mesh-router${n.builtin ? ' pinned' : ''}`}
                transform={`translate(${p.x - NODE_W / 2},${p.y - NODE_H / 2})`}
                role="img"
                aria-label={routerLabel(n)}
                data-testid="mesh-router"
              >
                <rect width={NODE_W} height={NODE_H} rx={6} />
                {n.isOnline !== undefined && <circle cx={12} cy={NODE_H / 2} r={5} className={n.isOnline ? 'net-dot-on' : 'net-dot-off'} />}
                <text x={24} y={NODE_H / 2 + 4}>
                  {cut(n.name, n.circuits ? 18 : 22)}
                </text>
                {n.circuits > 0 && (
                  <text className="live" x={NODE_W - 8} y={NODE_H / 2 + 4} textAnchor="end">
                    {`●${n.circuits}`}
                  </text>
                )}
              </g>
            );
          })}
        </svg>
      </div>
      <p className="hint">
        {`${fabric.routers.filter((r) => r.isOnline).length} of ${fabric.totalRouters} edge router${fabric.totalRouters === 1 ? '' : 's'} online; ${fabric.links.length} link${fabric.links.length === 1 ? '' : 's'} between routers.`}
        {hidden > 0 ? ` ${hidden} more router${hidden === 1 ? '' : 's'} not drawn.` : ''}
        {fabric.links.length === 0 ? ' Routers are not linked: each circuit stays on one router.' : ''}
      </p>
    </>
  );
}
