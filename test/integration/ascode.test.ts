// The network as code through Weft's own interfaces (REST and `weft export` / `weft import`): plans, dry runs,
// idempotence, bad input refused whole with the entry named, callers checked, imports started in the same tick.
// Runs on SQLite, and on PostgreSQL in the run with WEFT_TEST_STORE=postgres.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { runAscode } from '../../src/main/ascodeCommand';
import { startTestApp, tempDir, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';

let app: TestApp;
let admin: ApiClient;
const dir = tempDir('weft-ascode-');

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.adminClient();
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

const network = (extra: Record<string, unknown[]> = {}) => ({
  configTypes: [{ name: 'ac-type', schema: { type: 'object', properties: { port: { type: 'integer' } }, required: ['port'] }, tags: {} }],
  configs: [{ name: 'ac-cfg', configType: '@ac-type', data: { port: 1 }, tags: { k: 'v' } }],
  services: [
    { name: 'ac-svc', configs: ['@ac-cfg'], roleAttributes: ['ac'], encryptionRequired: true, terminatorStrategy: 'smartrouting', tags: {} },
  ],
  identities: [{ name: 'ac-user', isAdmin: false, roleAttributes: ['ac-users'], authPolicy: '@Default', tags: {}, typeId: 'Default' }],
  postureChecks: [{ name: 'ac-pc', typeId: 'DOMAIN', domains: ['ac.example'], roleAttributes: ['ac-pc'], tags: {} }],
  servicePolicies: [
    {
      name: 'ac-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['@ac-user'],
      serviceRoles: ['@ac-svc'],
      postureCheckRoles: ['@ac-pc'],
      tags: {},
    },
  ],
  ...extra,
});

async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const path of ['/config-types', '/configs', '/services', '/identities', '/service-policies', '/posture-checks']) {
    out[path] = (await admin.get(`${path}?limit=1`)).body.meta.pagination.totalCount;
  }
  return out;
}

async function importDoc(doc: unknown, dryRun = false) {
  return admin.post(`/ascode/import${dryRun ? '?dryRun=true' : ''}`, doc);
}

