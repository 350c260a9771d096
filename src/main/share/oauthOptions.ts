import type { ShareCheckData, ShareFieldIssue, ShareOAuthCheck, ShareOAuthData } from '../core/shares/index';
import type { FrontendConfig, ProviderType } from '../frontend/config';
import { shareConfigIssue, type ShareCheckContext } from '../frontend/shareOAuth';

/**
 * What the running frontend offers to shares: `undefined` = no frontend at all; `providers` undefined = a
 * frontend without an `oauth` section. Written to runtime.json so the CLI can check options before it logs in.
 */
export interface FrontendOffer {
  providers?: string[];
  /** each provider's type (which rules it can be checked against) */
  providerTypes?: Record<string, ProviderType>;
  shareDomain?: string;
  /** the host of oauth.endpoint_url */
  oauthHost?: string;
  /** the public listener serves https (custom domains need their certificate) */
  tls?: boolean;
}

export function frontendOffer(config: FrontendConfig | undefined): FrontendOffer | undefined {
  if (!config) return undefined;
  const offer: FrontendOffer = { shareDomain: config.share_domain.toLowerCase(), tls: !!config.tls };
  if (config.oauth) {
    offer.providers = config.oauth.providers.map((p) => p.name);
    offer.providerTypes = Object.fromEntries(config.oauth.providers.map((p) => [p.name, p.type]));
    offer.oauthHost = new URL(config.oauth.endpoint_url).hostname.toLowerCase();
  }
  return offer;
}

function checkContext(offer: FrontendOffer | undefined): ShareCheckContext | undefined {
  if (!offer) return undefined;
  return {
    providers: offer.providers?.map((name) => ({ name, type: offer.providerTypes?.[name] })),
    shareDomain: offer.shareDomain,
    oauthHost: offer.oauthHost,
    tls: offer.tls,
  };
}

/** A share's data (OAuth options, custom domains) against what the running frontend offers; `field` relative to the data. */
export function checkShare(offer: FrontendOffer | undefined, data: ShareCheckData): ShareFieldIssue | undefined {
  return shareConfigIssue(checkContext(offer), data);
}

/** A share's OAuth options against what the running frontend offers, with the offending field (relative to `oauth`) named. */
export function checkShareOAuth(offer: FrontendOffer | undefined, oauth: ShareOAuthData): ShareFieldIssue | undefined {
  const issue = checkShare(offer, { oauth });
  return issue && { field: issue.field.replace(/^oauth\.?/, ''), reason: issue.reason };
}

/** The core's check of share configs (CoreConfig.checkShareOAuth), with the whole-share check as its `share` member. */
export function shareCheckFor(offer: FrontendOffer | undefined): ShareOAuthCheck {
  const check: ShareOAuthCheck = (oauth) => checkShareOAuth(offer, oauth);
  check.share = (data) => checkShare(offer, data);
  return check;
}
