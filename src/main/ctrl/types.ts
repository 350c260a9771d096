import type { ApiSessionSync } from './apiSessionSync';
import type { Logger } from 'pino';
import type { ControlRouter, Core } from '../core/dataPlane/index';
import type { StockRouterFabric } from './fabric';
import type { LinkMesh } from './links';
import type { RouterModelSync } from './modelSync';
import type { RouterControlChannel } from './routerChannel';
import type { RouterExtensions } from './routerExtension';

/** What a router's control channel needs of the listener that accepted it (so imports run one way). */
export interface ControlChannelHost {
  readonly core: Core;
  readonly log: Logger;
  /** this controller's id (the result's Id header: the router's name for its control channel) */
  readonly controllerId: string;
  /** OpenZiti's version header: version|revision|build date|os|arch */
  readonly versionHeader: string;
  /** the capability mask (ctrl_pb.ControlHeaders CapabilitiesHeader): a big-endian bit set, as Go's big.Int.Bytes() */
  readonly capabilities: Buffer;
  readonly heartbeatMs: number;
  readonly unresponsiveMs: number;
  /** edge sync: ServerHello/ClientHello and the router data model */
  readonly sync: RouterModelSync;
  /** legacy API sessions the routers' SDKs connect with */
  readonly apiSessions: ApiSessionSync;
  /** terminators and circuits the router asks for */
  readonly fabric: StockRouterFabric;
  /** the links between routers */
  readonly mesh: LinkMesh;
  /** certificates extended over the channel */
  readonly extensions: RouterExtensions;
  /** checks a hello's router id and client certificate (throws DataPlaneRefusal) */
  authorize(routerId: string, leafDer: Buffer | undefined): Promise<ControlRouter>;
  connected(channel: RouterControlChannel): Promise<void>;
  disconnected(channel: RouterControlChannel): Promise<void>;
}
