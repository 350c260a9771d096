import { perCore, type Core } from '../core';

/** The claims of a session's token, as OpenZiti names them (a "service access" JWT bound to an API session). */
export interface ServiceAccessClaims {
  iss: string;
  sub: string;
  aud: string[];
  jti: string;
  iat: number;
  z_t: 's';
  z_asid: string;
  z_iid: string;
  z_st: string;
}

/** Signs and verifies session tokens with the controller's JWT key (core.jwt; synchronous, so usable inside a transaction). */
export class ServiceAccessTokens {
  constructor(private readonly core: Core) {}

  sign(claims: Omit<ServiceAccessClaims, 'iss' | 'aud' | 'z_t'>): string {
    return this.core.jwt.sign({ iss: this.core.config.apiPublicUrl, aud: ['openziti'], z_t: 's', ...claims });
  }

  /** The claims of a valid token of ours, or undefined. */
  verify(token: string): ServiceAccessClaims | undefined {
    const claims = this.core.jwt.verify(token) as ServiceAccessClaims | undefined;
    return claims?.z_t === 's' && Array.isArray(claims.aud) && claims.aud.includes('openziti') ? claims : undefined;
  }
}

/** Signs and verifies the JWTs of a core's Dial/Bind sessions. */
export const serviceAccessTokensOf = perCore((core) => new ServiceAccessTokens(core));
