// Every registered type with a role kind (src/main/core/registry.ts) reaches everything that must know it: its
// table, the REST role-attribute listing and roleFilter, the console's resource registry and role preview, and the
// data integrity check of the role attribute index.
import { describe, expect, it } from 'vitest';
import { buildRoutes } from '../../src/main/api/routes/index';
import { CONSOLE_RESOURCES } from '../../src/main/console/registry';
import { ROLE_KIND_NAMES, ROLE_KINDS, type RoleKind } from '../../src/main/core/kinds';
import { REGISTRY, ROLE_KIND_DEFS } from '../../src/main/core/registry';
import { useTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ConsoleClient } from '../support/consoleTrpc';

let app: TestApp;
let admin: ApiClient;
useTestApp(
  (a, c) => {
    app = a;
    admin = c;
  },
  { consoleAddress: '127.0.0.1:0' },
);

const withRoleKind = Object.values(REGISTRY as Record<string, { def: { roleKind?: string; entity: string; table: string } }>).filter(
  (e) => e.def.roleKind,
);

describe('role kinds', () => {
  it('each is claimed by one registry entry, with its table, REST listings and console entry', () => {
    expect(withRoleKind.map((e) => e.def.roleKind).sort()).toEqual([...ROLE_KIND_NAMES].sort());
    const routes = buildRoutes(app.core)
      .filter((r) => r.method === 'GET')
      .map((r) => r.path);
    for (const { def } of withRoleKind) {
      const kind = def.roleKind as RoleKind;
      expect(ROLE_KIND_DEFS[kind], kind).toBe(def);
      expect(def.table, kind).toBe(ROLE_KINDS[kind].table);
      expect(def.entity, kind).toBe(ROLE_KINDS[kind].resource);
      expect(routes, kind).toContain(`/${kind}-role-attributes`);
      expect(routes, kind).toContain(`/${def.entity}`);
      const consoleEntry = (CONSOLE_RESOURCES as Record<string, { def: unknown; roleKind?: string }>)[def.entity];
      expect(consoleEntry?.def, kind).toBe(def);
      expect(consoleEntry?.roleKind, kind).toBe(kind);
    }
    // and nothing else claims a role kind in the console
    const claimed = Object.values(CONSOLE_RESOURCES as Record<string, { roleKind?: string }>)
      .map((e) => e.roleKind)
      .filter(Boolean);
    expect(claimed.sort()).toEqual([...ROLE_KIND_NAMES].sort());
  });

  it('each lists its role attributes and filters by roles over REST and in the console', async () => {
    const ui = await new ConsoleClient(app.urls.console!).login('admin', 'admin-password-1');
    for (const { def } of withRoleKind) {
      const kind = def.roleKind as RoleKind;
      const listed = await admin.get(`/${kind}-role-attributes`);
      expect(listed.status, kind).toBe(200);
      const filtered = await admin.get(`/${def.entity}?roleFilter=%23no-such-attribute`);
      expect(filtered.status, kind).toBe(200);
      expect(filtered.body.data, kind).toEqual([]);
      expect(await ui.ok('query', 'roles.attributes', { kind }), kind).toBeInstanceOf(Array);
      const page = await ui.ok('query', 'resources.list', { resource: def.entity, roleFilter: ['#no-such-attribute'] });
      expect(page.data, kind).toEqual([]);
      const all = await ui.ok('query', 'resources.list', { resource: def.entity, roleFilter: ['#all'] });
      expect(all.meta.pagination.totalCount, kind).toBe((await admin.get(`/${def.entity}`)).body.meta.pagination.totalCount);
    }
  });

  it('each leaves no role class membership behind when one of its entities is deleted', async () => {
    const bodies: Record<string, object> = {
      identity: { name: 'rk-del-identity', type: 'Device', isAdmin: false, roleAttributes: ['rk-del'] },
      service: { name: 'rk-del-service', encryptionRequired: true, roleAttributes: ['rk-del'] },
      'edge-router': { name: 'rk-del-router', roleAttributes: ['rk-del'] },
      'posture-check': { name: 'rk-del-check', typeId: 'MFA', roleAttributes: ['rk-del'] },
    };
    for (const { def } of withRoleKind) {
      const kind = def.roleKind as RoleKind;
      const created = await admin.post(`/${def.entity}`, bodies[kind]);
      expect(created.status, kind).toBe(201);
      const id = created.body.data.id as string;
      const members = async () =>
        (await app.core.store.getSql<{ n: number }>('SELECT count(*) AS n FROM role_class_members WHERE kind = ? AND entity_id = ?', kind, id))!.n;
      expect(await members(), kind).toBe(1);
      expect((await admin.del(`/${def.entity}/${id}`)).status, kind).toBe(200);
      expect(await members(), kind).toBe(0);
      expect(await app.core.store.getSql('SELECT 1 FROM role_attributes WHERE entity_type = ? AND entity_id = ?', kind, id), kind).toBeUndefined();
    }
  });

  it('the integrity check looks at the role attribute index of each', async () => {
    for (const kind of ROLE_KIND_NAMES) {
      await app.core.store.runSql("INSERT INTO role_attributes (entity_type, attr, entity_id) VALUES (?, 'orphan', 'no-such-entity')", kind);
    }
    expect((await admin.post('/database/check-data-integrity', {})).status).toBe(202);
    let results: any;
    for (let i = 0; i < 200 && !(results = (await admin.get('/database/data-integrity-results')).body.data).endTime; i++) {
      await new Promise((r) => setTimeout(r, 25)); // the run is in the background: wait for its end
    }
    const descriptions = results.results.map((r: { description: string }) => r.description).join('\n');
    for (const kind of ROLE_KIND_NAMES) expect(descriptions).toContain(`links missing ${kind} 'no-such-entity'`);
  });
});