describe('network as code', () => {
  it('dry run: the plan, nothing written; then the import; then the same file again changes nothing', async () => {
    const before = await counts();
    const dry = await importDoc(network(), true);
    expect(dry.status, dry.text).toBe(200);
    expect(dry.body.data).toMatchObject({ dryRun: true, counts: { create: 6, update: 0, unchanged: 0 } });
    expect(dry.body.data.plan.map((p: any) => `${p.action} ${p.section} ${p.name}`)).toEqual([
      'create configTypes ac-type',
      'create configs ac-cfg',
      'create services ac-svc',
      'create postureChecks ac-pc',
      'create identities ac-user',
      'create servicePolicies ac-dial',
    ]);
    expect(await counts()).toEqual(before);

    const real = await importDoc(network());
    expect(real.status, real.text).toBe(200);
    expect(real.body.data.plan).toEqual(dry.body.data.plan);
    const policy = (await admin.get(`/service-policies?filter=${encodeURIComponent('name = "ac-dial"')}`)).body.data[0];
    expect(policy.identityRolesDisplay).toEqual([{ role: expect.stringMatching(/^@/), name: '@ac-user' }]);
    expect(policy.postureCheckRolesDisplay).toEqual([{ role: expect.stringMatching(/^@/), name: '@ac-pc' }]);

    const again = await importDoc(network());
    expect(again.body.data.counts).toEqual({ create: 0, update: 0, unchanged: 6, skip: 0 });
  });

  it('an update changes only the fields the file changes; the export has it back', async () => {
    const doc = network();
    (doc.services[0] as any).roleAttributes = ['ac', 'more'];
    (doc.configs[0] as any).data = { port: 2 };
    const r = await importDoc(doc);
    expect(r.body.data.plan.filter((p: any) => p.action === 'update')).toEqual([
      { section: 'configs', name: 'ac-cfg', action: 'update', fields: ['data'] },
      { section: 'services', name: 'ac-svc', action: 'update', fields: ['roleAttributes'] },
    ]);
    const exported = (await admin.get('/ascode')).body.data;
    expect(exported.services.find((s: any) => s.name === 'ac-svc')).toMatchObject({ roleAttributes: ['ac', 'more'], configs: ['@ac-cfg'] });
    expect(exported.configs.find((s: any) => s.name === 'ac-cfg')).toMatchObject({ data: { port: 2 }, configType: '@ac-type' });
    // its own export imported again: nothing to do
    expect((await importDoc(exported)).body.data.counts).toMatchObject({ create: 0, update: 0 });
  });

  it('bad input: a clear error naming the entry, and nothing written', async () => {
    const before = await counts();
    const cases: Array<[unknown, string, RegExp]> = [
      [[], '(root)', /object of sections/],
      [{ widgets: [] }, 'widgets', /unknown section/],
      [{ services: {} }, 'services', /list of entries/],
      [{ services: [{ roleAttributes: [] }] }, 'services[0].name', /required/],
      [{ services: [{ name: 'x1' }, { name: 'x1' }] }, 'services[1] "x1"', /twice/],
      // a reference to nothing, after good entries
      [
        network({ servicePolicies: [{ name: 'ac-new', type: 'Dial', identityRoles: ['@nobody'], serviceRoles: ['#all'], semantic: 'AnyOf' }] }),
        'servicePolicies[0] "ac-new".identityRoles[0]',
        /no identity named "nobody"/,
      ],
      // a bad row among good ones: the config's data does not match its type's schema
      [
        network({
          configs: [
            { name: 'ac-good', configType: '@ac-type', data: { port: 3 } },
            { name: 'ac-bad', configType: '@ac-type', data: { port: 'x' } },
          ],
        }),
        'configs[1] "ac-bad".data.port',
        /must be integer/,
      ],
      [network({ services: [{ name: 'ac-svc2', configs: ['@missing-config'] }] }), 'services[0] "ac-svc2".configs[0]', /no config named/],
      [network({ identities: [{ name: 'ac-u2', authPolicy: 'Default' }] }), 'identities[0] "ac-u2".authPolicy', /must be '@/],
    ];
    for (const [doc, field, reason] of cases) {
      for (const dryRun of [false, true]) {
        const r = await importDoc(doc, dryRun);
        expect(r.status, `${field}: ${r.text}`).toBe(400);
        expect(r.body.error.code).toBe('COULD_NOT_VALIDATE');
        expect(r.body.error.cause.field, r.text).toBe(field);
        expect(r.body.error.cause.reason).toMatch(reason);
      }
    }
    expect(await counts()).toEqual(before);
    for (const name of ['ac-good', 'ac-new', 'ac-svc2', 'ac-u2']) {
      expect((await admin.get(`/ascode`)).text).not.toContain(`"${name}"`);
    }
    const malformed = await admin.req('POST', '/ascode/import', undefined, { raw: '{"services": [', contentType: 'application/json' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('COULD_NOT_PARSE_BODY');
  });

  it('only administrators import; readers of ops export', async () => {
    const docId = await admin.create('/identities', { name: 'ac-ops-reader', type: 'Default', isAdmin: false, permissions: ['ops.read'] });
    await admin.create('/authenticators', { method: 'updb', identityId: docId, username: 'ac-ops-reader', password: 'ac-ops-reader-1' });
    const reader = app.client();
    await reader.login('ac-ops-reader', 'ac-ops-reader-1');
    expect((await reader.get('/ascode')).status).toBe(200);
    const r = await reader.post('/ascode/import?dryRun=true', network());
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('UNAUTHORIZED');
    const nobody = app.client();
    expect((await nobody.get('/ascode')).status).toBe(401);
    await reader.close();
    await nobody.close();
  });

  it('imports started in the same tick: each all or nothing, the network as the file says, once', async () => {
    const doc = network({
      services: [
        { name: 'ac-race-a', roleAttributes: ['race'], encryptionRequired: true },
        { name: 'ac-race-b', roleAttributes: ['race'], encryptionRequired: true },
      ],
      edgeRouterPolicies: [{ name: 'ac-race-erp', semantic: 'AnyOf', identityRoles: ['#race'], edgeRouterRoles: ['#all'] }],
    });
    const bad = network({
      services: [
        { name: 'ac-race-a', roleAttributes: ['race'], encryptionRequired: true },
        { name: 'ac-race-c', configs: ['@none'], encryptionRequired: true },
      ],
    });
    const results = await Promise.all([importDoc(doc), importDoc(doc), importDoc(bad), importDoc(doc, true), importDoc(doc)]);
    const statuses = results.map((r) => r.status);
    expect(results[2]!.body.error.cause.field).toBe('services[1] "ac-race-c".configs[0]');
    expect(statuses[2]).toBe(400); // the bad one: refused whole
    for (const i of [0, 1, 3, 4]) {
      // a loser of a race on a new name is refused whole with the entry named; the others applied or found it done
      if (results[i]!.status !== 200)
        expect(results[i]!.body.error.cause.field, results[i]!.text).toMatch(/^(services|edgeRouterPolicies)\[\d+\] "ac-race/);
    }
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
    const names = (await admin.get(`/services?filter=${encodeURIComponent('name contains "ac-race"')}`)).body.data.map((s: any) => s.name);
    expect(names.sort()).toEqual(['ac-race-a', 'ac-race-b']);
    expect((await importDoc(doc)).body.data.counts).toMatchObject({ create: 0, update: 0 });
  });

  it('weft export / weft import: files, YAML, dry run, the same bytes twice, clear errors', async () => {
    const lines: string[] = [];
    const errs: string[] = [];
    const out = (l: string) => lines.push(l);
    const err = (l: string) => errs.push(l);
    const file = join(dir, 'net.json');
    expect(await runAscode('export', ['-o', file, '--data-dir', app.dataDir], out, err), errs.join('\n')).toBe(0);
    const first = readFileSync(file, 'utf8');
    expect(await runAscode('export', ['-o', file, '--data-dir', app.dataDir], out, err)).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(first);
    const doc = JSON.parse(first);
    expect(doc.services.map((s: any) => s.name)).toEqual([...doc.services.map((s: any) => s.name)].sort());

    const yamlFile = join(dir, 'net.yaml');
    expect(await runAscode('export', ['-o', yamlFile, '--data-dir', app.dataDir], out, err)).toBe(0);
    expect(parseYaml(readFileSync(yamlFile, 'utf8'))).toEqual(doc);

    doc.services.push({ name: 'ac-cli-svc', roleAttributes: ['cli'], encryptionRequired: true });
    writeFileSync(yamlFile, JSON.stringify(doc));
    lines.length = 0;
    expect(await runAscode('import', [yamlFile, '--dry-run', '--data-dir', app.dataDir], out, err), errs.join('\n')).toBe(0);
    expect(lines).toEqual(['create  services "ac-cli-svc"', expect.stringMatching(/^would create 1, update 0, unchanged \d+, skipped \d+$/)]);
    expect((await admin.get(`/services?filter=${encodeURIComponent('name = "ac-cli-svc"')}`)).body.data).toHaveLength(0);
    lines.length = 0;
    expect(await runAscode('import', [yamlFile, '--data-dir', app.dataDir], out, err)).toBe(0);
    expect(lines.at(-1)).toMatch(/^created 1, updated 0/);
    expect((await admin.get(`/services?filter=${encodeURIComponent('name = "ac-cli-svc"')}`)).body.data).toHaveLength(1);

    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'services: [\n  - name: x\n');
    errs.length = 0;
    expect(await runAscode('import', [broken, '--data-dir', app.dataDir], out, err)).toBe(2);
    expect(errs.join('\n')).toMatch(/broken\.yaml: neither JSON nor YAML/);
    writeFileSync(broken, JSON.stringify({ services: [{ name: 'ac-cli-2', configs: ['@nope'], encryptionRequired: true }] }));
    errs.length = 0;
    expect(await runAscode('import', [broken, '--data-dir', app.dataDir], out, err)).toBe(2);
    expect(errs.join('\n')).toMatch(/COULD_NOT_VALIDATE: services\[0\] "ac-cli-2"\.configs\[0\]: no config named "nope"/);
    errs.length = 0;
    expect(await runAscode('export', ['--data-dir', join(dir, 'nothing-here')], out, err)).toBe(1);
    expect(errs.join('\n')).toMatch(/Weft is not running/);
  });
});
