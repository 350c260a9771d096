// `resources.describe`: what the core says about each console resource type (its create and update body schemas,
// sortable and filterable fields, role kind, writes offered), and a drift guard between the console's page specs and
// those schemas: every form field names a body field (or is a listed console-only field), and a page states a fact
// only where it deliberately differs from what the core says (the renderer derives the rest: lib/describe.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import { ConsoleClient } from '../support/consoleTrpc';
import { CONSOLE_RESOURCES } from '../../src/main/console/registry';
import type { ResourceDescription } from '../../src/main/console/resources';
import type { FieldSpec } from '../../src/renderer/components/ResourceForm';
import type { ResourcePageSpec } from '../../src/renderer/components/ResourcePage';
import { deriveFields, schemaFacts } from '../../src/renderer/lib/describe';
import { PAGES } from '../../src/renderer/pages/registry';

let app: TestApp;
let ui: ConsoleClient;
const descriptions = new Map<string, ResourceDescription>();

beforeAll(async () => {
  app = await startTestApp({ consoleAddress: '127.0.0.1:0' });
  ui = await new ConsoleClient(app.urls.console!).login('admin', 'admin-password-1');
});
afterAll(async () => {
  await app?.stop();
});

async function describeType(resource: string): Promise<ResourceDescription> {
  let d = descriptions.get(resource);
  if (!d) descriptions.set(resource, (d = (await ui.ok('query', 'resources.describe', { resource })) as ResourceDescription));
  return d;
}

const RESOURCE_NAMES = Object.keys(CONSOLE_RESOURCES);

describe('resources.describe', () => {
  it('describes every console resource', async () => {
    expect(RESOURCE_NAMES.length).toBeGreaterThan(10);
    for (const resource of RESOURCE_NAMES) {
      const d = await describeType(resource);
      expect(Object.keys(d).sort(), resource).toEqual(['create', 'filterable', 'initial', 'ops', 'roleKind', 'sortable', 'update']);
      for (const op of d.ops) expect(['create', 'update', 'patch', 'delete'], resource).toContain(op);
      for (const op of ['create', 'update'] as const) {
        const schema = d[op];
        if (!d.ops.includes(op)) expect(schema, `${resource} ${op}`).toBeNull();
        if (schema) {
          expect(schema.type, `${resource} ${op}`).toBe('object');
          expect(typeof schema.properties, `${resource} ${op}`).toBe('object');
        }
      }
      if (d.ops.includes('create')) expect(d.create, resource).not.toBeNull();
      // the create form's initial body is the registry's (a new auth policy starts as the default one)
      if (resource === 'auth-policies')
        expect(d.initial).toMatchObject({ primary: { updb: { allowed: true, minPasswordLength: 5 } }, secondary: { requireTotp: false } });
      expect(d.filterable, resource).toEqual(expect.arrayContaining(['id', 'createdAt', 'updatedAt']));
      expect(d.filterable, resource).toEqual(expect.arrayContaining(d.sortable));
      expect(d.sortable, resource).toEqual(expect.arrayContaining(['id', 'createdAt', 'updatedAt']));
      expect(d.roleKind === null || typeof d.roleKind === 'string', resource).toBe(true);
    }
  });

  it('states the facts of the core declarations', async () => {
    const identities = await describeType('identities');
    expect(identities.create!.required).toEqual(expect.arrayContaining(['name', 'type', 'isAdmin']));
    expect(schemaFacts(identities.create, 'type').leaves[0]!.enum).toEqual(['User', 'Device', 'Service', 'Router', 'Default']);
    expect(identities.roleKind).toBe('identity');
    expect(identities.filterable).toContain('roleAttributes');
    expect(identities.sortable).not.toContain('roleAttributes');

    const configs = await describeType('configs');
    expect(schemaFacts(configs.create, 'configTypeId')).toMatchObject({ found: true, required: true });
    expect(schemaFacts(configs.update, 'configTypeId').found).toBe(false);

    const services = await describeType('services');
    expect(services.sortable).toContain('name');
    expect(services.sortable).not.toContain('roleAttributes');

    const authPolicies = await describeType('auth-policies');
    expect(schemaFacts(authPolicies.create, 'primary.updb.minPasswordLength').leaves[0]).toMatchObject({ minimum: 5, maximum: 100 });
    expect(schemaFacts(authPolicies.create, 'secondary.requireExtJwtSigner')).toMatchObject({ found: true, required: false });

    const sessions = await describeType('sessions');
    expect(sessions).toMatchObject({ create: null, update: null, ops: ['delete'] });
  });

  it('needs a console session', async () => {
    const anonymous = new ConsoleClient(app.urls.console!);
    const r = await anonymous.query('resources.describe', { resource: 'identities' });
    expect(r.status).toBe(401);
    const bad = await ui.query('resources.describe', { resource: 'no-such-type' });
    expect(bad.status).toBe(400);
  });
});

