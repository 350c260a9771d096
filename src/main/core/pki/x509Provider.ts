// Import order matters: the shim must be evaluated before @peculiar/x509 (and its tsyringe dependency) loads.
import './reflectShim';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';

// The one piece of module-level state in the PKI: @peculiar/x509's global crypto provider.
x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { x509 };
export const subtle = webcrypto.subtle as unknown as SubtleCrypto;
