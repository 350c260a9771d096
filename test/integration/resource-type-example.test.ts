// docs/architecture.md walks through adding a resource type with test/support/exampleResource.ts: its one
// declaration gives the generic REST routes, bodies with OpenZiti's PUT and PATCH rules, ZitiQL filters, typed hooks
// and its own table. This checks the walk-through holds.
import { describe, expect, it } from 'vitest';
import { typeRoutes } from '../../src/main/api/routes/management';
import { resourceOps } from '../../src/main/core/entities/resource';
import { SCHEMA_MIGRATIONS } from '../../src/main/core/registry';
import { sites } from '../support/exampleResource';
import { useTestApp, type TestApp } from '../support/app';

let app: TestApp;
useTestApp(async (a) => {
  app = a;
  // the registry adds a registered type's migrations to the schema's (core/registry.ts SCHEMA_MIGRATIONS)
  await app.core.store.migrate([...SCHEMA_MIGRATIONS, ...sites.migrations!]);
});

const ops = resourceOps(sites);
const get = (id: string) => ops.get(app.core.system, id);

describe('the worked example of a new resource type', () => {
  it('gets the generic REST routes from its registry entry', () => {
    const routes = typeRoutes('sites', { def: sites }).map((r) => `${r.method} ${r.path}`);
    expect(routes.sort()).toEqual(['DELETE /sites/:id', 'GET /sites', 'GET /sites/:id', 'PATCH /sites/:id', 'POST /sites', 'PUT /sites/:id']);
  });

  it('creates, replaces and patches with the rules its fields state', async () => {
    const ctx = app.core.system;
    const id = await ops.create(ctx, { name: 'lab', location: 'basement', rackUnits: 4, contacts: ['ops@example.com'], tags: { floor: '-1' } });
    expect(await get(id)).toMatchObject({
      name: 'lab',
      location: 'basement',
      rackUnits: 4,
      isActive: true,
      contacts: ['ops@example.com'],
      tags: { floor: '-1' },
    });
    // PUT: omitted optional fields go back to their zero values
    await ops.update(ctx, id, { name: 'lab' }, 'update');
    expect(await get(id)).toMatchObject({ name: 'lab', location: null, rackUnits: 0, isActive: true, contacts: [], tags: {} });
    // PATCH: null resets a nullable field, leaves a required or `patchNull: 'leave'` one, omitted fields stay
    await ops.update(ctx, id, { location: 'attic', isActive: false }, 'patch');
    await ops.update(ctx, id, { name: null, isActive: null, location: null }, 'patch');
    expect(await get(id)).toMatchObject({ name: 'lab', location: null, isActive: false });
    // a field that may not be null is refused with the field named
    await expect(ops.update(ctx, id, { name: 'lab', rackUnits: null }, 'update')).rejects.toMatchObject({
      status: 400,
      fieldCause: { field: 'rackUnits' },
    });
    await expect(ops.create(ctx, { name: 'x', contacts: ['not-an-email'] })).rejects.toMatchObject({
      status: 400,
      fieldCause: { field: 'contacts.0' },
    });
    // the typed hook
    await expect(ops.update(ctx, id, { contacts: ['a@example.com', 'a@example.com'] }, 'patch')).rejects.toMatchObject({
      fieldCause: { field: 'contacts', reason: 'duplicate contact' },
    });
  });

  it('lists with its filters and checks its permission for the caller', async () => {
    const ctx = app.core.system;
    await ops.create(ctx, { name: 'edge-a', rackUnits: 10 });
    await ops.create(ctx, { name: 'edge-b', rackUnits: 20, isActive: false });
    const page = await ops.list(ctx, { filter: 'rackUnits >= 10 and isActive = true' });
    expect(page.data.map((s) => s.name)).toEqual(['edge-a']);
    expect(page.meta.filterableFields).toEqual(expect.arrayContaining(['name', 'location', 'rackUnits', 'isActive', 'id', 'createdAt']));
    const nobody = app.core.ctx({ identityId: 'nobody', identityName: 'nobody', isAdmin: false, permissions: new Set() });
    await expect(ops.list(nobody, {})).rejects.toThrow(expect.objectContaining({ status: 401 }));
  });
});