// ---- drift guard between the console's page specs and the core ------------------------------------

const SPECS: ResourcePageSpec[] = PAGES.flatMap((p) => (p.spec ? [p.spec] : []));

/**
 * Form fields that are not body fields: choices only the console has, turned into body fields by the page's
 * toCreateBody/toEditBody.
 */
const CONSOLE_ONLY: Record<string, Record<string, string>> = {
  identities: { enrollmentMethod: 'the enrollment to create, sent as `enrollment.ott|updb|ottca`' },
  terminators: { routerKind: 'which list `router` is chosen from (edge or transit routers)' },
  'external-jwt-signers': { keySource: 'which of `jwksEndpoint` and `certPem` the signer uses' },
  'controller-settings': {
    overrideRedirectUris: 'whether `oidc.redirectUris` is sent or inherited (null)',
    overridePostLogoutUris: 'whether `oidc.postLogoutUris` is sent or inherited (null)',
  },
};

/** Every field of a form with its path in the body (fields of repeated items under `<list>.0.`). */
function fieldPaths(fields: FieldSpec[], prefix = ''): Array<{ field: FieldSpec; path: string }> {
  return fields.flatMap((f) => [
    { field: f, path: `${prefix}${f.name}` },
    ...(f.kind === 'repeat' ? fieldPaths(f.fields, `${prefix}${f.name}.0.`) : []),
  ]);
}

/** What the renderer derives for a field the page says nothing about. */
function derivedAlone(field: FieldSpec, path: string, d: ResourceDescription, mode: 'create' | 'edit'): FieldSpec {
  const bare = { ...field, name: path, required: undefined, createOnly: undefined } as FieldSpec;
  if (bare.kind === 'select' || bare.kind === 'radio') bare.options = undefined;
  if (bare.kind === 'number') Object.assign(bare, { min: undefined, max: undefined });
  if (bare.kind === 'repeat') bare.fields = [];
  return deriveFields([bare], d, mode)[0]!;
}

