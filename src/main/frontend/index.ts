import { createHash } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
import { Agent } from 'undici';
import { parseBindAddress } from './address';
import { describeConfigIssues, frontendConfigSchema } from './config';
import { listen, type Listener } from './listener';
import { createOAuthHandler } from './oauthServer';
import { OAuthRuntime } from './oauthRuntime';
import { OverlayProxy } from './overlay';
import { createPublicHandlers } from './publicServer';
import type { Logger } from 'pino';
import type { FrontendHandle, ShareResolver, StartFrontendOptions } from './types';

export { frontendConfigSchema, describeConfigIssues, PROVIDER_TYPES } from './config';
export type { FrontendConfig, OAuthConfig, ProviderConfig, ProviderType } from './config';
export { validateShareOAuth, DEFAULT_CHECK_INTERVAL } from './shareOAuth';
export type {
  AccessRules,
  AuthIdentity,
  ClaimRule,
  FrontendHandle,
  OverlayDialer,
  PathRule,
  PublicShare,
  ShareOAuth,
  ShareResolver,
  StartFrontendOptions,
} from './types';

/** Starts the public share listener and, with an `oauth` section, the OAuth listener. */
export async function startFrontend(opts: StartFrontendOptions): Promise<FrontendHandle> {
  const parsed = frontendConfigSchema.safeParse(opts.config);
  if (!parsed.success) throw new Error(`invalid frontend configuration:\n${describeConfigIssues(parsed.error).join('\n')}`);
  const config = parsed.data;
  const logger = opts.logger.child({ component: 'frontend' });
  const now = opts.now ?? Date.now;
  const publicUrl = config.public_url ? new URL(config.public_url) : undefined;
  const publicScheme: 'http' | 'https' = publicUrl ? (publicUrl.protocol === 'https:' ? 'https' : 'http') : config.tls ? 'https' : 'http';
  const shareDomain = config.share_domain.toLowerCase();

  const oauth = config.oauth ? new OAuthRuntime(config.oauth, publicScheme === 'https', logger, now, opts.usedOnce) : undefined;
  if (oauth && publicScheme === 'https' && new URL(oauth.endpointUrl).protocol !== 'https:') {
    logger.warn('oauth.endpoint_url is http while shares are https: browsers will refuse the Secure session cookie');
  }
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connect: { timeout: 10_000 } });
  const overlay = opts.overlay ? new OverlayProxy(opts.overlay) : undefined;
  const listeners: Listener[] = [];
  const closeAll = async () => {
    await Promise.allSettled(listeners.map((l) => l.close()));
    await dispatcher.destroy().catch(() => undefined);
    await overlay?.close();
  };

  try {
    let publicListener!: Listener;
    const handlers = createPublicHandlers({
      shareDomain,
      publicScheme,
      resolver: opts.resolver,
      logger,
      oauth,
      dispatcher,
      overlay,
      isOwnCookie: oauth ? (name) => oauth.sessions.isOwnCookie(name) : () => false,
      trackSocket: (s) => publicListener.track(s),
    });
    publicListener = await listen({
      bind: parseBindAddress(config.bind_address),
      tls: config.tls,
      sni: config.tls ? customDomainContexts(opts.resolver, shareDomain, logger) : undefined,
      onRequest: (req, res) => void handlers.request(req, res),
      onUpgrade: (req, socket, head) => void handlers.upgrade(req, socket, head),
    });
    listeners.push(publicListener);

    let oauthListener: Listener | undefined;
    if (oauth && config.oauth) {
      const handle = createOAuthHandler({ oauth, resolver: opts.resolver, shareDomain, logger });
      oauthListener = await listen({
        bind: parseBindAddress(config.oauth.bind_address),
        tls: config.tls && new URL(oauth.endpointUrl).protocol === 'https:' ? config.tls : undefined,
        onRequest: (req, res) => void handle(req, res),
      });
      listeners.push(oauthListener);
    }

    const shareScheme = publicUrl ? publicUrl.protocol.replace(/:$/, '') : publicScheme;
    const sharePort = publicUrl ? publicUrl.port : String(publicListener.address.port);
    const defaultPort = shareScheme === 'https' ? '443' : '80';
    const portSuffix = sharePort && sharePort !== defaultPort ? `:${sharePort}` : '';
    logger.info({ public: publicListener.address, oauth: oauthListener?.address }, 'frontend listening');

    return {
      shareUrl: (token: string) => `${shareScheme}://${token}.${shareDomain}${portSuffix}`,
      publicAddress: publicListener.address,
      oauthAddress: oauthListener?.address,
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

const MAX_CONTEXTS = 256;

/**
 * SNI for shares' custom domains: the share's own certificate and key (domainTls) for a server name that is one of
 * its domains; the listener's certificate for anything else. Secure contexts are kept per certificate.
 */
function customDomainContexts(
  resolver: ShareResolver,
  shareDomain: string,
  logger: Logger,
): (servername: string) => Promise<SecureContext | undefined> {
  const contexts = new Map<string, SecureContext>();
  return async (servername) => {
    const host = servername.toLowerCase().replace(/\.$/, '');
    if (!resolver.resolveDomain || host === shareDomain || host.endsWith(`.${shareDomain}`)) return undefined;
    const share = await resolver.resolveDomain(host);
    if (!share?.domainTls || !(share.domains ?? []).includes(host)) return undefined;
    const key = createHash('sha256').update(share.domainTls.cert).update('\0').update(share.domainTls.key).digest('base64url');
    let context = contexts.get(key);
    if (!context) {
      try {
        context = createSecureContext({ cert: share.domainTls.cert, key: share.domainTls.key });
      } catch (err) {
        logger.warn({ share: share.token, domain: host, err: (err as Error).message }, 'custom domain certificate unusable; serving the default one');
        return undefined;
      }
      if (contexts.size >= MAX_CONTEXTS) contexts.delete(contexts.keys().next().value!);
      contexts.set(key, context);
    }
    return context;
  };
}
