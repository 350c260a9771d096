// The console's generated pages, against the core: `resources.names` lists the console types (what the navigation's
// "More" group and the generated routes rest on), a form generated from a type's body schemas has a field of the
// right kind for every body property, and every page offers exactly the writes describe lists (less only where a
// spec says so) — the page specs no longer restate them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_RESOURCES } from '../../src/main/console/registry';
import type { ResourceDescription } from '../../src/main/console/resources';
import { genericSpec } from '../../src/renderer/components/GenericResourcePage';
import { pageOffers, type ResourcePageSpec } from '../../src/renderer/components/ResourcePage';
import { editBodyFor, fieldsFromSchema, humanize, initialFromSchema, singular } from '../../src/renderer/lib/generic';
import type { ResourceName } from '../../src/renderer/lib/types';
import { morePages, PAGES, SPEC_RESOURCES } from '../../src/renderer/pages/registry';
import { startTestApp, type TestApp } from '../support/app';
import { ConsoleClient } from '../support/consoleTrpc';

let app: TestApp;
let ui: ConsoleClient;
const RESOURCE_NAMES = Object.keys(CONSOLE_RESOURCES) as ResourceName[];
const descriptions = new Map<string, ResourceDescription>();

beforeAll(async () => {
  app = await startTestApp({ consoleAddress: '127.0.0.1:0' });
  ui = await new ConsoleClient(app.urls.console!).login('admin', 'admin-password-1');
  for (const resource of RESOURCE_NAMES) descriptions.set(resource, await ui.ok('query', 'resources.describe', { resource }));
});
afterAll(async () => {
  await app?.stop();
});

const kinds = (resource: string, mode: 'create' | 'update') =>
  Object.fromEntries(fieldsFromSchema(descriptions.get(resource)![mode]).map((f) => [f.name, f.kind]));

describe('resources.names', () => {
  it('lists the console types, to a console session only', async () => {
    expect(await ui.ok('query', 'resources.names')).toEqual(RESOURCE_NAMES);
    expect((await new ConsoleClient(app.urls.console!).query('resources.names')).status).toBe(401);
  });

  it('puts the types without a page spec under "More", at /<resource>', () => {
    const more = morePages(RESOURCE_NAMES).map((p) => p.id);
    expect(more).toEqual(RESOURCE_NAMES.filter((n) => !SPEC_RESOURCES.has(n)));
    for (const id of more) expect(PAGES.map((p) => p.id)).not.toContain(id);
    // a type the renderer does not know yet still gets its entry
    expect(morePages([...RESOURCE_NAMES, 'brand-new-things' as ResourceName]).at(-1)).toEqual({ id: 'brand-new-things', title: 'Brand new things' });
  });
});

describe('generated forms', () => {
  it('have a field for every property of every body schema', () => {
    for (const [resource, d] of descriptions) {
      for (const mode of ['create', 'update'] as const) {
        const props = Object.keys((d[mode]?.properties ?? {}) as object);
        expect(
          fieldsFromSchema(d[mode]).map((f) => f.name),
          `${resource} ${mode}`,
        ).toEqual([...props.filter((p) => p !== 'tags'), ...props.filter((p) => p === 'tags')]);
      }
    }
  });

  it('choose the field kind from the schema', () => {
    expect(kinds('services', 'create')).toEqual({
      name: 'text',
      encryptionRequired: 'checkbox',
      maxIdleTimeMillis: 'number',
      terminatorStrategy: 'text',
      configs: 'list',
      roleAttributes: 'list',
      tags: 'tags',
    });
    expect(kinds('config-types', 'update')).toEqual({ name: 'text', schema: 'json', target: 'select', tags: 'tags' });
    expect(kinds('enrollments', 'create')).toMatchObject({ method: 'select', identityId: 'text', caId: 'text', tags: 'tags' });
    expect(kinds('edge-routers', 'create')).toMatchObject({ cost: 'number', ctrlChanListeners: 'json', appData: 'tags' });
  });

  it('start a new entity where leaving a field alone is a valid answer, and clear emptied fields on edit', () => {
    expect(initialFromSchema(descriptions.get('services')!.create)).toEqual({ encryptionRequired: false });
    expect(editBodyFor({ name: 'a', target: 'router' })({ name: 'b' })).toEqual({ name: 'b', target: null });
    expect([humanize('identity-types'), humanize('caId'), humanize('cas'), singular('Edge router policies')]).toEqual([
      'Identity types',
      'CA ID',
      'CAs',
      'Edge router policy',
    ]);
  });

  it('list a type by name where it has one, else by ID', () => {
    const columns = (resource: ResourceName) => genericSpec(resource, resource, descriptions.get(resource)!).columns.map((c) => c.field);
    expect(columns('config-types')).toEqual(['name', 'createdAt']);
    expect(columns('authenticators')).toEqual(['id', 'createdAt']);
    expect(genericSpec('enrollments', 'enrollments', descriptions.get('enrollments')!).singular).toBe('enrollment');
  });
});

describe('what a page offers', () => {
  const SPECS: ResourcePageSpec[] = PAGES.flatMap((p) => (p.spec ? [p.spec] : []));

  it('is what describe lists, on every page with a spec and every generated one', () => {
    const generated = RESOURCE_NAMES.map((r) => genericSpec(r, `generic/${r}`, descriptions.get(r)!));
    for (const spec of [...SPECS, ...generated]) {
      const d = descriptions.get(spec.resource)!;
      const offers = pageOffers(spec, d);
      const where = `${spec.path}`;
      expect(!!offers.create, `${where} create`).toBe(spec.canCreate !== false && d.ops.includes('create'));
      expect(!!offers.edit, `${where} edit`).toBe(spec.canEdit !== false && (d.ops.includes('update') || d.ops.includes('patch')));
      expect(offers.delete, `${where} delete`).toBe(spec.canDelete !== false && d.ops.includes('delete'));
    }
  });

  it('is not restated by the page specs (an override only withholds a write the core offers)', () => {
    for (const spec of SPECS) {
      const d = descriptions.get(spec.resource)!;
      if (spec.canCreate === false) expect(d.ops, spec.path).toContain('create');
      if (spec.canDelete === false) expect(d.ops, spec.path).toContain('delete');
      if (spec.canEdit === false)
        expect(
          d.ops.some((o) => o === 'update' || o === 'patch'),
          spec.path,
        ).toBe(true);
    }
  });
});
