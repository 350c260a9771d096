export type PkiErrorCode =
  | 'INVALID_CSR' // malformed, bad signature, missing CN or unacceptable key
  | 'INVALID_CERTIFICATE'
  | 'INVALID_KEY'
  | 'INVALID_ARGUMENT'
  | 'ISSUER_NOT_CA'
  | 'KEY_MISMATCH'
  | 'PARTIAL_PKI' // some CA files of a controller PKI directory are missing
  | 'INVALID_PKI'; // the files are present but inconsistent

export class PkiError extends Error {
  readonly code: PkiErrorCode;

  constructor(code: PkiErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PkiError';
    this.code = code;
  }
}
