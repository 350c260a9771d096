import type { FabricCircuit, FabricLive } from './core/dataPlane/index';
import type { ControlChannelServer } from './ctrl/index';
import type { EdgeRouter } from './router/index';
import { BUILD_DATE, REVISION, WEFT_VERSION } from './version';

/**
 * What the fabric API shows of the routers of this node: the built-in router (set once it has started) and the stock
 * routers connected to the control channel, with their circuits; a deleted circuit ends on the router that has it.
 */
export function fabricLive(parts: { ctrl?: ControlChannelServer; router?: () => EdgeRouter | undefined }): FabricLive {
  const { ctrl } = parts;
  const router = () => parts.router?.();
  return {
    versions() {
      const out = new Map<string, string>();
      const r = router();
      // Weft's own version header (the control channel's, with Go's names for the architecture)
      if (r) out.set(r.id, ctrl?.versionHeader ?? `${WEFT_VERSION}|${REVISION}|${BUILD_DATE}|${process.platform}|${process.arch}`);
      for (const id of ctrl?.connectedRouters() ?? []) {
        const version = ctrl?.channelOf(id)?.version;
        if (version) out.set(id, version);
      }
      return out;
    },
    circuits() {
      const out: FabricCircuit[] = [];
      const r = router();
      if (r) {
        for (const c of r.status().circuits) {
          // a circuit dialed at a stock router that ends here is the controller's (below, with its whole path)
          if (ctrl?.fabric.circuits.has(c.id)) continue;
          out.push({
            id: c.id,
            routerId: r.id,
            serviceId: c.serviceId,
            terminatorId: c.terminatorId,
            clientId: c.callerId,
            createdAt: new Date(c.createdAt),
            path: [r.id],
          });
        }
      }
      for (const c of ctrl?.fabric.circuits.values() ?? []) {
        out.push({
          id: c.id,
          routerId: c.routerId,
          serviceId: c.serviceId,
          terminatorId: c.terminatorId,
          clientId: c.identityId,
          createdAt: new Date(c.createdAt),
          path: c.path,
          links: c.links,
        });
      }
      return out;
    },
    links() {
      return [...(ctrl?.mesh.links.values() ?? [])].map((l) => ({
        id: l.id,
        srcRouterId: l.srcRouterId,
        dstRouterId: l.destRouterId,
        protocol: l.protocol,
        cost: l.cost,
        state: 'connected' as const,
        iteration: l.iteration,
        createdAt: new Date(l.createdAt),
      }));
    },
    linkListeners() {
      const out = new Map<string, Array<{ address: string; protocol: string }>>();
      const r = router();
      if (r?.linkAddress) out.set(r.id, [{ address: r.linkAddress, protocol: 'tls' }]);
      for (const id of ctrl?.connectedRouters() ?? []) {
        out.set(
          id,
          ctrl!.mesh.listenersOf(id).map((l) => ({ address: l.address, protocol: l.protocol })),
        );
      }
      return out;
    },
    endCircuit(id) {
      if (ctrl?.fabric.circuits.has(id)) {
        ctrl.fabric.endCircuits((c) => c.id === id);
        return true;
      }
      return router()?.closeCircuit(id) ?? false;
    },
  };
}
