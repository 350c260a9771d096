// The write gate: every write of a resource hands (type, op, before, after) to the core's subscribers inside its
// transaction — the policy index, the audit log and the outbox of change events — so what they write commits or rolls
// back with the change. Runs on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identities } from '../../src/main/core/policy/identities';
import { createResource } from '../../src/main/core/entities/resource';
import { coversWrite, PendingAudit } from '../../src/main/core/ops/audit';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ConsoleClient } from '../support/consoleTrpc';

let app: TestApp;
let admin: ApiClient;
let ui: ConsoleClient;

beforeAll(async () => {
  app = await startTestApp({ consoleAddress: '127.0.0.1:0' });
  admin = await app.adminClient();
  ui = await new ConsoleClient(app.urls.console!).login('admin', 'admin-password-1');
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

const events = (entityId: string) =>
  app.core.store.allSql<{ entity: string; op: string; before_row: string | null; after_row: string | null }>(
    'SELECT entity, op, before_row, after_row FROM outbox WHERE entity_id = ? ORDER BY seq',
    entityId,
  );
const auditOf = async (entityId: string) =>
  ((await admin.get(`/audit-log?filter=${encodeURIComponent(`entityId = "${entityId}"`)}`)).body.data as any[]).reverse();

describe('the write gate', () => {
  it('a write through REST leaves its change events and one audit entry, from the same transaction', async () => {
    const id = await admin.create('/services', { name: 'gate-svc', encryptionRequired: true, roleAttributes: ['gate'] });
    expect((await admin.patch(`/services/${id}`, { roleAttributes: ['gate', 'more'] })).status).toBe(200);
    expect((await admin.del(`/services/${id}`)).status).toBe(200);
    const changes = await events(id);
    expect(changes.map((e) => e.op)).toEqual(['create', 'patch', 'delete']);
    expect(JSON.parse(changes[1]!.before_row!).roleAttributes).toEqual(['gate']);
    expect(JSON.parse(changes[1]!.after_row!).roleAttributes).toEqual(['gate', 'more']);
    expect(changes[2]!.after_row).toBeNull();
    expect((await auditOf(id)).map((e) => [e.action, e.outcome, e.source])).toEqual([
      ['create', 'success', 'management'],
      ['patch', 'success', 'management'],
      ['delete', 'success', 'management'],
    ]);
  });

  it('a write through the console: one entry, as its REST twin reads', async () => {
    const made = await ui.ok('mutate', 'resources.create', { resource: 'identities', body: { name: 'gate-ui', type: 'Device', isAdmin: false } });
    expect((await auditOf(made.id)).map((e) => [e.action, e.entityType, e.route, e.source])).toEqual([
      ['create', 'identities', 'POST /identities', 'console'],
    ]);
    expect((await events(made.id)).map((e) => e.op)).toEqual(['create']);
  });

  it('a write that rolls back leaves no audit entry and no change event; its failure is recorded', async () => {
    // the identity is inserted, then its enrollment fails in the same transaction (no such CA)
    const r = await admin.post('/identities', { name: 'gate-rolled-back', type: 'Device', isAdmin: false, enrollment: { ottca: 'no-such-ca' } });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect((await admin.get(`/identities?filter=${encodeURIComponent('name = "gate-rolled-back"')}`)).body.data).toEqual([]);
    const last = (await admin.get('/audit-log?limit=1')).body.data[0];
    expect(last).toMatchObject({ action: 'create', entityType: 'identities', outcome: 'failure', entityId: null });
    expect(await app.core.store.allSql("SELECT 1 FROM outbox WHERE entity = 'identities' AND after_row LIKE '%gate-rolled-back%'")).toEqual([]);

    // and the gate's own writes, directly: a transaction that fails after the write takes them all back
    const pending = new PendingAudit(
      { source: 'management', action: 'create', entityType: 'identities', route: 'POST /identities', outcome: 'success' },
      coversWrite('identities', undefined),
    );
    let madeId = '';
    const ctx = { ...app.core.system, onWrite: pending.onWrite };
    await expect(
      app.core.store.tx(async () => {
        madeId = await createResource(ctx, identities, { name: 'gate-core', type: 'Device', isAdmin: false, roleAttributes: ['gate'] });
        throw new Error('fails after the write');
      }),
    ).rejects.toThrow('fails after the write');
    expect(madeId).not.toBe('');
    expect(await app.core.store.allSql('SELECT 1 FROM audit_log WHERE id = ?', pending.id)).toEqual([]);
    expect(await events(madeId)).toEqual([]);
    expect(await app.core.store.allSql("SELECT 1 FROM role_attributes WHERE entity_id = ? AND entity_type = 'identity'", madeId)).toEqual([]);
  });
});
