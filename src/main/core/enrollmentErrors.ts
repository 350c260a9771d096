import { ApiError, type FieldCause } from './errors';

/** The enrollment and certificate errors of OpenZiti's API (same codes and statuses). */
const make = (code: string, status: number, message: string) => (cause?: FieldCause) => new ApiError(code, status, message, cause);

export const invalidEnrollmentToken = make('INVALID_ENROLLMENT_TOKEN', 400, 'The supplied token is not valid');
export const enrollmentExpired = make('ENROLLMENT_EXPIRED', 400, 'The window for this enrollment has expired');
export const couldNotProcessCsr = make('COULD_NOT_PROCESS_CSR', 400, 'The supplied csr could not be processed');
export const missingCsr = make('MISSING_OR_INVALID_CSR', 400, 'The supplied enrollment request is missing or contains an invalid CSR');
export const invalidEnrollMethod = make('INVALID_ENROLL_METHOD', 400, 'The supplied enrollment method is not valid');
export const caNoLongerValid = make('ENROLLMENT_CA_NOT_VALID', 400, 'The CA tied to the supplied token is no longer valid');
export const noValidCas = make('ENROLLMENT_NO_VALID_CAS', 400, 'No CAs are valid for this request');
export const certFailedValidation = make('CERT_FAILED_VALIDATION', 400, 'certificate failed to validate against CA');
export const certInUse = make('CERT_IN_USE', 409, 'The certificate supplied is already associated with another identity');
export const missingCertClaim = make('MISSING_CERT_CLAIM', 400, 'The certificate is expected to contain and externalId, which was not found');
export const enrollmentExists = (method: string) =>
  new ApiError('ENROLLMENT_EXISTS', 409, 'An enrollment of the same method is already outstanding for this identity', {
    field: 'method',
    reason: 'enrollment of same method exists',
    value: method,
  });
export const identityAlreadyEnrolled = make('ENROLLMENT_IDENTITY_ALREADY_ENROLLED', 409, 'An identity with the same external id is already enrolled');
export const enrollmentNotAllowed = make(
  'INVALID_ENROLLMENT_NOT_ALLOWED',
  400,
  'The requested enrollment is not allowed by the token issuer or auth policy',
);
export const authenticatorMethodMax = make(
  'MAX_AUTHENTICATOR_METHODS_REACHED',
  409,
  'The identity already has the maximum authenticators of the specified method',
);
export const routerCommonNameInvalid = make(
  'EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID',
  400,
  "The router's client CSR must have a common name that matches the router's id",
);

export const caAlreadyVerified = make('CA_ALREADY_VERIFIED', 409, 'CA has already been verified');
export const expectedPemCertificate = make('EXPECTED_PEM_CERTIFICATE', 400, "expected PEM block type 'CERTIFICATE'");
export const invalidCommonName = make('INVALID_COMMON_NAME', 400, 'The common name of the supplied certificate is invalid');
export const certificateFailedValidation = make(
  'CERTIFICATE_FAILED_VALIDATION',
  400,
  "The supplied certificate failed to validate against the CA's certificate chain",
);
export const certificateIsNotCa = make('CERTIFICATE_IS_NOT_CA', 400, 'Leading certificate is not a CA');
export const invalidCertPem = make(
  'INVALID_CERT_PEM',
  400,
  'the supplied certificate PEM is either invalid or contains the incorrect number of certificates',
);

export const authenticatorCannotBeUpdated = make('CAN_NOT_UPDATE_AUTHENTICATOR', 409, 'The authenticator cannot be updated in this fashion');
export const invalidClientCert = make('INVALID_CLIENT_CERT', 400, 'The provided client certificate is invalid');
