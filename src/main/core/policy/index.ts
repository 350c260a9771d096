// The policy engine's facade: what the adapters (REST, console) and the engines above (enrollment, dataPlane, shares)
// use of it — the role-kind types (identities, services, edge routers) the policy index classes, the caller's own views
// (services, sessions, edge routers, authenticators), posture and its responses, service config overrides, policy advice
// and its explanation, the network graph, the service wizard and the role kinds. They import policy from here, not from
// the modules behind it.
export { explainAccess, FIX_RESOURCES, serviceUsers } from './accessExplain';
export { applyAccessFix, previewAccessFix } from './accessFixes';
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
export { builtinRouterId, builtinRouterIdFile, builtinRouterRow, edgeRouters } from './edgeRouters';
export { edgeRouterPolicies } from './edgeRouterPolicies';
export { IDENTITY_TYPES, identities } from './identities';
export { ROLE_KIND_NAMES } from '../kinds';
export { networkGraph } from './networkGraph';
export { anyPostureChecks } from './posture';
export { postureChecks } from './postureChecks';
export {
  EXPECTATIONS,
  policyTestResults,
  policyTests,
  runPolicyTests,
  watchPolicyTests,
  type PolicyTestReport,
  type PolicyTestResult,
} from './policyTests';
export { parsePostureResponses, postureDataView, revokeFailingSessions, submitPostureResponses } from './postureResponses';
export { serviceAccessTokensOf } from './serviceAccessToken';
export { services } from './services';
export { serviceEdgeRouterPolicies } from './serviceEdgeRouterPolicies';
export { servicePolicies } from './servicePolicies';
export { createSession } from './sessionGrant';
export { associateServiceConfigs, listServiceConfigOverrides, removeServiceConfigs } from './serviceConfigOverrides';
export { configTypesOf } from './serviceView';
export { previewServiceWizard, runServiceWizard } from './serviceWizard';
export { wizardCommands, shellQuote, idVariable, MANAGEMENT_API_BASE, type WizardCommands, type RestRequest } from './wizardCommands';
export type { PostureCheckDetails } from './postureEvaluation';
