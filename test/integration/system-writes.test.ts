import { SignJWT, importPKCS8 } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { importIdentities } from '../../src/main/core/enrollment/identityImport';
import { createRootCa } from '../../src/main/core/pki';
import { ROLE_KINDS, type RoleKind } from '../../src/main/core/kinds';
import { parseRoles } from '../../src/main/core/query/roles';
import { EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY, SERVICE_POLICY } from '../../src/main/core/policy/policySpecs';
import type { Row, Store } from '../../src/main/core/store/db';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { clientCert, csr, externalCa, type CertAndKey } from '../support/pki';

/**
 * Rows Weft writes itself (bootstrap's default admin, the built-in and other tunneler-enabled routers' identities and
 * system policies, identities created by enrollment or import) go through the resource write path, so their role
 * classes and the policy index are maintained in the write's transaction. The start-up repair that classifies rows
 * written around that path (`classifyAllUnclassified` / `classifyUnclassified`) is switched off here, and the store
 * is inspected directly right after each write (before anything could classify an entity lazily): a path that
 * bypassed the write path leaves a row unclassified, classified by stale attributes, or a policy unindexed, and
 * fails this test.
 */
const repair = vi.hoisted(() => ({ calls: 0 }));
vi.mock('../../src/main/core/policy/classes', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../src/main/core/policy/classes')>()),
  classifyAllUnclassified: async () => void repair.calls++,
  classifyUnclassified: async () => (repair.calls++, 0),
}));

const POLICY_SPECS = [SERVICE_POLICY, EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY];
const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/** Everything about role-bearing rows that only the write path keeps in step; empty when all is in step. */
async function writtenAroundWritePath(store: Store): Promise<string[]> {
  const problems: string[] = [];
  for (const [kind, { table }] of Object.entries(ROLE_KINDS) as Array<[RoleKind, { table: string }]>) {
    const rows = await store.allSql<{ id: string; role_attributes: string; class_key: string | null }>(
      `SELECT t.id, t.role_attributes, c.key AS class_key FROM ${table} t
       LEFT JOIN role_class_members m ON m.kind = ? AND m.entity_id = t.id
       LEFT JOIN role_classes c ON c.id = m.class_id`,
      kind,
    );
    for (const row of rows) {
      // the same definition as classifyUnclassified's: no role_class_members row
      if (row.class_key === null) {
        problems.push(`${kind} ${row.id}: unclassified`);
        continue;
      }
      const attrs = sorted(JSON.parse(row.role_attributes) as string[]);
      const indexed = sorted(
        (await store.allSql<{ attr: string }>('SELECT attr FROM role_attributes WHERE entity_type = ? AND entity_id = ?', kind, row.id)).map(
          (r) => r.attr,
        ),
      );
      if (JSON.stringify(indexed) !== JSON.stringify(attrs))
        problems.push(`${kind} ${row.id}: role_attributes ${JSON.stringify(indexed)}, column ${JSON.stringify(attrs)}`);
      const refs = sorted(
        (
          await store.allSql<{ policy_id: string }>(
            "SELECT policy_id FROM policy_side_roles WHERE kind = ? AND role_type = 'id' AND value = ?",
            kind,
            row.id,
          )
        ).map((r) => r.policy_id),
      );
      const key = JSON.stringify([attrs, refs]);
      if (row.class_key !== key) problems.push(`${kind} ${row.id}: in class ${row.class_key}, expected ${key}`);
    }
    for (const r of await store.allSql<{ entity_id: string }>(
      `SELECT DISTINCT entity_id FROM role_attributes a WHERE entity_type = ? AND NOT EXISTS (SELECT 1 FROM ${table} t WHERE t.id = a.entity_id)`,
      kind,
    ))
      problems.push(`${kind} ${r.entity_id}: role attributes of a deleted entity`);
    for (const r of await store.allSql<{ entity_id: string }>(
      `SELECT entity_id FROM role_class_members m WHERE kind = ? AND NOT EXISTS (SELECT 1 FROM ${table} t WHERE t.id = m.entity_id)`,
      kind,
    ))
      problems.push(`${kind} ${r.entity_id}: class member of a deleted entity`);
  }
  for (const spec of POLICY_SPECS) {
    for (const row of await store.allSql<Row>(`SELECT * FROM ${spec.table}`)) {
      const expectedSides: string[] = [];
      const expectedRoles: string[] = [];
      for (const side of spec.sides) {
        const roles = parseRoles(JSON.parse(row[side.column] as string) as string[]);
        expectedSides.push(`${side.kind} ${row.semantic} all=${Number(roles.all)} attrs=${new Set(roles.attrs).size}`);
        for (const a of roles.attrs) expectedRoles.push(`${side.kind} attr ${a}`);
        for (const i of roles.ids) expectedRoles.push(`${side.kind} id ${i}`);
      }
      const sides = (await store.allSql<Row>('SELECT * FROM policy_sides WHERE policy_id = ?', row.id)).map(
        (s) => `${s.kind} ${s.semantic} all=${s.is_all} attrs=${s.attr_count}`,
      );
      const roles = (await store.allSql<Row>('SELECT * FROM policy_side_roles WHERE policy_id = ?', row.id)).map(
        (r) => `${r.kind} ${r.role_type} ${r.value}`,
      );
      if (
        JSON.stringify(sorted(sides)) !== JSON.stringify(sorted(expectedSides)) ||
        JSON.stringify(sorted(roles)) !== JSON.stringify(sorted(expectedRoles))
      ) {
        problems.push(`${spec.type} ${String(row.id)}: not indexed as written`);
      }
    }
  }
  return problems;
}

