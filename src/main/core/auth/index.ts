// The auth engine's facade: what the adapters (REST, console, shares) and the engines above (policy, enrollment, ops,
// dataPlane, shares) use of logins, API sessions, authenticators and passwords, MFA, OpenZiti's OIDC provider, external
// JWTs, identity disable/enable, callers, rate limits, single-use keys and the secret key. They import auth from here,
// not from the modules behind it.
export { API_SESSION, apiSessionsOf, type ApiSession } from './apiSessions';
export { authenticatePassword, defaultAdminLogin, type AuthenticateBody } from './authenticate';
export {
  addCertAuthenticator,
  addUpdbAuthenticator,
  authenticators,
  createCertAuthenticator,
  issuedByNetwork,
  updateCredentials,
} from './authenticators';
export { authenticateCert, EXTERNAL_ID_AUTHENTICATOR } from './certAuth';
export { isDisabled } from './disabled';
export { authenticateExtJwt, extJwtVerifierOf, WRONG_AUDIENCE, type VerifiedJwt } from './extJwt';
export { refusalReason } from './authEvents';
export { externalJwtSigners, loginSigners, type LoginSigner } from './externalJwtSigners';
export { disableBody, disableIdentity, enableIdentity } from './lifecycle';
export { decorateMfaEnabled, isTotpEnrolled } from './mfaRecords';
export {
  openSecretKey,
  authenticateMfa,
  createTotpToken,
  disableMfa,
  initiateMfa,
  mfaCodeBody,
  mfaQrCode,
  mfaStatus,
  recoveryCodesLeft,
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
export { checkPasswordRules, hashPassword } from './passwords';
export { ANONYMOUS, type Caller } from '../permissions';
export { withDeadline, type ApiLimits, type ClientRateLimiter } from './rateLimit';
export { loadOrCreateSecretKey, SECRET_KEY_FILE, SecretBox, SecretBoxError } from './secretBox';
export { markUsedOnce } from './usedOnce';
