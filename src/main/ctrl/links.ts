// Links between stock routers, as OpenZiti v1.7.2's controller manages them (routers own their links): every
// connected router is told where the others accept links (PeerStateChanges with their hello's link listeners; an
// Unhealthy state when one goes), routers dial each other and the dialer reports the link (RouterLinks; Weft
// advertises ControllerSingleRouterLinkSource), a link that fails comes back as a LinkFault. The controller keeps the
// links in memory and picks the cheapest path for a circuit over them (Dijkstra, as OpenZiti's shortestPath).
import type { RouterControlChannel } from './routerChannel';
import { message } from '../router/channel/wire';
import { Fabric, linkFault } from './edgeMessages';
import { LinkMsg, PeerState, peerStateChanges, type LinkListener, type PeerStateChange, type ReportedLink } from './linkMessages';

/** A link's static cost when reported (OpenZiti's newLink) and the least a hop through a router costs (MinRouterCost). */
const STATIC_LINK_COST = 1;
const MIN_ROUTER_COST = 10;

export interface MeshLink extends ReportedLink {
  /** the router that dialed it (and reported it) */
  srcRouterId: string;
  cost: number;
  createdAt: number;
}

/** A path between two routers: the routers from the first to the last and the links between them. */
export interface RouterPath {
  routers: string[];
  links: string[];
  cost: number;
}

export class LinkMesh {
  /** connected routers: their version (for the peers' PeerStateChange) and link listeners */
  private readonly peers = new Map<string, { version: string; listeners: LinkListener[]; deliver?: (changes: PeerStateChange[]) => void }>();
  readonly links = new Map<string, MeshLink>();

  constructor(private readonly channelOf: (routerId: string) => RouterControlChannel | undefined) {}

  listenersOf(routerId: string): LinkListener[] {
    return this.peers.get(routerId)?.listeners ?? [];
  }

  /**
   * A router's channel is up: the others learn where it accepts links, it learns where they do. `deliver`: it runs in
   * process and hears of its peers there (the built-in router).
   */
  connected(
    routerId: string,
    version: string | undefined,
    listeners: LinkListener[],
    { deliver }: { deliver?: (changes: PeerStateChange[]) => void } = {},
  ): void {
    const others = [...this.peers.keys()].filter((id) => id !== routerId);
    this.peers.set(routerId, { version: version?.split('|')[0] ?? '', listeners, deliver });
    const me = this.stateOf(routerId);
    for (const other of others) this.send(other, [me]);
    if (others.length > 0)
      this.send(
        routerId,
        others.map((id) => this.stateOf(id)),
      );
  }

  /** A router's channel went: the others hear it is unhealthy; its links are gone (the circuits through it end). */
  disconnected(routerId: string): void {
    if (!this.peers.delete(routerId)) return;
    for (const other of this.peers.keys()) this.send(other, [{ id: routerId, version: '', state: PeerState.Unhealthy, listeners: [] }]);
    this.remove((l) => l.srcRouterId === routerId || l.destRouterId === routerId);
  }

  /** Links a router dialed: kept unless a newer iteration of the same link is known (OpenZiti's RouterReportedLink). */
  reported(routerId: string, links: ReportedLink[]): void {
    if (!this.peers.has(routerId)) return;
    for (const l of links) {
      if (!l.id || !l.destRouterId || l.destRouterId === routerId) continue;
      const known = this.links.get(l.id);
      if (known && known.iteration >= l.iteration) continue;
      this.links.set(l.id, { ...l, srcRouterId: routerId, cost: STATIC_LINK_COST, createdAt: Date.now() });
    }
  }

  /**
   * A router's link fault (the link closed or was a duplicate): the link at that iteration or before is gone (returned,
   * for its circuits to be rerouted), and the router at its other end is told (OpenZiti's handleFaultedLink).
   */
  faulted(routerId: string, linkId: string, iteration: number): MeshLink | undefined {
    const l = this.links.get(linkId);
    if (!l || (l.srcRouterId !== routerId && l.destRouterId !== routerId) || (iteration !== 0 && iteration < l.iteration)) return undefined;
    this.links.delete(linkId);
    const other = l.srcRouterId === routerId ? l.destRouterId : l.srcRouterId;
    this.channelOf(other)?.channel.send(message(Fabric.Fault, [], linkFault(linkId, iteration)));
    return l;
  }

  /** The cheapest path from one connected router to another over the links between connected routers. */
  path(from: string, to: string): RouterPath | undefined {
    if (!this.peers.has(from) || !this.peers.has(to)) return undefined;
    if (from === to) return { routers: [from], links: [], cost: 0 };
    // the cheapest link between each pair of routers, usable both ways
    const edges = new Map<string, Map<string, MeshLink>>();
    for (const l of this.links.values()) {
      if (!this.peers.has(l.srcRouterId) || !this.peers.has(l.destRouterId)) continue;
      for (const [a, b] of [
        [l.srcRouterId, l.destRouterId],
        [l.destRouterId, l.srcRouterId],
      ] as const) {
        const out = edges.get(a) ?? new Map<string, MeshLink>();
        const best = out.get(b);
        if (!best || l.cost < best.cost) out.set(b, l);
        edges.set(a, out);
      }
    }
    const dist = new Map<string, number>([[from, 0]]);
    const prev = new Map<string, { router: string; link: string }>();
    const open = new Set(this.peers.keys());
    while (open.size > 0) {
      let u: string | undefined;
      for (const r of open) if (dist.has(r) && (u === undefined || dist.get(r)! < dist.get(u)!)) u = r;
      if (u === undefined || u === to) break;
      open.delete(u);
      for (const [v, l] of edges.get(u) ?? []) {
        if (!open.has(v)) continue;
        const alt = dist.get(u)! + l.cost + MIN_ROUTER_COST;
        if (alt < (dist.get(v) ?? Infinity)) {
          dist.set(v, alt);
          prev.set(v, { router: u, link: l.id });
        }
      }
    }
    if (!dist.has(to)) return undefined;
    const routers = [to];
    const links: string[] = [];
    for (let step = prev.get(to); step; step = prev.get(step.router)) {
      routers.unshift(step.router);
      links.unshift(step.link);
    }
    return { routers, links, cost: dist.get(to)! };
  }

  private stateOf(routerId: string): PeerStateChange {
    const p = this.peers.get(routerId)!;
    return { id: routerId, version: p.version, state: PeerState.Healthy, listeners: p.listeners };
  }

  private send(routerId: string, changes: PeerStateChange[]): void {
    const deliver = this.peers.get(routerId)?.deliver;
    if (deliver) return deliver(changes);
    this.channelOf(routerId)?.channel.send(message(LinkMsg.PeerStateChanges, [], peerStateChanges(changes)));
  }

  private remove(which: (l: MeshLink) => boolean): void {
    for (const l of [...this.links.values()]) if (which(l)) this.links.delete(l.id);
  }
}
