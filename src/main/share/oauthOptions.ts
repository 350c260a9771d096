import { parseDuration } from '../../shared/duration';
import type { ShareFieldIssue, ShareOAuthData } from '../core/shares';
import type { FrontendConfig } from '../frontend/config';
import { checkEmailPattern } from '../frontend/emailPatterns';

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

/**
 * A share's OAuth options against what the frontend offers (the rules of the frontend's validateShareOAuth,
 * with the offending field named): a configured provider, valid email globs, a positive check interval.
 */
export function checkShareOAuth(offer: FrontendOffer | undefined, oauth: ShareOAuthData): ShareFieldIssue | undefined {
  if (!offer) {
    return { field: '', reason: 'OAuth is not available: this Weft has no frontend configured (add a "frontend" section with "oauth" to the configuration)' };
  }
  if (!offer.providers) return { field: '', reason: 'OAuth is not available: the frontend configuration has no "oauth" section' };
  if (!offer.providers.includes(oauth.provider)) {
    return { field: 'provider', reason: `unknown OAuth provider "${oauth.provider}" (configured providers: ${offer.providers.join(', ')})` };
  }
  const patterns = oauth.emailPatterns ?? [];
  for (let i = 0; i < patterns.length; i++) {
    try {
      checkEmailPattern(patterns[i]!);
    } catch (err) {
      return { field: `emailPatterns.${i}`, reason: (err as Error).message };
    }
  }
  if (oauth.checkInterval !== undefined) {
    try {
      parseDuration(oauth.checkInterval);
    } catch (err) {
      return { field: 'checkInterval', reason: (err as Error).message };
    }
  }
  return undefined;
}
