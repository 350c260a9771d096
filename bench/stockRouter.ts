// A stock OpenZiti router (`ziti router run`) for Weft: its config file (edge listener on loopback; the controller
// comes from the endpoints file `ziti router enroll` writes from the enrollment JWT's ctrls, so the config's own
// ctrl endpoint names a dead address), enrolled with the real `ziti router enroll`. Used by the bench and the tests.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** How a tunneler-enabled router's own tunnel runs: hosting only, or also proxying services on local ports (name:port). */
export type TunnelMode = { mode: 'host' } | { mode: 'proxy'; services: string[] };

/**
 * With a link port the router accepts links from other routers there (and dials theirs), with `dial` it only dials
 * theirs; with a tunnel mode it runs its tunnel binding (the router must be created tunneler-enabled).
 */
export function writeStockRouterConfig(dir: string, edgePort: number, linkPort?: number | 'dial', tunnel?: TunnelMode): string {
  const config = join(dir, 'router.yml');
  writeFileSync(
    config,
    [
      'v: 3',
      'identity:',
      `  cert: ${join(dir, 'client.cert')}`,
      `  server_cert: ${join(dir, 'server.chain.cert')}`,
      `  key: ${join(dir, 'router.key')}`,
      `  ca: ${join(dir, 'ca.cert')}`,
      'ctrl:',
      '  endpoint: tls:127.0.0.1:1',
      'listeners:',
      '  - binding: edge',
      `    address: tls:127.0.0.1:${edgePort}`,
      '    options:',
      `      advertise: 127.0.0.1:${edgePort}`,
      ...(tunnel
        ? [
            '  - binding: tunnel',
            '    options:',
            `      mode: ${tunnel.mode}`,
            ...(tunnel.mode === 'proxy' ? [`      services: [${tunnel.services.map((x) => JSON.stringify(x)).join(', ')}]`] : []),
          ]
        : []),
      ...(linkPort ? ['link:'] : []),
      ...(typeof linkPort === 'number'
        ? ['  listeners:', '    - binding: transport', `      bind: tls:127.0.0.1:${linkPort}`, `      advertise: tls:127.0.0.1:${linkPort}`]
        : []),
      ...(linkPort ? ['  dialers:', '    - binding: transport'] : []),
      'edge:',
      '  csr:',
      '    country: US',
      '    province: NC',
      '    locality: Charlotte',
      '    organization: Weft',
      '    organizationalUnit: Interop',
      '    sans:',
      '      dns: [localhost]',
      '      ip: ["127.0.0.1"]',
      '',
    ].join('\n'),
  );
  return config;
}

/** `ziti router enroll` of a config with a JWT file (asynchronous: the controller may run in this process). */
export function enrollStockRouter(ziti: string, dir: string, config: string, jwtFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(ziti, ['router', 'enroll', config, '--jwt', jwtFile], { cwd: dir, env: { ...process.env, HOME: dir } });
    const out: Buffer[] = [];
    p.stdout.on('data', (d: Buffer) => out.push(d));
    p.stderr.on('data', (d: Buffer) => out.push(d));
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ziti router enroll exited ${code}\n${Buffer.concat(out).toString()}`))));
  });
}
