// The shares' facade: what `weft share` (src/main/share), the console and the frontend's wiring use of public shares —
// svc.proxy.v1 configs on services, the resolver the frontend serves them by, their creation and removal — and of
// the identities Weft makes for them (the admin client certificate of local commands, the frontend's overlay
// identity). Adapters import shares from here, not from the modules behind it.
export { SVC_PROXY_CONFIG_TYPE_ID } from '../entities/builtinConfigTypes';
export {
  createShareResolver,
  DEFAULT_SHARE_CHECK_INTERVAL,
  findLiveShare,
  findLiveShareByDomain,
  SHARE_TAG,
  SHARE_TOKEN,
  shareOAuthProviders,
  shareResourceName,
  type ShareAccessRules,
  type ShareCheckData,
  type ShareClaimRule,
  type ShareConfigData,
  type ShareFieldIssue,
  type ShareOAuthCheck,
  type ShareOAuthData,
  type SharePathRule,
} from './config';
export { createPublicShare, removePublicShare } from './resources';
export { adminClientCertificateDue, recordAdminClientCertificate } from './adminClientCert';
export { endFrontendApiSession, ensureFrontendIdentity, frontendDialSession, replaceFrontendCertificate } from './frontendIdentity';
