// The service wizard's equivalent commands are true: on three fresh networks with the same identities, the wizard
// creates a service on the first, the real `ziti` CLI runs the preview's commands (through a shell, as copied) on
// the second, and the preview's REST requests are replayed on the third; all three end with the same configs,
// service, service policies, service edge router policy and edge router policy (compared by names).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dirname } from 'node:path';
import { startTestApp, ADMIN_PASSWORD, ADMIN_USER, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ConsoleClient } from '../support/consoleTrpc';
import { openzitiTools, run, ZitiCli } from './tools';

interface Net {
  app: TestApp;
  admin: ApiClient;
}
let wizard: Net;
let viaCli: Net;
let viaRest: Net;
let ui: ConsoleClient;
let cli: ZitiCli;

async function fresh(consoleAddress?: string): Promise<Net> {
  const app = await startTestApp(consoleAddress ? { consoleAddress } : {});
  const admin = await app.adminClient();
  await admin.create('/identities', { name: 'laptop-1', type: 'Default', isAdmin: false, roleAttributes: [] });
  await admin.create('/identities', { name: 'phone 2', type: 'Default', isAdmin: false, roleAttributes: ['wiz-users'] });
  await admin.create('/identities', { name: 'server-1', type: 'Default', isAdmin: false, roleAttributes: ['servers'] });
  return { app, admin };
}

beforeAll(async () => {
  // one after the other: PostgreSQL creates one database from its template at a time
  wizard = await fresh('127.0.0.1:0');
  viaCli = await fresh();
  viaRest = await fresh();
  ui = await new ConsoleClient(wizard.app.urls.console!).login(ADMIN_USER, ADMIN_PASSWORD);
  cli = new ZitiCli(openzitiTools().ziti);
  await cli.ok('edge', 'login', viaCli.app.urls.api, '-u', ADMIN_USER, '-p', ADMIN_PASSWORD, '-y');
}, 120_000);
afterAll(async () => {
  for (const n of [wizard, viaCli, viaRest]) {
    await n?.admin.close();
    await n?.app.stop();
  }
});

const all = async (admin: ApiClient, path: string): Promise<any[]> => (await admin.get(`${path}?limit=500`)).body.data;

/** Every entity the wizard makes for `prefix`, with ids replaced by names, so networks can be compared. */
async function snapshot(admin: ApiClient, prefix: string): Promise<Record<string, unknown[]>> {
  const names = new Map<string, string>();
  for (const path of ['/identities', '/edge-routers', '/services', '/configs', '/config-types']) {
    for (const e of await all(admin, path)) names.set(e.id, e.name);
  }
  const roles = (list: string[]) => list.map((r) => (r.startsWith('@') ? `@${names.get(r.slice(1)) ?? `unknown ${r}`}` : r)).sort();
  const mine = async (path: string) => (await all(admin, path)).filter((e) => e.name.startsWith(prefix)).sort((a, b) => a.name.localeCompare(b.name));
  return {
    configs: (await mine('/configs')).map((c) => ({ name: c.name, type: names.get(c.configTypeId), data: c.data })),
    services: (await mine('/services')).map((s) => ({
      name: s.name,
      roleAttributes: [...(s.roleAttributes ?? [])].sort(),
      encryptionRequired: s.encryptionRequired,
      configs: (s.configs as string[]).map((id) => names.get(id)).sort(),
    })),
    servicePolicies: (await mine('/service-policies')).map((p) => ({
      name: p.name,
      type: p.type,
      semantic: p.semantic,
      identityRoles: roles(p.identityRoles),
      serviceRoles: roles(p.serviceRoles),
      postureCheckRoles: roles(p.postureCheckRoles ?? []),
    })),
    serviceEdgeRouterPolicies: (await mine('/service-edge-router-policies')).map((p) => ({
      name: p.name,
      semantic: p.semantic,
      serviceRoles: roles(p.serviceRoles),
      edgeRouterRoles: roles(p.edgeRouterRoles),
    })),
    edgeRouterPolicies: (await mine('/edge-router-policies')).map((p) => ({
      name: p.name,
      semantic: p.semantic,
      identityRoles: roles(p.identityRoles),
      edgeRouterRoles: roles(p.edgeRouterRoles),
    })),
  };
}

