// The auth engine's facade: what the adapters (REST, console, shares) use of logins, API sessions, MFA, OpenZiti's
// OIDC provider, identity disable/enable, callers and rate limits. Adapters import auth from here, not from the
// modules behind it.
export { apiSessionsOf } from './apiSessions';
export { authenticatePassword, defaultAdminLogin, type AuthenticateBody } from './authenticate';
export { authenticateCert } from './certAuth';
export { authenticateExtJwt } from './extJwt';
export { disableBody, disableIdentity, enableIdentity } from './lifecycle';
export {
  authenticateMfa,
  createTotpToken,
  disableMfa,
  initiateMfa,
  mfaCodeBody,
  mfaQrCode,
  mfaStatus,
  regenerateRecoveryCodes,
  removeIdentityMfa,
  verifyMfa,
  viewRecoveryCodes,
} from './mfa';
export {
  OidcError,
  OidcRequestError,
  oidcAuthorize,
  oidcCallback,
  oidcDiscovery,
  oidcEndSession,
  oidcIssuer,
  oidcJwks,
  oidcLogin,
  oidcLoginState,
  oidcRevoke,
  oidcToken,
  oidcTotp,
  oidcTotpEnrollDelete,
  oidcTotpEnrollStart,
  oidcTotpEnrollVerify,
  oidcUserinfo,
  type OidcLoginMethod,
  type OidcLoginState,
  type TokenRequest,
} from './oidc';
export { isJwt } from './oidcTokens';
export { ANONYMOUS, type Caller } from './permissions';
export { withDeadline, type ApiLimits, type ClientRateLimiter } from './rateLimit';
