// The operations engine's facade: what the adapters (REST, console, shares) use of it — the audit log, store
// availability, database snapshots and integrity checks, tracing, certificate expiry, single-use keys and whether a
// reply may be reused. Adapters import ops from here, not from the modules behind it.
export { coversWrite, PendingAudit, recordAudit, routeAction, type AuditEntry } from './audit';
export { ASCODE_SECTIONS, exportNetwork, formatNetwork, importNetwork, parseNetwork, type ImportResult, type PlanEntry } from './ascode';
export { isStoreUnavailable } from './availability';
export {
  builtinRouterDir,
  certificateInventory,
  controllerCertificates,
  listCertificates,
  renewServerCertificate,
  reportCertificateWarnings,
  requestDueExtensions,
  type CertificateEntry,
  type CertificateKind,
  type CertificateState,
} from './certificateExpiry';
export { controllerId, controlNodesGone, updateControllerApiOrigin } from './controllerNodes';
export { createSnapshot, integrityResults, startIntegrityCheck } from './database';
export { metricHistory, type MetricPoint } from './metricHistory';
export { getTrace, traceSpecSchema, updateTrace } from './tracing';
export {
  EMITTED_TYPES,
  entityTypeOf,
  eventFeedOf,
  followEvents,
  LEGACY_TYPES,
  SILENT_TYPES,
  type EventType,
  type FeedItem,
  type Follower,
  type ZitiEvent,
} from './events';
export { markUsedOnce } from '../auth/index';
export { isVolatile, trackReuse } from '../replyReuse';
