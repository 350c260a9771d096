import type { Logger } from 'pino';
import type { Clock } from '../core/clock';
import type { Core } from '../core/context';
import { createShareResolver, type ShareOAuthCheck } from '../core/shares/index';
import { markUsedOnce } from '../core/ops/index';
import { urlHost } from '../frontend/address';
import type { FrontendConfig } from '../frontend/config';
import type { FrontendHandle } from '../frontend/types';
import { FrontendOverlay } from './frontendOverlay';
import { ensureAdminClientCertificate } from './adminClientCert';
import { frontendOffer, shareCheckFor } from './oauthOptions';
import { removeRuntimeFile, TOKEN_PLACEHOLDER, writeRuntimeFile } from './runtimeFile';

/** Where the frontend answers; `shareUrl` has `{token}` in place of a share token. */
export interface FrontendUrls {
  shareUrl: string;
  /** the public listener itself (GET /health) */
  publicListener: string;
  /** oauth.endpoint_url */
  oauthEndpoint?: string;
  /** the OAuth listener itself (GET /health) */
  oauthListener?: string;
}

/** How share configs are checked against this frontend configuration (CoreConfig.checkShareOAuth). */
export function shareOAuthCheck(frontend: FrontendConfig | undefined): ShareOAuthCheck {
  return shareCheckFor(frontendOffer(frontend));
}

/** Before the API listens: the default admin has a client certificate for local `weft share` commands. */
export async function prepareShares(core: Core): Promise<void> {
  await ensureAdminClientCertificate(core);
}

/**
 * After the API listens: the public frontend (when configured) serving shares from the store, and
 * `<data dir>/runtime.json` for local commands. close() removes the file, then stops the frontend.
 */
export async function startPublicFrontend(
  core: Core,
  opts: {
    frontend: FrontendConfig | undefined;
    dataDir: string;
    apiUrl: string;
    logger: Logger;
    clock: Clock;
    /** the built-in edge router, when it runs: overlay shares are dialed through it */
    router?: { url: string; id: string };
  },
): Promise<{ urls?: FrontendUrls; close(): Promise<void> }> {
  // Overlay shares need both the frontend and the router (see frontendOverlay.ts for the frontend's identity).
  const overlay = opts.frontend && opts.router ? await FrontendOverlay.start(core, opts.router, opts.logger) : undefined;
  let handle: FrontendHandle | undefined;
  try {
    // Loaded only when configured: the frontend's providers pull in openid-client, jose and undici.
    handle = opts.frontend
      ? await (
          await import('../frontend')
        ).startFrontend({
          config: opts.frontend,
          resolver: createShareResolver(core),
          logger: opts.logger,
          now: () => opts.clock.now().getTime(),
          overlay,
          // an OAuth state is single-use across every node on the database
          usedOnce: (key, expiresAtMs, nowMs) => markUsedOnce(core, key, new Date(expiresAtMs), new Date(nowMs)),
        })
      : undefined;
  } catch (err) {
    await overlay?.close();
    throw err;
  }
  let urls: FrontendUrls | undefined;
  if (handle && opts.frontend) {
    const scheme = opts.frontend.tls ? 'https' : 'http';
    urls = {
      shareUrl: `${handle.shareUrl(TOKEN_PLACEHOLDER)}/`,
      publicListener: listenerUrl(scheme, handle.publicAddress),
      oauthEndpoint: opts.frontend.oauth?.endpoint_url.replace(/\/+$/, ''),
      oauthListener: handle.oauthAddress
        ? listenerUrl(opts.frontend.tls && opts.frontend.oauth?.endpoint_url.startsWith('https:') ? 'https' : 'http', handle.oauthAddress)
        : undefined,
    };
  }
  try {
    writeRuntimeFile(opts.dataDir, {
      pid: process.pid,
      api: opts.apiUrl,
      ...(urls ? { frontend: { shareUrl: urls.shareUrl, ...frontendOffer(opts.frontend) } } : {}),
      ...(urls && overlay && opts.router
        ? { overlay: { router: opts.router.url, routerId: opts.router.id, frontendIdentityId: overlay.identityId } }
        : {}),
    });
  } catch (err) {
    await handle?.close();
    await overlay?.close();
    throw err;
  }
  return {
    urls,
    close: async () => {
      removeRuntimeFile(opts.dataDir, opts.apiUrl);
      await handle?.close();
      await overlay?.close();
    },
  };
}

function listenerUrl(scheme: string, address: { host: string; port: number }): string {
  const host = address.host === '0.0.0.0' ? '127.0.0.1' : address.host === '::' ? '::1' : address.host;
  return `${scheme}://${urlHost(host)}:${address.port}`;
}
