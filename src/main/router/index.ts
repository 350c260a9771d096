import { join } from 'node:path';
import type { Logger } from 'pino';
import type { WeftConfig } from '../config';
import { builtinRouterClientTls, provisionBuiltinRouter, type Core } from '../core/dataPlane/index';
import { parseDuration } from '../../shared/duration';
import { EdgeRouter } from './edgeRouter';
import { splitTlsAddress } from '../listen';

export { EdgeRouter, type RouterStatus } from './edgeRouter';

export const DEFAULT_LISTENER = 'tls:127.0.0.1:3022';

/**
 * Where the router listens (the default address, when not configured, falls back to a free port if taken) and what
 * it advertises: the configured host[:port], else the listener's host (127.0.0.1 for a wildcard) and actual port.
 */
export function routerAddresses(config: WeftConfig['router']): {
  listen: { host: string; port: number; isDefault: boolean };
  advertise: { host: string; port?: number };
} {
  const listen = { ...splitTlsAddress(config.listener ?? DEFAULT_LISTENER), isDefault: config.listener === undefined };
  if (config.advertise) {
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(config.advertise)!;
    return { listen, advertise: { host: m[1]!.replace(/^\[|\]$/g, ''), port: m[2] ? Number(m[2]) : undefined } };
  }
  return { listen, advertise: { host: listen.host === '0.0.0.0' || listen.host === '::' ? '127.0.0.1' : listen.host } };
}

/** Provisions (first start: creates and enrolls) Weft's own edge router and starts its listener. */
export async function startBuiltinRouter(core: Core, config: WeftConfig['router'], dataDir: string, log: Logger): Promise<EdgeRouter> {
  const { listen, advertise } = routerAddresses(config);
  const dir = join(dataDir, 'router');
  const tls = await provisionBuiltinRouter(core, { name: config.name, advertisedHost: advertise.host, dir });
  const router = new EdgeRouter({
    core,
    id: tls.id,
    name: tls.name,
    listen,
    advertise,
    tls,
    heartbeatMs: parseDuration(config.heartbeat_interval),
    ...(config.link_listener && { linkListener: { listen: splitTlsAddress(config.link_listener), advertiseHost: advertise.host } }),
    clientTls: () => builtinRouterClientTls(dir),
    log,
  });
  await router.start();
  return router;
}
