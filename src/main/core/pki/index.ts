export { PkiError, type PkiErrorCode } from './errors';
export {
  generateKeyPair,
  importPrivateKey,
  importPublicKey,
  jwsAlgorithmForKey,
  keyAlgorithmOf,
  publicKeyPemOf,
  toPkcs8Pem,
  type KeyAlgorithm,
  type KeyPairPem,
} from './keys';
export {
  createIntermediateCa,
  createRootCa,
  createServerCertificate,
  issueLeafCertificate,
  type CertAndKey,
  type CertificateUsage,
  type CreateIntermediateCaOptions,
  type CreateRootCaOptions,
  type CreateServerCertificateOptions,
  type IssueLeafCertificateOptions,
} from './certificates';
export { certifyCsr, createCsr, signCsr, verifyCsr, type CsrInfo, type SignCsrOptions } from './csr';
export { parseCertificate, type CertificateInfo } from './parse';
export { certificateDer, decodePemOrBase64, fingerprintSha1, peerPems, splitPemBundle, toPem } from './pem';
export { chainToAnchor, isCurrentlyValid, isIssuedBy, verifyChain, type VerifyChainOptions, type VerifyChainResult } from './chain';
export { pkcs7ToPems, toPkcs7Base64, toPkcs7Der } from './pkcs7';
export {
  CA_FILES,
  coverServerHost,
  loadOrCreateControllerPki,
  renewServerCertificateIfDue,
  type ControllerPki,
  type ControllerPkiOptions,
} from './controllerPki';
export { daysLeft, renewsAt, warningLevel, WARNING_DAYS } from './renewal';
export { JwtSigner } from './jwtSigner';
/** @peculiar/x509 with the Reflect polyfill it needs installed (outside pki/, import it from here). */
export { x509 } from './x509Provider';
