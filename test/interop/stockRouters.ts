// Stock OpenZiti routers for the interop tests: an edge router created through the Management API, enrolled by the
// real `ziti router enroll` into its own folder (whose endpoints file comes from the JWT's `ctrls`: the router's own
// config names a dead controller address), run by `ziti router run`.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { tempDir } from '../support/app';
import type { ApiClient } from '../support/client';
import { enrollStockRouter, writeStockRouterConfig, type TunnelMode } from '../../bench/stockRouter';
import { eventually, ToolProcess, type ZitiCli } from './tools';

export interface RouterDir {
  id: string;
  dir: string;
  config: string;
  /** the edge listener SDKs connect to */
  edgePort: number;
  /** where it accepts links from other routers (when asked for) */
  linkPort?: number;
}

import { freePort } from '../support/freePort';
export { freePort };

export async function enrolledRouter(
  ziti: string,
  admin: ApiClient,
  ctrlAddress: string,
  name: string,
  /** `links`: accepts and dials links; `dial`: only dials them */
  opts: { roleAttributes?: string[]; links?: boolean | 'dial'; tunnel?: TunnelMode } = {},
): Promise<RouterDir> {
  const created = await admin.post('/edge-routers', { name, isTunnelerEnabled: !!opts.tunnel, roleAttributes: opts.roleAttributes ?? [] });
  expect(created.status).toBe(201);
  const id = created.body.data.id as string;
  const jwt = (await admin.get(`/edge-routers/${id}`)).body.data.enrollmentJwt as string;
  const dir = tempDir('weft-stock-router-');
  writeFileSync(join(dir, 'router.jwt'), jwt);
  const edgePort = await freePort();
  const linkPort = opts.links === true ? await freePort() : undefined;
  const config = writeStockRouterConfig(dir, edgePort, opts.links === 'dial' ? 'dial' : linkPort, opts.tunnel);
  await enrollStockRouter(ziti, dir, config, join(dir, 'router.jwt'));
  expect(readFileSync(join(dir, 'endpoints.yml'), 'utf8')).toContain(ctrlAddress);
  return { id, dir, config, edgePort, ...(linkPort && { linkPort }) };
}

/** `ziti router run` of the router's config (`options`: e.g. --extend, which asks for new certificates at once). */
export function runRouter(ziti: string, r: RouterDir, options: string[] = []): ToolProcess {
  return new ToolProcess(ziti, ['router', 'run', ...options, r.config], { cwd: r.dir, env: { HOME: r.dir } });
}

/** Stops stock routers (SIGKILL); WEFT_ROUTER_LOG=<prefix> keeps each one's log in <prefix>.<name> for looking into a failure. */
export async function stopRouters(procs: Record<string, ToolProcess | undefined>): Promise<void> {
  for (const [name, p] of Object.entries(procs)) {
    if (!p) continue;
    if (process.env.WEFT_ROUTER_LOG)
      writeFileSync(
        `${process.env.WEFT_ROUTER_LOG}.${name}`,
        p.lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + p.stderr.join(''),
      );
    p.kill('SIGKILL');
    await p.exited;
  }
}

/**
 * The service `echo` (#hosts Bind, #clients Dial) served through one stock router alone (the edge router policies name
 * the role `stock`): enrolled, running, online with its edge listener recorded from its ClientHello (what sessions
 * offer the SDKs).
 */
export async function echoThroughStockRouter(
  ziti: string,
  cli: ZitiCli,
  admin: ApiClient,
  ctrlAddress: string,
  name: string,
): Promise<{ router: RouterDir; proc: ToolProcess }> {
  await cli.hostedService('echo', 'hosts', 'clients');
  await cli.create('edge-router-policy', 'stock-only', '--identity-roles', '#all', '--edge-router-roles', '#stock');
  await cli.create('service-edge-router-policy', 'stock-services', '--service-roles', '#all', '--edge-router-roles', '#stock');
  const router = await enrolledRouter(ziti, admin, ctrlAddress, name, { roleAttributes: ['stock'] });
  const proc = runRouter(ziti, router);
  await eventually(
    async () => (await admin.get(`/edge-routers/${router.id}`)).body.data.supportedProtocols?.tls === `tls://127.0.0.1:${router.edgePort}`,
    60_000,
    'the stock router online with its edge listener',
  );
  return { router, proc };
}
