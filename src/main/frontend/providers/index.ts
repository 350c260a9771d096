import type { OAuthConfig } from '../config';
import { createGithubProvider } from './github';
import { createGoogleProvider } from './google';
import { createOidcProvider } from './oidc';
import type { OAuthProvider } from './types';

export type { IdentityNeeds, OAuthProvider, ProviderIdentity, StoredTokens, LoginChecks } from './types';
export { ProviderError } from './types';

const PROVIDER_TIMEOUT_MS = 10_000;

export function callbackUrlFor(endpointUrl: string, providerName: string): string {
  return `${endpointUrl.replace(/\/+$/, '')}/${encodeURIComponent(providerName)}/auth/callback`;
}

export function createProviders(oauth: OAuthConfig): Map<string, OAuthProvider> {
  const providers = new Map<string, OAuthProvider>();
  for (const cfg of oauth.providers) {
    const ctx = { redirectUri: callbackUrlFor(oauth.endpoint_url, cfg.name), timeoutMs: PROVIDER_TIMEOUT_MS };
    switch (cfg.type) {
      case 'idp_a':
        providers.set(cfg.name, createGithubProvider(cfg, ctx));
        break;
      case 'idp_b':
        providers.set(cfg.name, createGoogleProvider(cfg, ctx));
        break;
      case 'oidc':
        providers.set(cfg.name, createOidcProvider(cfg, ctx));
        break;
    }
  }
  return providers;
}
