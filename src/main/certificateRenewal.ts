import type { Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import type { Core } from './core/context';
import { renewBuiltinRouterIfDue } from './core/dataPlane/index';
import {
  certificateInventory,
  renewServerCertificate,
  reportCertificateWarnings,
  requestDueExtensions,
  type CertificateEntry,
} from './core/ops/index';
import { replaceCertificate } from './listen';

/** How often the certificates are checked (against the core's clock) while Weft runs. */
export const CHECK_INTERVAL_MS = 60 * 60_000;

type TlsPair = { keyPem: string; certChainPem: string };

export interface CertificateCheck {
  /** this node's TLS server certificate was renewed (API and control channel listeners present it now) */
  serverRenewed: boolean;
  /** the built-in router's certificates were renewed (its listener presents the new one now) */
  routerRenewed: boolean;
  /** identities' certificate authenticators newly flagged for extension */
  extensionsRequested: number;
  /** certificates that reached a warning threshold (30, 7, 1 days; expired) at this check, logged once each */
  warnings: CertificateEntry[];
}

export interface CertificateLifecycle {
  /** Runs a check now, after any check under way (one at a time, each at the clock's time when it starts). */
  check(): Promise<CertificateCheck>;
  stop(): Promise<void>;
}

/**
 * Keeps Weft's own certificates current while it runs (README, Certificate lifecycle): at start and then every
 * CHECK_INTERVAL_MS, by the core's clock, it renews this node's TLS server certificate and the built-in router's when
 * due and swaps them into the live listeners (tls.Server#setSecureContext: no restart, open connections untouched),
 * flags identities' certificates for extension, and logs each warning threshold once. A failed check is logged and
 * tried again at the next one.
 */
export function startCertificateLifecycle(opts: {
  core: Core;
  log: Logger;
  /** the listeners presenting the server certificate (the API's, the control channel's) */
  serverListeners: Array<TlsServer | { replaceCertificate(tls: TlsPair): void }>;
  router?: { replaceCertificate(tls: TlsPair): void };
  intervalMs?: number;
}): CertificateLifecycle {
  const { core, log } = opts;
  /** the server certificate the listeners present: the core's, once a renewal was taken */
  let presented = core.pki.server.certPem;
  let last: Promise<unknown> = Promise.resolve();
  const presentCoreCertificate = () => {
    const pki = core.pki;
    if (pki.server.certPem === presented) return;
    const tls = { keyPem: pki.server.keyPem, certChainPem: pki.serverChainPem };
    for (const l of opts.serverListeners) {
      if ('replaceCertificate' in l) l.replaceCertificate(tls);
      else replaceCertificate(l, tls);
    }
    presented = pki.server.certPem;
  };
  const run = async (): Promise<CertificateCheck> => {
    let server: boolean;
    try {
      server = await renewServerCertificate(core);
    } finally {
      // the listeners follow the core's certificate as soon as it has it, even when what comes after failed
      presentCoreCertificate();
    }
    const router = opts.router ? await renewBuiltinRouterIfDue(core) : undefined;
    if (router) {
      opts.router!.replaceCertificate(router);
      log.info({ router: router.name }, 'built-in router certificates renewed');
    }
    const extensionsRequested = await requestDueExtensions(core);
    if (extensionsRequested) log.info({ count: extensionsRequested }, 'identity certificates flagged for extension');
    const warnings = reportCertificateWarnings(core, await certificateInventory(core));
    return { serverRenewed: server, routerRenewed: !!router, extensionsRequested, warnings };
  };
  const check = (): Promise<CertificateCheck> => {
    const next = last.catch(() => undefined).then(run);
    last = next;
    return next;
  };
  const timer = setInterval(() => {
    check().catch((err: unknown) => log.warn({ err }, 'certificate check failed'));
  }, opts.intervalMs ?? CHECK_INTERVAL_MS);
  timer.unref();
  return {
    check,
    stop: async () => {
      clearInterval(timer);
      await last.catch(() => undefined);
    },
  };
}
