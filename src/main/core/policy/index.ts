// The policy engine's facade: what the adapters (REST, console) use of it — the caller's own views (services,
// sessions, edge routers, authenticators), posture responses, service config overrides, policy advice and its
// explanation, the network graph, the service wizard and the role kinds. Adapters import policy from here, not from
// the modules behind it.
export { explainAccess, serviceUsers } from './accessExplain';
export { policyAdvice } from './advice';
export {
  callerServiceEdgeRouters,
  createCallerSession,
  deleteCallerSession,
  getCallerService,
  getCallerSession,
  getCurrentIdentity,
  getOwnAuthenticator,
  identityFailedServiceRequests,
  listCallerEdgeRouters,
  listCallerServiceTerminators,
  listCallerServices,
  listCallerSessions,
  listOwnAuthenticators,
  pagedPolicyAdvice,
  sessionRoutePath,
  updateOwnAuthenticator,
} from './callerViews';
export { lastServiceChange } from './changes';
export { ROLE_KIND_NAMES } from './kinds';
export { networkGraph, networkLive } from './networkGraph';
export { parsePostureResponses, postureDataView, submitPostureResponses } from './postureResponses';
export { associateServiceConfigs, listServiceConfigOverrides, removeServiceConfigs } from './serviceConfigOverrides';
export { configTypesOf } from './serviceView';
export { previewServiceWizard, runServiceWizard } from './serviceWizard';