let app: TestApp;
let admin: ApiClient;
let afterStart: string[];

beforeAll(async () => {
  app = await startTestApp();
  // before anything (a login, a service listing) touches an entity
  afterStart = await writtenAroundWritePath(app.core.store);
  admin = await app.adminClient();
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

const check = async () => expect(await writtenAroundWritePath(app.core.store)).toEqual([]);
const identityByName = (name: string) => app.core.store.getSql<Row>('SELECT * FROM identities WHERE name = ?', name);

describe('rows Weft writes itself go through the resource write path', () => {
  it('the check sees a row written around the write path (the start-up repair is off)', async () => {
    const store = app.core.store;
    const now = new Date().toISOString();
    await store.runSql(
      "INSERT INTO identities (id, name, type_id, auth_policy_id, role_attributes, created_at, updated_at) VALUES ('raw-1', 'raw-1', 'User', 'default', '[\"x\"]', ?, ?)",
      now,
      now,
    );
    try {
      expect(await writtenAroundWritePath(store)).toEqual(['identity raw-1: unclassified']);
    } finally {
      await store.runSql("DELETE FROM identities WHERE id = 'raw-1'");
    }
    await check();
  });

  it('a fresh start: the default admin, the built-in router, its Router identity and system policy', async () => {
    // the start-up repair was reached (and did nothing): if it is renamed, the mock above must follow
    expect(repair.calls).toBeGreaterThan(0);
    expect(afterStart).toEqual([]);
    const store = app.core.store;
    const adminRow = (await store.getSql<Row>('SELECT * FROM identities WHERE is_default_admin = 1'))!;
    expect(adminRow).toMatchObject({ name: 'Default Admin', type_id: 'User', is_admin: 1, auth_policy_id: 'default', role_attributes: '[]' });
    const builtin = (await store.getSql<Row>('SELECT * FROM edge_routers WHERE is_tunneler_enabled = 1'))!;
    expect(await store.getSql<Row>('SELECT * FROM identities WHERE id = ?', builtin.id)).toMatchObject({ name: builtin.name, type_id: 'Router' });
    expect(await store.getSql<Row>('SELECT * FROM edge_router_policies WHERE id = ?', builtin.id)).toMatchObject({ is_system: 1 });
  });

  it('tunneler-enabled routers: created, enabled later, renamed, given attributes, disabled and deleted', async () => {
    const store = app.core.store;
    const a = await admin.create('/edge-routers', { name: 'sw-tun-a', isTunnelerEnabled: true, roleAttributes: ['sw-edge'] });
    await check();
    expect(await store.getSql<Row>('SELECT * FROM identities WHERE id = ?', a)).toMatchObject({
      name: 'sw-tun-a',
      type_id: 'Router',
      role_attributes: '[]',
    });
    expect(await store.getSql<Row>('SELECT * FROM edge_router_policies WHERE id = ?', a)).toMatchObject({
      name: `edge-router-${a}-system`,
      semantic: 'AnyOf',
      identity_roles: JSON.stringify([`@${a}`]),
      edge_router_roles: JSON.stringify([`@${a}`]),
      is_system: 1,
    });

    const b = await admin.create('/edge-routers', { name: 'sw-tun-b', isTunnelerEnabled: false });
    await check();
    expect((await admin.patch(`/edge-routers/${b}`, { isTunnelerEnabled: true })).status).toBe(200);
    await check();
    expect((await admin.patch(`/edge-routers/${b}`, { name: 'sw-tun-b2' })).status).toBe(200);
    await check();
    expect(await store.getSql<Row>('SELECT name FROM identities WHERE id = ?', b)).toEqual({ name: 'sw-tun-b2' });
    // the router identity may be given role attributes like any identity; they go with it
    expect((await admin.patch(`/identities/${b}`, { roleAttributes: ['sw-router-identity'] })).status).toBe(200);
    await check();
    expect((await admin.patch(`/edge-routers/${b}`, { isTunnelerEnabled: false })).status).toBe(200);
    await check();
    expect(await store.getSql('SELECT 1 FROM identities WHERE id = ?', b)).toBeUndefined();
    expect(await store.getSql('SELECT 1 FROM edge_router_policies WHERE id = ?', b)).toBeUndefined();
    expect((await admin.patch(`/edge-routers/${b}`, { isTunnelerEnabled: true })).status).toBe(200);
    await check();
    expect((await admin.del(`/edge-routers/${a}`)).status).toBe(200);
    expect((await admin.del(`/edge-routers/${b}`)).status).toBe(200);
    await check();
    expect(await store.getSql('SELECT 1 FROM identities WHERE id IN (?, ?)', a, b)).toBeUndefined();
  });

  it('one-time token and password enrollment', async () => {
    const ott = await admin.create('/identities', {
      name: 'sw-ott',
      type: 'Device',
      isAdmin: false,
      roleAttributes: ['sw'],
      enrollment: { ott: true },
    });
    await check();
    const ottToken = (await admin.get(`/identities/${ott}`)).body.data.enrollment.ott.token;
    expect((await app.client().post('/enroll/ott', { token: ottToken, clientCsr: (await csr()).csrPem }, { api: 'client' })).status).toBe(200);
    await check();

    const updb = await admin.create('/identities', { name: 'sw-updb', type: 'User', isAdmin: false, enrollment: { updb: 'sw-updb-user' } });
    const updbToken = (await admin.get(`/identities/${updb}`)).body.data.enrollment.updb.token;
    expect((await app.client().post(`/enroll/updb?token=${updbToken}`, { password: 'sw-pass-123' }, { api: 'client' })).status).toBe(200);
    await check();
  });

  it('CA enrollment: one-time token with a CA certificate, and auto enrollment creating the identity', async () => {
    const ca = await externalCa('System Writes CA');
    const caId = await admin.create('/cas', {
      name: 'sw-ca',
      certPem: ca.certPem,
      isAuthEnabled: true,
      isAutoCaEnrollmentEnabled: true,
      isOttCaEnrollmentEnabled: true,
      identityRoles: ['sw-auto', 'sw-fleet'],
      identityNameFormat: '[caName]-[commonName]',
    });
    await verifyCa(caId, ca);

    const ottca = await admin.create('/identities', { name: 'sw-ottca', type: 'Device', isAdmin: false, enrollment: { ottca: caId } });
    const token = (await admin.get(`/identities/${ottca}`)).body.data.enrollment.ottca.token;
    const device = await clientCert(ca, { commonName: 'sw-ottca-device' });
    expect((await app.client().withCert(device.certPem, device.keyPem).post('/enroll/ottca', { token }, { api: 'client' })).status).toBe(200);
    await check();

    const auto = await clientCert(ca, { commonName: 'sw-sensor' });
    expect((await app.client().withCert(auto.certPem, auto.keyPem).post('/enroll/ca', {}, { api: 'client' })).status).toBe(200);
    expect(await identityByName('sw-ca-sw-sensor')).toMatchObject({ role_attributes: JSON.stringify(['sw-auto', 'sw-fleet']) });
    await check();
  });

  it('token enrollment creating the identity from an external JWT', async () => {
    const signer = await createRootCa({ commonName: 'System Writes IdP', keyAlg: 'EC-P256' });
    const signerId = await admin.create('/external-jwt-signers', {
      name: 'sw-idp',
      enabled: true,
      issuer: 'https://sw-idp.example.test',
      audience: 'sw',
      certPem: signer.certPem,
      claimsProperty: 'sub',
      useExternalId: true,
      enrollToCertEnabled: true,
      enrollToTokenEnabled: true,
      enrollNameClaimsSelector: 'preferred_username',
      enrollAttributeClaimsSelector: '/groups',
    });
    const jwt = await new SignJWT({ sub: 'sw-ext-1', preferred_username: 'sw-token-user', groups: ['sw-staff'] })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer('https://sw-idp.example.test')
      .setAudience('sw')
      .setExpirationTime('5m')
      .setIssuedAt()
      .sign(await importPKCS8(signer.keyPem, 'ES256'));
    const r = await app.client().post(
      '/enroll/token',
      { clientCsr: (await csr()).csrPem },
      {
        api: 'client',
        headers: { authorization: `Bearer ${jwt}`, 'svc-token-issuer-id': signerId },
      },
    );
    expect(r.status).toBe(200);
    expect(await identityByName('sw-token-user')).toMatchObject({ role_attributes: JSON.stringify(['sw-staff']) });
    await check();
  });

  it('identity import', async () => {
    const result = await importIdentities(
      app.core.system,
      'name,type,attributes,enrollment\nsw-import-1,Device,sw-imported,ott\nsw-import-2,User,,none\n',
      { dryRun: false },
    );
    expect(result.rows.map((row) => row.ok)).toEqual([true, true]);
    await check();
  });
});

async function verifyCa(id: string, ca: CertAndKey): Promise<void> {
  const token = (await admin.get(`/cas/${id}`)).body.data.verificationToken;
  const proof = await clientCert(ca, { commonName: token });
  const r = await admin.post(`/cas/${id}/verify`, undefined, { raw: proof.certPem, contentType: 'text/plain' });
  if (r.status !== 200) throw new Error(`verify failed: ${r.text}`);
}