/** The preview's REST requests on another network: ids of existing entities mapped by name, `${X_ID}` filled in. */
async function replay(
  from: ApiClient,
  to: ApiClient,
  requests: Array<{ method: string; path: string; body: unknown; saveIdAs: string }>,
): Promise<void> {
  const byName = new Map<string, string>();
  const names = new Map<string, string>();
  for (const path of ['/identities', '/edge-routers']) {
    for (const e of await all(to, path)) byName.set(`${path} ${e.name}`, e.id);
    for (const e of await all(from, path)) names.set(e.id, `${path} ${e.name}`);
  }
  const vars = new Map<string, string>();
  for (const r of requests) {
    expect(r.method).toBe('POST');
    expect(r.path.startsWith('/edge/management/v1/')).toBe(true);
    const text = JSON.stringify(r.body)
      .replace(/\$\{([A-Z_]+)\}/g, (_, v: string) => vars.get(v) ?? `missing ${v}`)
      .replace(/"@([A-Za-z0-9._-]+)"/g, (m, id: string) => (names.has(id) ? `"@${byName.get(names.get(id)!)}"` : m));
    vars.set(r.saveIdAs, await to.create(r.path.slice('/edge/management/v1'.length), JSON.parse(text)));
  }
}

const cases: Array<[string, Record<string, unknown>]> = [
  [
    'router-hosted, dialers by @name and #attribute',
    {
      name: "wiz web's",
      roleAttributes: ['web', 'lab'],
      intercept: { addresses: ['web.lab.internal'], port: 80 },
      host: { kind: 'router', address: '127.0.0.1', port: 3000 },
      dialRoles: ['@laptop-1', '@phone 2', '#wiz-users'],
    },
  ],
  [
    'tunneler-hosted, no encryption, an edge router policy always',
    {
      name: 'wiz db',
      encryptionRequired: false,
      intercept: { addresses: ['db.lab.internal', '10.9.0.0/24'], port: 5432, protocols: ['tcp', 'udp'] },
      host: { kind: 'identity', identityRoles: ['#servers'], address: 'localhost', port: 5432 },
      dialRoles: ['#all'],
      edgeRouterPolicy: 'always',
    },
  ],
  ['SDK-hosted, no intercept', { name: 'wiz-sdk', host: { kind: 'sdk', identityRoles: ['@server-1'] }, dialRoles: ['#wiz-users'] }],
];

describe('the wizard preview’s ziti commands and REST requests', { timeout: 120_000 }, () => {
  for (const [what, body] of cases) {
    it(`${what}: CLI and REST give what the wizard creates`, async () => {
      const preview = await ui.ok('query', 'serviceWizard.preview', { body });
      expect(preview.ok).toBe(true);
      const { cli: commands, rest } = preview.commands as { cli: string[]; rest: any[] };
      expect(commands).toHaveLength(preview.steps.length);
      await ui.ok('mutate', 'serviceWizard.create', { body });

      // the commands as a user pastes them: through a shell, `ziti` on the PATH
      const path = `${dirname(cli.bin)}:${process.env.PATH}`;
      for (const command of commands) {
        const r = await run('sh', ['-c', command], { env: { PATH: path, ZITI_CONFIG_DIR: cli.configDir, HOME: cli.cwd }, cwd: cli.cwd });
        expect(r.code, `${command}\n${r.stdout}\n${r.stderr}`).toBe(0);
      }
      await replay(wizard.admin, viaRest.admin, rest);

      const prefix = String(body.name);
      const expected = await snapshot(wizard.admin, prefix);
      expect(expected.services).toHaveLength(1);
      expect(expected.servicePolicies).toHaveLength(2);
      expect(await snapshot(viaCli.admin, prefix)).toEqual(expected);
      expect(await snapshot(viaRest.admin, prefix)).toEqual(expected);
    });
  }
});
