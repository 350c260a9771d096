// The network as code: the real `ziti ops export` / `ziti ops import` (OpenZiti v1.7.2) against Weft, and Weft's own
// export/import (GET /ascode, POST /ascode/import) in the same format, on a model with every exportable type.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { seed } from '../support/ascodeModel';
import { openzitiTools, ZitiCli } from './tools';

let source: TestApp;
let target: TestApp;
let third: TestApp;
let fourth: TestApp;
let a: ApiClient;
let b: ApiClient;
let c: ApiClient;
let d: ApiClient;
let zitiBin: string;

/** Weft's export of a network (GET /ascode), parsed. */
async function exported(admin: ApiClient): Promise<Record<string, any[]>> {
  const r = await admin.get('/ascode?format=json');
  expect(r.status, r.text).toBe(200);
  return JSON.parse(r.text);
}

/** The CLI and the login flags `ziti ops` takes (it logs in itself). */
const cliFor = async (app: TestApp) => {
  const cli = new ZitiCli(zitiBin);
  const login = ['--controller-url', app.urls.api, '-u', ADMIN_USER, '-p', ADMIN_PASSWORD, '-y'];
  return {
    cwd: cli.cwd,
    ops: (command: 'export' | 'import', ...args: string[]) => cli.ok('ops', command, ...args, ...login),
  };
};

beforeAll(async () => {
  zitiBin = openzitiTools().ziti;
  [source, target, third, fourth] = await Promise.all([startTestApp(), startTestApp(), startTestApp(), startTestApp()]);
  [a, b, c, d] = await Promise.all([source.adminClient(), target.adminClient(), third.adminClient(), fourth.adminClient()]);
  await seed(a);
}, 120_000);
afterAll(async () => {
  await Promise.all([a, b, c, d].map((x) => x?.close()));
  await Promise.all([source, target, third, fourth].map((x) => x?.stop()));
});