describe('page specs against the core', () => {
  it('finds the page specs of the console', () => {
    expect(SPECS.map((s) => s.resource)).toEqual(expect.arrayContaining(['identities', 'services', 'configs', 'terminators']));
    for (const spec of SPECS) expect(RESOURCE_NAMES, spec.path).toContain(spec.resource);
  });

  it('every form field is a field of the create or update body, or a listed console-only field', async () => {
    for (const spec of SPECS.filter((s) => s.fields)) {
      const d = await describeType(spec.resource);
      for (const { field, path } of fieldPaths(spec.fields!)) {
        const where = `${spec.resource}: ${path}`;
        if (CONSOLE_ONLY[spec.resource]?.[path]) {
          expect(schemaFacts(d.create, path).found || schemaFacts(d.update, path).found, `${where} is listed as console-only`).toBe(false);
          continue;
        }
        expect(schemaFacts(d.create, path).found || schemaFacts(d.update, path).found, `${where} is not in the body schemas`).toBe(true);
        if ((field.kind === 'select' || field.kind === 'radio') && field.options) {
          const leaves = schemaFacts(d.create, path).found ? schemaFacts(d.create, path).leaves : schemaFacts(d.update, path).leaves;
          const allowed = leaves.every((s) => Array.isArray(s.enum)) ? leaves.flatMap((s) => s.enum as unknown[]) : undefined;
          if (allowed && leaves.length) for (const o of field.options) expect(allowed, `${where} option ${o.value}`).toContain(o.value);
        }
      }
    }
  });

  it('pages state only what differs from the core (the rest is derived)', async () => {
    for (const spec of SPECS) {
      const d = await describeType(spec.resource);
      for (const c of spec.columns) {
        // an unsortable column is only stated where the core would sort it
        if (c.sortable === false) expect(d.sortable, `${spec.resource} column ${c.field}: sortable: false is derived`).toContain(c.field);
      }
      if (!spec.fields) continue;
      for (const { field, path } of fieldPaths(spec.fields)) {
        const where = `${spec.resource}: ${path}`;
        const create = derivedAlone(field, path, d, 'create');
        const edit = derivedAlone(field, path, d, 'edit');
        if (field.required !== undefined) {
          const onEdit = !(field.createOnly ?? create.createOnly);
          const same = field.required === create.required && (!onEdit || field.required === edit.required);
          expect(same, `${where}: required is derived`).toBe(false);
        }
        if (field.createOnly !== undefined) expect(create.createOnly, `${where}: createOnly is derived`).not.toBe(field.createOnly);
        if (field.kind === 'number' && create.kind === 'number') {
          if (field.min !== undefined) expect(create.min, `${where}: min is derived`).not.toBe(field.min);
          if (field.max !== undefined) expect(create.max, `${where}: max is derived`).not.toBe(field.max);
        }
        if ((field.kind === 'select' || field.kind === 'radio') && field.options && (create.kind === 'select' || create.kind === 'radio')) {
          const same = JSON.stringify(field.options) === JSON.stringify(create.options);
          expect(same, `${where}: the options only repeat the schema's enum`).toBe(false);
        }
      }
    }
  });

  it('derives what the pages no longer state', async () => {
    const identities = SPECS.find((s) => s.resource === 'identities')!;
    const d = await describeType('identities');
    const create = Object.fromEntries(deriveFields(identities.fields!, d, 'create').map((f) => [f.name, f]));
    expect(create.name!.required).toBe(true);
    expect(create.type).toMatchObject({
      required: true,
      options: ['User', 'Device', 'Service', 'Router', 'Default'].map((v) => ({ value: v, label: v })),
    });
    expect(create.externalId!.required).toBe(false);
    expect(create['enrollment.updb']!.createOnly).toBe(true);
    expect(create.roleAttributes!.createOnly).toBe(false);

    const configs = SPECS.find((s) => s.resource === 'configs')!;
    const configFields = deriveFields(configs.fields!, await describeType('configs'), 'edit');
    expect(configFields.find((f) => f.name === 'configTypeId')).toMatchObject({ createOnly: true, required: false });

    const authPolicies = SPECS.find((s) => s.resource === 'auth-policies')!;
    const minLength = deriveFields(authPolicies.fields!, await describeType('auth-policies'), 'create').find(
      (f) => f.name === 'primary.updb.minPasswordLength',
    );
    expect(minLength).toMatchObject({ min: 5, max: 100, required: true });
    // zod's safe-integer bounds are not shown
    const maxAttempts = deriveFields(authPolicies.fields!, await describeType('auth-policies'), 'create').find(
      (f) => f.name === 'primary.updb.maxAttempts',
    );
    expect(maxAttempts).toMatchObject({ min: 0, max: undefined });

    // a page's labels are kept for the enum's values
    const policies = SPECS.find((s) => s.resource === 'service-policies')!;
    const semantic = deriveFields(policies.fields!, await describeType('service-policies'), 'create').find((f) => f.name === 'semantic');
    expect(semantic).toMatchObject({ required: true, options: [{ value: 'AllOf' }, { value: 'AnyOf' }] });
    expect((semantic as { options: Array<{ label: string }> }).options[0]!.label).toMatch(/^AllOf — /);
  });
});
