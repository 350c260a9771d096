import type { ShareFieldIssue, ShareOAuthData } from '../core/shares/index';
import type { FrontendConfig } from '../frontend/config';
import { shareOAuthIssue } from '../frontend/shareOAuth';

/**
 * What the running frontend offers to shares: `undefined` = no frontend at all; `providers` undefined = a
 * frontend without an `oauth` section. Written to runtime.json so the CLI can check options before it logs in.
 */
export interface FrontendOffer {
  providers?: string[];
}

export function frontendOffer(config: FrontendConfig | undefined): FrontendOffer | undefined {
  return config ? { providers: config.oauth?.providers.map((p) => p.name) } : undefined;
}

/** A share's OAuth options against what the running frontend offers, with the offending field named. */
export function checkShareOAuth(offer: FrontendOffer | undefined, oauth: ShareOAuthData): ShareFieldIssue | undefined {
  if (!offer) {
    return {
      field: '',
      reason: 'OAuth is not available: this Weft has no frontend configured (add a "frontend" section with "oauth" to the configuration)',
    };
  }
  return shareOAuthIssue(offer.providers, oauth);
}
