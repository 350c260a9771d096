import { parseDuration } from '../../shared/duration';
import type { FrontendConfig } from './config';
import { checkEmailPattern } from './emailPatterns';
import type { ShareOAuth } from './types';

export const DEFAULT_CHECK_INTERVAL = '3h';

export interface ShareOAuthOptions {
  provider: string;
  emailPatterns?: string[];
  checkInterval?: string;
}

/**
 * The first problem with a share's OAuth options (--oauth-provider, --oauth-email-address-pattern,
 * --oauth-check-interval) given the provider names the frontend offers (undefined = no `oauth` section),
 * naming the offending option field; undefined when they are fine.
 */
export function shareOAuthIssue(providers: string[] | undefined, oauth: ShareOAuthOptions): { field: string; reason: string } | undefined {
  if (!providers?.length) return { field: '', reason: 'OAuth is not available: the frontend configuration has no "oauth" section' };
  if (typeof oauth.provider !== 'string' || !providers.includes(oauth.provider)) {
    return { field: 'provider', reason: `unknown OAuth provider "${String(oauth.provider)}" (configured providers: ${providers.join(', ')})` };
  }
  const patterns = oauth.emailPatterns ?? [];
  for (let i = 0; i < patterns.length; i++) {
    try {
      checkEmailPattern(patterns[i]!);
    } catch (err) {
      return { field: `emailPatterns.${i}`, reason: (err as Error).message };
    }
  }
  try {
    parseDuration(oauth.checkInterval ?? DEFAULT_CHECK_INTERVAL);
  } catch (err) {
    return { field: 'checkInterval', reason: `OAuth check interval: ${(err as Error).message}` };
  }
  return undefined;
}

/** Validates a share's OAuth options against the frontend configuration; throws with a clear message. */
export function validateShareOAuth(config: FrontendConfig | undefined, oauth: ShareOAuthOptions): ShareOAuth {
  const issue = shareOAuthIssue(
    config?.oauth?.providers.map((p) => p.name),
    oauth,
  );
  if (issue) throw new Error(issue.reason);
  return {
    provider: oauth.provider,
    emailPatterns: [...(oauth.emailPatterns ?? [])],
    checkIntervalMs: parseDuration(oauth.checkInterval ?? DEFAULT_CHECK_INTERVAL),
  };
}
