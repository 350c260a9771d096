// The data plane's facade: what a router (the built-in one in src/main/router) asks the core — whether a connection,
// dial or bind is allowed, its terminators, its own row, the changes it reacts to — and the live view it reports.
// Adapters import the data plane from here, not from the modules behind it.
export type { Core } from '../core';
export { newId } from '../ids';
export {
  authorizeApiSession,
  authorizeChannel,
  authorizeServiceSession,
  authorizeTokenUpdate,
  channelStillValid,
  checkSessionPosture,
  DataPlaneRefusal,
  type ChannelCaller,
  type SessionGrant,
} from './access';
export { builtinRouterId } from '../policy/index';
export {
  markRoutersOffline,
  builtinRouterClientTls,
  coverBuiltinRouterHost,
  provisionBuiltinRouter,
  renewBuiltinRouterIfDue,
  recordBuiltinRouterStopped,
  routerIsOnline,
  routerState,
  setBuiltinRouterState,
  tlsUrl,
  type BuiltinRouterTls,
} from './builtinRouter';
export { circuitEventsOf, type CircuitReport } from './circuitEvents';
export { missingRows, watchDataPlane, watchEdgeRouters, type DataPlaneEvents } from './events';
export {
  authorizeRouterControl,
  reassertControlRouters,
  routerControlStillValid,
  setControlRouterOnline,
  verifyRouterFingerprints,
  type ControlRouter,
} from './routerControl';
export { apiSessionsOfCertificates, heartbeatApiSessions, routerApiSessions, type RouterApiSession } from './routerApiSessions';
export { dataPlaneView, networkLive, type LiveDataPlane, type LiveStatus, type NetworkLive } from './status';
export { fabricView, type FabricView } from './fabricView';
export {
  addRouterTerminator,
  clearRouterTerminators,
  removeRouterTerminator,
  removeTerminatorsOfSessions,
  removeTerminatorsWithoutSession,
  ROUTER_BINDINGS,
  routerHostedServices,
  updateRouterTerminator,
  type HostV1,
  type RouterBinding,
  type RouterHostedService,
  type RouterTerminator,
} from './terminators';
export { routerModel, ROUTER_MODEL_TABLES, type RouterModel, type RouterModelIdentity } from './routerModel';
export {
  authorizeRouterRequest,
  authorizeRouterTunnel,
  changeRouterTerminators,
  putRouterTerminator,
  recordRouterListeners,
  PRECEDENCE_RANK,
  terminatorChoices,
  tunnelTerminatorsOf,
  type RouterSdkRequest,
  type TerminatorChoice,
} from './stockRouters';
export {
  advertiseNetworkAddress,
  isLoopbackHost,
  networkAddressView,
  savedNetworkAddress,
  type AddressListeners,
  type NetworkAddressView,
} from './networkAddress';
export {
  deleteFabricCircuit,
  getFabricCircuit,
  getFabricLink,
  getFabricRouter,
  listFabricCircuits,
  listFabricLinks,
  listFabricRouters,
  type FabricCircuit,
  type FabricLink,
  type FabricLive,
} from './fabric';
export { confirmRouterExtension, issueRouterExtension, type RouterExtension } from '../enrollment/index';
