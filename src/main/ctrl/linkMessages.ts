// The messages about links between routers (ctrl.proto of OpenZiti v1.7.2): a router's link listeners (its hello's
// ListenersHeader), the peers the controller tells each router of (PeerStateChanges), the links a router reports
// (RouterLinks), the check of a dialing router's certificate (VerifyRouter). Parsing and encoding only.
import { ProtoReader, ProtoWriter } from './protobuf';

export const LinkMsg = {
  RouterLinks: 1035,
  VerifyRouter: 1036,
  PeerStateChanges: 1050,
  LinkState: 1053,
} as const;

/** ctrl_pb.Listener: where a router accepts links. */
export interface LinkListener {
  address: string;
  protocol: string;
  costTags: string[];
  groups: string[];
  localBinding: string;
}

function parseListener(r: ProtoReader): LinkListener {
  return { address: r.str(1), protocol: r.str(2), costTags: r.strs(3), groups: r.strs(4), localBinding: r.str(5) };
}

function listenerMessage(l: LinkListener): ProtoWriter {
  return new ProtoWriter().bytes(1, l.address).bytes(2, l.protocol).strings(3, l.costTags).strings(4, l.groups).bytes(5, l.localBinding);
}

/** ctrl_pb.Listeners, the hello header a router advertises its link listeners in. */
export function parseListeners(header: Buffer | undefined): LinkListener[] {
  return header ? new ProtoReader(header).messages(1).map(parseListener) : [];
}

/** ctrl_pb.PeerState */
export const PeerState = { Healthy: 0, Unhealthy: 1, Removed: 2 } as const;

export interface PeerStateChange {
  id: string;
  version: string;
  state: number;
  listeners: LinkListener[];
}

export function peerStateChanges(changes: PeerStateChange[]): Buffer {
  const w = new ProtoWriter();
  for (const c of changes) {
    const m = new ProtoWriter().bytes(1, c.id).bytes(2, c.version).uint(3, c.state);
    for (const l of c.listeners) m.message(4, listenerMessage(l));
    w.message(1, m);
  }
  return w.finish();
}

/** ctrl_pb.RouterLinks.RouterLink: a link as the router that dialed it reports it. */
export interface ReportedLink {
  id: string;
  destRouterId: string;
  protocol: string;
  dialAddress: string;
  iteration: number;
}

export function parseRouterLinks(body: Buffer): ReportedLink[] {
  return new ProtoReader(body).messages(1).map((l) => ({
    id: l.str(1),
    destRouterId: l.str(2),
    protocol: l.str(3),
    dialAddress: l.str(5),
    iteration: l.uint(6),
  }));
}

export function parseVerifyRouter(body: Buffer): { routerId: string; fingerprints: string[] } {
  const r = new ProtoReader(body);
  return { routerId: r.str(1), fingerprints: r.strs(2) };
}
