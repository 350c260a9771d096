// The real OpenZiti controller (`ziti edge quickstart`, v1.7.2) seeded with a model of every exportable type, then
// `ziti ops export` from it, imported into Weft (Weft's import, and `ziti ops import`): the same model.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenZiti, type OpenZitiController } from '../../bench/openziti';
import { seed } from '../support/ascodeModel';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, tempDir, type TestApp } from '../support/app';
import { ApiClient } from '../support/client';
import { openzitiTools, ZitiCli } from './tools';

const OZ_PASSWORD = 'oz-admin-password-1';
let oz: OpenZitiController;
let weft: TestApp;
let viaCli: TestApp;
let zitiBin: string;
let ozAdmin: ApiClient;
let startSeconds = 0;

beforeAll(async () => {
  zitiBin = openzitiTools().ziti;
  const started = Date.now();
  [oz, weft, viaCli] = await Promise.all([startOpenZiti(zitiBin, tempDir('weft-oz-'), OZ_PASSWORD), startTestApp(), startTestApp()]);
  startSeconds = (Date.now() - started) / 1000;
  ozAdmin = new ApiClient(oz.origin, oz.ca);
  await ozAdmin.login('admin', OZ_PASSWORD);
  await seed(ozAdmin);
}, 180_000);
afterAll(async () => {
  await ozAdmin?.close();
  await Promise.all([oz?.stop(), weft?.stop(), viaCli?.stop()]);
});

const ops = (origin: string, user: string, password: string, ...args: string[]) =>
  new ZitiCli(zitiBin).ok('ops', ...args, '--controller-url', origin, '-u', user, '-p', password, '-y');

/** A network's model as Weft's export writes it, from a `ziti ops export` file or Weft's own export. */
function model(doc: Record<string, any[]>): Record<string, any[]> {
  const out: Record<string, any[]> = {};
  const byName = (l: any[] | null) => [...(l ?? [])].sort((x, y) => String(x.name).localeCompare(String(y.name)));
  for (const [key, list] of Object.entries(doc)) {
    out[key] = byName(list).map((e) => {
      const m = { ...e };
      // what Weft leaves out (secrets, state) and writes beyond OpenZiti's v1.7.2 model
      for (const k of ['verificationToken', 'enrollmentToken', 'interfaces', 'unverifiedCertPem', 'unverifiedFingerprint', 'target', 'permissions']) {
        delete m[k];
      }
      for (const k of Object.keys(m)) if (k.startsWith('enroll')) delete m[k];
      if (key === 'postureChecks') for (const k of ['promptOnUnlock', 'ignoreLegacyEndpoints']) if (m[k] === false) delete m[k];
      if (key === 'services') m.configs = [...(m.configs ?? [])].sort();
      // OpenZiti writes null for a signer's unset fields, Weft '' and []
      if (key === 'externalJwtSigners') for (const k of ['clientId', 'externalAuthUrl', 'fingerprint', 'kid']) m[k] ??= '';
      if (key === 'externalJwtSigners') m.scopes ??= [];
      if (key === 'certificateAuthorities') m.isVerified = false; // a CA made by an import is not verified
      if (key === 'servicePolicies') m.postureCheckRoles = []; // lost by the CLI's exporter
      return m;
    });
  }
  // each network's own default admin, routers' identities and system policies
  out.identities = out.identities!.filter((i) => !i.isDefaultAdmin && i.typeId !== 'Router');
  out.edgeRouterPolicies = out.edgeRouterPolicies!.filter((p) => !/^edge-router-.+-system$/.test(p.name));
  out.edgeRouters = out.edgeRouters!.filter((r) => r.name !== 'er-builtin');
  return out;
}

describe('export from the real OpenZiti controller, import into Weft', { timeout: 120_000 }, () => {
  it('Weft imports `ziti ops export` of a seeded OpenZiti network: the same model, and again nothing changes', async () => {
    console.log(`OpenZiti quickstart and two Weft apps started in ${startSeconds.toFixed(1)} s`);
    const dir = tempDir('weft-oz-export-');
    const file = join(dir, 'openziti.json');
    await ops(oz.origin, 'admin', OZ_PASSWORD, 'export', '-o', file);
    const fromOz = JSON.parse(readFileSync(file, 'utf8'));
    const admin = await weft.adminClient();
    const r = await admin.post('/ascode/import', fromOz);
    expect(r.status, r.text).toBe(200);
    const again = (await admin.post('/ascode/import', fromOz)).body.data;
    expect(again.plan.filter((p: any) => p.action === 'create' || p.action === 'update')).toEqual([]);
    const ours = JSON.parse((await admin.get('/ascode?format=json')).text);
    expect(model(ours)).toEqual(model(fromOz));
    await admin.close();
  });

  it('`ziti ops import` of the same file into Weft: the same model', async () => {
    const dir = tempDir('weft-oz-export-');
    const file = join(dir, 'openziti.json');
    await ops(oz.origin, 'admin', OZ_PASSWORD, 'export', '-o', file);
    await ops(viaCli.urls.api, ADMIN_USER, ADMIN_PASSWORD, 'import', file);
    const admin = await viaCli.adminClient();
    const ours = JSON.parse((await admin.get('/ascode?format=json')).text);
    expect(model(ours)).toEqual(model(JSON.parse(readFileSync(file, 'utf8'))));
    await admin.close();
  });
});