describe('network as code', { timeout: 120_000 }, () => {
  it("Weft's export is the CLI's export of the same network (stable order aside)", async () => {
    const cli = await cliFor(source);
    const file = join(cli.cwd, 'cli-export.json');
    await cli.ops('export', '-o', file);
    const fromCli = JSON.parse(readFileSync(file, 'utf8'));
    const ours = await exported(a);
    // what Weft leaves out on purpose: secrets (a CA's verification token, a router's enrollment token) and the
    // routers' own system policies and identities; lists by name; the CLI writes null for a service without configs
    const byName = (l: any[] | null) => [...(l ?? [])].sort((x, y) => String(x.name).localeCompare(String(y.name)));
    for (const ca of fromCli.certificateAuthorities) delete ca.verificationToken;
    for (const er of fromCli.edgeRouters) {
      // a router's state, not its model: null here
      for (const k of ['enrollmentToken', 'interfaces', 'unverifiedCertPem', 'unverifiedFingerprint']) delete er[k];
    }
    for (const s of fromCli.services) s.configs = [...(s.configs ?? [])].sort();
    fromCli.edgeRouterPolicies = fromCli.edgeRouterPolicies.filter((p: any) => !/^edge-router-.+-system$/.test(p.name));
    fromCli.identities = fromCli.identities.filter((i: any) => i.typeId !== 'Router');
    fromCli.configTypes = fromCli.configTypes.filter((t: any) => t.name !== 'svc.proxy.v1'); // every Weft network has it
    // what Weft writes beyond the CLI (fields its v1.7.2 model has not): a config type's target, an identity's
    // permissions, a signer's enrollment settings
    for (const ct of ours.configTypes!) expect(ct.target).toBe('service');
    for (const ct of ours.configTypes!) delete ct.target;
    for (const identity of ours.identities!) delete identity.permissions;
    for (const signer of ours.externalJwtSigners!) for (const k of Object.keys(signer)) if (k.startsWith('enroll')) delete signer[k];
    // Weft keeps a service policy's posture check roles, which the CLI's exporter loses (v1.7.2 appends them to the
    // wrong list and writes [])
    expect(ours.servicePolicies!.find((p) => p.name === 'sp-dial').postureCheckRoles).toEqual(['#pc']);
    for (const p of ours.servicePolicies!) p.postureCheckRoles = [];
    // the CLI leaves out an MFA check's false flags (omitempty in its model); Weft writes them
    for (const pc of ours.postureChecks!) for (const k of ['promptOnUnlock', 'ignoreLegacyEndpoints']) if (pc[k] === false) delete pc[k];
    expect(Object.keys(ours).sort()).toEqual(Object.keys(fromCli).sort());
    for (const key of Object.keys(fromCli)) expect(byName(ours[key]), key).toEqual(byName(fromCli[key]));
  });

  it('ziti ops export from one Weft, ziti ops import into another: the same model', async () => {
    const from = await cliFor(source);
    const file = join(from.cwd, 'network.json');
    await from.ops('export', '-o', file);
    const to = await cliFor(target);
    await to.ops('import', file);
    const want = await exported(a);
    const got = await exported(b);
    // the CLI's exporter drops a service policy's posture check roles (v1.7.2 appends them to the wrong list)
    for (const p of want.servicePolicies!) p.postureCheckRoles = [];
    // a CA created from a file is not verified: proof of its key is the new network's to ask
    for (const x of want.certificateAuthorities!) x.isVerified = false;
    expect(strip(got)).toEqual(strip(want));
  });

  it("ziti ops import of Weft's own export (YAML too): the same model", async () => {
    const to = await cliFor(fourth);
    const file = join(to.cwd, 'weft.yaml');
    writeFileSync(file, (await a.get('/ascode?format=yaml')).text);
    await to.ops('import', file, '--input-format', 'YAML');
    const want = await exported(a);
    for (const x of want.certificateAuthorities!) x.isVerified = false;
    expect(await exported(d)).toEqual(want);
  });

  it("weft's import of the CLI's export; a second import changes nothing; Weft's own export fills in what the CLI's lost", async () => {
    const from = await cliFor(source);
    const file = join(from.cwd, 'network-2.json');
    await from.ops('export', '-o', file);
    const dry = await c.post('/ascode/import?dryRun=true', JSON.parse(readFileSync(file, 'utf8')));
    expect(dry.status, dry.text).toBe(200);
    expect(dry.body.data.counts.create).toBeGreaterThan(20);
    expect((await exported(c)).services).toEqual([]); // the dry run wrote nothing
    const real = await c.post('/ascode/import', JSON.parse(readFileSync(file, 'utf8')));
    expect(real.status, real.text).toBe(200);
    expect(real.body.data.plan).toEqual(dry.body.data.plan);
    const again = await c.post('/ascode/import', JSON.parse(readFileSync(file, 'utf8')));
    expect(again.body.data.counts, JSON.stringify(again.body.data.plan.filter((p: any) => p.action !== 'unchanged'))).toMatchObject({
      create: 0,
      update: 0,
    });

    // Weft's own export of the source keeps posture check roles; importing it updates what the CLI's file lost
    const ours = await exported(a);
    const fix = await c.post('/ascode/import', ours);
    expect(fix.body.data.plan.filter((p: any) => p.action === 'create' || p.action === 'update')).toEqual([
      { section: 'servicePolicies', name: 'sp-dial', action: 'update', fields: ['postureCheckRoles'] },
    ]);
    const want = await exported(a);
    for (const x of want.certificateAuthorities!) x.isVerified = false;
    expect(strip(await exported(c))).toEqual(strip(want));
    // and two exports of the same network are the same bytes
    expect((await c.get('/ascode?format=json')).text).toBe((await c.get('/ascode?format=json')).text);
  });
});

/**
 * Leaves out what the CLI's import adds on its own: the source's system edge router policies (its exporter writes
 * them, its importer creates them as ordinary policies); Weft's export leaves system policies out.
 */
function strip(doc: Record<string, any[]>): Record<string, any[]> {
  return { ...doc, edgeRouterPolicies: doc.edgeRouterPolicies!.filter((p) => !/^edge-router-.+-system$/.test(p.name)) };
}
