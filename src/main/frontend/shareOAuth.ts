import { parseDuration } from '../../shared/duration';
import type { FrontendConfig } from './config';
import { checkEmailPattern } from './emailPatterns';
import type { ShareOAuth } from './types';

export const DEFAULT_CHECK_INTERVAL = '3h';

/**
 * Validates a share's OAuth options (--oauth-provider, --oauth-email-address-pattern,
 * --oauth-check-interval) against the frontend configuration.
 */
export function validateShareOAuth(
  config: FrontendConfig | undefined,
  oauth: { provider: string; emailPatterns: string[]; checkInterval?: string },
): ShareOAuth {
  const providers = config?.oauth?.providers;
  if (!providers || providers.length === 0) {
    throw new Error('OAuth is not available: the frontend configuration has no "oauth" section');
  }
  const known = providers.map((p) => p.name);
  if (typeof oauth.provider !== 'string' || !known.includes(oauth.provider)) {
    throw new Error(`unknown OAuth provider "${String(oauth.provider)}" (configured providers: ${known.join(', ')})`);
  }
  const emailPatterns = oauth.emailPatterns ?? [];
  for (const pattern of emailPatterns) checkEmailPattern(pattern);
  let checkIntervalMs: number;
  try {
    checkIntervalMs = parseDuration(oauth.checkInterval ?? DEFAULT_CHECK_INTERVAL);
  } catch (err) {
    throw new Error(`OAuth check interval: ${(err as Error).message}`);
  }
  return { provider: oauth.provider, emailPatterns: [...emailPatterns], checkIntervalMs };
}
