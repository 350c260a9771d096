import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { openzitiDir, openzitiStamp } from '../scripts/openziti-stamp.mjs';
import { pkcs7ToPems } from '../src/main/core/pki/index';
import { resolveRoles, type EntityKind, type ModelPlan, type PolicyPlan } from './model';
import { freePort } from '../test/support/freePort';

/** The command that builds the pinned OpenZiti programs (scripts/openziti-tools.sh). */
export const INSTALL_COMMAND = 'npm run openziti-tools';

/** The pinned `ziti` CLI, or why it is not there. */
export function zitiBinary(): { bin: string } | { missing: string } {
  const dir = openzitiDir();
  const bin = join(dir, 'ziti');
  if (!existsSync(bin)) return { missing: `${bin} is missing` };
  const stamp = existsSync(join(dir, 'stamp')) ? readFileSync(join(dir, 'stamp'), 'utf8').trim() : '';
  if (stamp !== openzitiStamp()) return { missing: `${dir} is out of date` };
  return { bin };
}

export interface OpenZitiController {
  origin: string;
  /** the controller's CA bundle (PEM), read from /.well-known/est/cacerts */
  ca: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The real OpenZiti controller: `ziti edge quickstart` on loopback (controller only, or with its own router listening
 * for SDKs on `routerPort`), with its own home folder; ready once its Client API answers /version.
 */
export async function startOpenZiti(bin: string, home: string, adminPassword: string, routerPort?: number): Promise<OpenZitiController> {
  mkdirSync(home, { recursive: true });
  const port = await freePort();
  const router = routerPort ? ['--router-address', '127.0.0.1', '--router-port', String(routerPort)] : ['--no-router'];
  const proc = spawn(
    bin,
    ['edge', 'quickstart', '--home', home, '--ctrl-address', '127.0.0.1', '--ctrl-port', String(port), ...router, '-p', adminPassword],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, HOME: home, ZITI_CONFIG_DIR: join(home, 'cli') },
    },
  );
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr = (stderr + String(d)).slice(-4000)));
  const origin = `https://127.0.0.1:${port}`;
  const insecure = new Agent({ connect: { rejectUnauthorized: false } });
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await once(proc, 'exit');
    clearTimeout(timer);
  };
  try {
    for (let i = 0; ; i++) {
      if (proc.exitCode !== null) throw new Error(`ziti edge quickstart exited with ${proc.exitCode}: ${stderr}`);
      try {
        const res = await request(`${origin}/.well-known/est/cacerts`, { dispatcher: insecure });
        const body = await res.body.text();
        if (res.statusCode === 200) {
          const ca = pkcs7ToPems(body.replace(/\s+/g, '')).join('\n');
          return { origin, ca, proc, stop };
        }
      } catch {
        // not listening yet
      }
      if (i > 600) throw new Error(`the OpenZiti controller did not answer within a minute: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    await stop();
    throw e;
  } finally {
    await insecure.close();
  }
}

/** Runs `work` over `items` with at most `parallel` in flight, in order of start. */
async function inParallel<T, R>(items: T[], parallel: number, work: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]!, i);
      }
    }),
  );
  return out;
}

export interface OpenZitiSeeded {
  ids: Record<EntityKind, string[]>;
  sampleIdentity: string;
  sampleUsername: string;
  seconds: number;
  /** seconds per phase (services, identities, edge routers, policies) */
  phases: Record<string, number>;
}

/**
 * Seeds a model plan through OpenZiti's Management API with 16 requests in flight (what the controller handles best
 * on a small machine; 4 for policies, each of which the controller evaluates against every entity): services,
 * identities, edge routers, then the policies, and a password for the sampled identity. Reports each phase's time.
 */
export async function seedOpenZiti(
  ctrl: OpenZitiController,
  admin: { username: string; password: string },
  plan: ModelPlan,
  userPassword: string,
): Promise<OpenZitiSeeded> {
  const started = process.hrtime.bigint();
  const phases: Record<string, number> = {};
  const agent = new Agent({ connections: 16, connect: { ca: ctrl.ca } });
  try {
    const call = async (method: string, path: string, body?: unknown, token?: string) => {
      for (let attempt = 0; ; attempt++) {
        const res = await request(`${ctrl.origin}/edge/management/v1${path}`, {
          method: method as 'POST',
          headers: { 'content-type': 'application/json', ...(token ? { 'zt-session': token } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
          dispatcher: agent,
        });
        const text = await res.body.text();
        // the controller sheds load with 429 / 503 when its command queue is full: wait and retry (for minutes:
        // a policy over tens of thousands of identities takes it a while)
        if ((res.statusCode === 429 || res.statusCode === 503) && attempt < 600) {
          await new Promise((r) => setTimeout(r, Math.min(1000, 50 * (attempt + 1))));
          continue;
        }
        // a create refused with 503 may still have been applied (the controller timed the request out, not the
        // command): a retry then finds the name taken, and the entity is looked up by name
        const name = (body as { name?: unknown } | undefined)?.name;
        if (res.statusCode === 400 && attempt > 0 && typeof name === 'string' && text.includes('name must be unique')) {
          const found = await request(`${ctrl.origin}/edge/management/v1${path}?filter=${encodeURIComponent(`name = "${name}"`)}`, {
            headers: { 'zt-session': token! },
            dispatcher: agent,
          });
          const list = (await found.body.json()) as { data: Array<{ id: string }> };
          if (list.data.length === 1) return { data: { id: list.data[0]!.id } };
        }
        if (res.statusCode >= 300) throw new Error(`OpenZiti ${method} ${path}: ${res.statusCode} ${text.slice(0, 500)}`);
        return JSON.parse(text) as { data: { id: string; token?: string } };
      }
    };
    const token = (await call('POST', '/authenticate?method=password', admin)).data.token!;
    const create = (path: string, bodies: object[], parallel = 16) =>
      inParallel(bodies, parallel, async (b) => (await call('POST', path, b, token)).data.id);
    const phase = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      const out = await work();
      phases[name] = (performance.now() - t0) / 1000;
      console.log(`  OpenZiti: ${name} in ${phases[name]!.toFixed(1)} s`);
      return out;
    };
    const ids: Record<EntityKind, string[]> = {
      service: await phase('services', () =>
        create(
          '/services',
          plan.services.map((s) => ({ ...s, encryptionRequired: true })),
        ),
      ),
      identity: await phase('identities', () =>
        create(
          '/identities',
          plan.identities.map((i) => ({ ...i, type: 'Device', isAdmin: false })),
        ),
      ),
      router: await phase('edge routers', () => create('/edge-routers', plan.routers)),
    };
    const policy = (p: PolicyPlan, extra: object = {}) => ({ name: p.name, semantic: 'AnyOf', ...extra, ...resolveRoles(p.roles, ids) });
    await phase('policies', async () => {
      await create(
        '/service-policies',
        plan.servicePolicies.map((p) => policy(p, { type: 'Dial', postureCheckRoles: [] })),
        4,
      );
      await create(
        '/edge-router-policies',
        plan.edgeRouterPolicies.map((p) => policy(p)),
        4,
      );
      await create(
        '/service-edge-router-policies',
        plan.serviceEdgeRouterPolicies.map((p) => policy(p)),
        4,
      );
    });
    const sampleUsername = `bench-${plan.sample}`;
    await call(
      'POST',
      '/authenticators',
      { method: 'updb', identityId: ids.identity[plan.sample], username: sampleUsername, password: userPassword },
      token,
    );
    return { ids, sampleIdentity: ids.identity[plan.sample]!, sampleUsername, seconds: Number(process.hrtime.bigint() - started) / 1e9, phases };
  } finally {
    await agent.close();
  }
}
