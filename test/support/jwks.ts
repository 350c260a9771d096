import { createPrivateKey, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: KeyObject | CryptoKey;
  jwk: JWK;
}

export async function signingKey(kid: string, alg: 'RS256' | 'ES256' = 'RS256'): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** A key from a PEM private key (e.g. of a certificate made with the PKI helpers). */
export function pemSigningKey(kid: string, alg: string, keyPem: string): SigningKey {
  return { kid, alg, privateKey: createPrivateKey(keyPem), jwk: {} };
}

/** Signs a JWT; `iat` defaults to `now` and `exp` to an hour later (seconds since the epoch). */
export function signJwt(key: SigningKey, claims: JWTPayload, now: number): Promise<string> {
  return new SignJWT({ iat: now, exp: now + 3600, ...claims }).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
}

/**
 * A JWKS endpoint on loopback serving `keys` (change them to rotate), counting fetches. `hold()` makes the
 * following fetches wait until the returned function is called.
 */
export class JwksServer {
  keys: JWK[] = [];
  fetches = 0;
  /** set to e.g. 500 to make the endpoint fail */
  status = 200;
  private server!: Server;
  private gate: Promise<void> | undefined;
  private onHeld: (() => void) | undefined;

  async start(): Promise<string> {
    this.server = createServer(async (_req, res) => {
      this.fetches++;
      if (this.gate) {
        this.onHeld?.();
        await this.gate;
      }
      res.statusCode = this.status;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: this.keys }));
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/jwks.json`;
  }

  /** Holds fetches; resolves `held` once a fetch is waiting. */
  hold(): { release: () => void; held: Promise<void> } {
    let release!: () => void;
    this.gate = new Promise<void>((r) => (release = r));
    const held = new Promise<void>((r) => (this.onHeld = r));
    return {
      held,
      release: () => {
        this.gate = undefined;
        this.onHeld = undefined;
        release();
      },
    };
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
