// Every role kind (src/shared/roleKinds.ts) reaches everything that must know it: its table and resource
// declaration, the REST role-attribute listing, the console's resource registry and role preview, and the data
// integrity check of the role attribute index.
import { describe, expect, it } from 'vitest';
import { buildRoutes } from '../../src/main/api/routes/index';
import { CONSOLE_RESOURCES } from '../../src/main/console/registry';
import { KIND_RESOURCES } from '../../src/main/core/policy/kindResources';
import { KINDS, ROLE_KIND_NAMES, ROLE_KINDS } from '../../src/main/core/policy/kinds';
import { useTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';

let app: TestApp;
let admin: ApiClient;
useTestApp((a, c) => {
  app = a;
  admin = c;
});

describe('role kinds', () => {
  it('each has its table, resource declaration, REST listing and console entry', () => {
    const routes = buildRoutes(app.core)
      .filter((r) => r.method === 'GET')
      .map((r) => r.path);
    for (const kind of ROLE_KIND_NAMES) {
      const { def } = KIND_RESOURCES[kind];
      expect(def.table, kind).toBe(KINDS[kind].table);
      expect(def.roleKind, kind).toBe(kind);
      expect(def.entity, kind).toBe(ROLE_KINDS[kind].resource);
      expect(routes, kind).toContain(`/${kind}-role-attributes`);
      const consoleEntry = (CONSOLE_RESOURCES as Record<string, { def: unknown; roleKind?: string }>)[ROLE_KINDS[kind].resource];
      expect(consoleEntry?.def, kind).toBe(def);
      expect(consoleEntry?.roleKind, kind).toBe(kind);
    }
    // and nothing else claims a role kind
    const claimed = Object.values(CONSOLE_RESOURCES as Record<string, { roleKind?: string }>)
      .map((e) => e.roleKind)
      .filter(Boolean);
    expect(claimed.sort()).toEqual([...ROLE_KIND_NAMES].sort());
  });

  it('the integrity check looks at the role attribute index of each', async () => {
    for (const kind of ROLE_KIND_NAMES) {
      app.core.store.runSql("INSERT INTO role_attributes (entity_type, attr, entity_id) VALUES (?, 'orphan', 'no-such-entity')", kind);
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
