import type { Server as NetServer } from 'node:net';
import type { Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import type { Core } from './core/context';
import { advertiseNetworkAddress, savedNetworkAddress, type AddressListeners, type BuiltinRouterTls } from './core/dataPlane/index';
import { forwardingListener, replaceCertificate } from './listen';
import type { EdgeRouter } from './router/index';

const WILDCARDS = new Set(['0.0.0.0', '::']);

/**
 * The listeners behind the advertised address (core: dataPlane/networkAddress.ts): the API's and the built-in router's
 * keep their own addresses, and an address the operator chose gets listeners of its own at the same ports, whose
 * connections those servers take. `close()` closes them.
 */
export class NetworkAddressListeners implements AddressListeners {
  readonly api: { host: string; port: number };
  readonly router?: AddressListeners['router'];
  /** extra listeners by host */
  private readonly extra = new Map<string, NetServer[]>();

  constructor(
    private readonly opts: {
      api: { server: TlsServer; host: string; port: number };
      /** the listeners presenting the server certificate (the API's, the control channel's) */
      serverListeners: Array<TlsServer | { replaceCertificate(tls: { keyPem: string; certChainPem: string }): void }>;
      router?: EdgeRouter;
      core: Core;
    },
  ) {
    this.api = { host: opts.api.host, port: opts.api.port };
    const r = opts.router;
    if (r) this.router = { id: r.id, host: r.listenHost, port: r.port, url: () => r.url, online: () => r.status().online };
  }

  async open(host: string): Promise<void> {
    if (this.extra.has(host)) return;
    const opened: NetServer[] = [];
    try {
      if (!covers(this.api.host, host)) opened.push(await forwardingListener(this.opts.api.server, host, this.api.port));
      const r = this.opts.router;
      if (r && !covers(r.listenHost, host)) opened.push(await r.listenAlsoOn(host));
    } catch (e) {
      await closeAll(opened);
      throw e;
    }
    this.extra.set(host, opened);
  }

  async closeOthers(keep: string | undefined): Promise<void> {
    for (const [host, servers] of [...this.extra]) {
      if (host === keep) continue;
      this.extra.delete(host);
      await closeAll(servers);
    }
  }

  present(router: BuiltinRouterTls | undefined): void {
    const pki = this.opts.core.pki;
    const tls = { keyPem: pki.server.keyPem, certChainPem: pki.serverChainPem };
    for (const l of this.opts.serverListeners) {
      if ('replaceCertificate' in l) l.replaceCertificate(tls);
      else replaceCertificate(l, tls);
    }
    if (router) this.opts.router?.replaceCertificate(router);
  }

  advertiseRouter(host: string): void {
    this.opts.router?.advertiseHost(host);
  }

  /** The address chosen in an earlier run, advertised again; a failure (the address is gone) is logged, and loopback stays. */
  async restoreSaved(log: Logger): Promise<void> {
    const core = this.opts.core;
    const host = savedNetworkAddress(core.config.dataDir);
    if (!host) return;
    try {
      await advertiseNetworkAddress(core.system, this, { host });
    } catch (err) {
      log.warn({ err, host }, 'the saved advertised address cannot be used now; advertising the configured one (choose again in the console)');
    }
  }

  close(): Promise<void> {
    return this.closeOthers(undefined);
  }
}

/** Whether a listener bound to `bound` accepts connections to `host` already. */
const covers = (bound: string, host: string) => bound === host || WILDCARDS.has(bound);

async function closeAll(servers: NetServer[]): Promise<void> {
  // no new connections there; the ones it accepted belong to the API's and router's servers (which close them at stop)
  for (const s of servers) if (s.listening) s.close();
}
