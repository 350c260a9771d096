import { hkdfSync } from 'node:crypto';

/** Purpose-bound 256-bit keys; the configured secrets are only ever used as HKDF input. */
export interface FrontendKeys {
  sessionSigning: Uint8Array;
  sessionEncryption: Uint8Array;
  stateSigning: Uint8Array;
  stateEncryption: Uint8Array;
}

const SALT = 'weft/frontend/v1';

function derive(secret: string, purpose: string): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', Buffer.from(secret, 'utf8'), SALT, purpose, 32));
}

export function deriveKeys(signingKey: string, encryptionKey: string): FrontendKeys {
  return {
    sessionSigning: derive(signingKey, 'session cookie signing'),
    sessionEncryption: derive(encryptionKey, 'session cookie encryption'),
    stateSigning: derive(signingKey, 'login state signing'),
    stateEncryption: derive(encryptionKey, 'login state encryption'),
  };
}
