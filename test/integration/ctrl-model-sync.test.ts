// The router data model a stock router keeps, on the wire (scripted routers; the interop tests run `ziti router run`):
// the whole model when a router subscribes, then a DataState.ChangeSet per committed change with only what changed,
// at the next index, in an order OpenZiti's router applies safely (common/router_data_model.go). A replica applying
// them as that router does must equal the whole model a router subscribing afterwards gets, after a burst of writes
// started in the same tick with failures among them. A router that renews behind gets the change sets it missed; one
// of another timeline gets the whole model; a write that changes nothing a router holds sends nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtoReader, ProtoWriter } from '../../src/main/ctrl/protobuf';
import { message, type Message } from '../../src/main/router/channel/wire';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { hostsAndClientsService } from '../support/edge';
import { connectedRouter, enrolledRouter, type ScriptedRouter } from '../support/scriptedRouter';

const DATA_STATE = 20500;
const CHANGE_SET = 20501;
const POLICY = 12;
const POLICY_CHANGE = 16;
const IDENTITY = 10;
const SERVICE = 11;
const ACTION = ['create', 'update', 'delete'] as const;
const RELATED = { service: 1, identity: 2, postureCheck: 3 };

/** What a router holds: entities by `field/id` (their encoded model) and each policy's related ids by `policy/type`. */
class Replica {
  index = 0n;
  timelineId = '';
  entities = new Map<string, string>();
  relations = new Map<string, Set<string>>();

  static of(state: Message): Replica {
    const r = new Replica();
    const s = new ProtoReader(state.body);
    for (const e of s.messages(1)) r.apply(e);
    r.index = s.bigint(2);
    r.timelineId = s.str(3);
    return r;
  }

  copy(): Replica {
    const r = new Replica();
    r.index = this.index;
    r.timelineId = this.timelineId;
    r.entities = new Map(this.entities);
    r.relations = new Map([...this.relations].map(([k, v]) => [k, new Set(v)]));
    return r;
  }

  /** A ChangeSet, checked as OpenZiti's router would need it: the next index, each event applicable where it stands. */
  changeSet(m: Message): void {
    const c = new ProtoReader(m.body);
    expect(c.bigint(1)).toBe(this.index + 1n);
    this.index = c.bigint(1);
    for (const e of c.messages(3)) this.apply(e);
  }

  private apply(e: ProtoReader): void {
    const action = ACTION[e.uint(1)]!;
    const change = e.message(POLICY_CHANGE);
    if (change) {
      const policy = change.str(1);
      const type = change.uint(3);
      const ids = change.strs(2);
      // an identity must exist before a policy names it (the router would store a nil identity), a policy before
      // its services are added (the router drops them)
      if (type === RELATED.identity) for (const id of ids) expect(this.entities.has(`${IDENTITY}/${id}`), id).toBe(true);
      else expect(this.entities.has(`${POLICY}/${policy}`), policy).toBe(true);
      const set = this.relations.get(`${policy}/${type}`) ?? new Set<string>();
      for (const id of ids) void (change.bool(4) ? set.add(id) : set.delete(id));
      this.relations.set(`${policy}/${type}`, set);
      return;
    }
    const [field, model] = [IDENTITY, SERVICE, POLICY, 13, 14, 17, 18].map((f) => [f, e.message(f)] as const).find(([, m]) => m)!;
    const id = field === 14 ? model!.str(2) : model!.str(1);
    const key = `${field}/${id}`;
    if (action === 'delete') {
      expect(this.entities.has(key), key).toBe(true);
      // what named it is gone first
      if (field === POLICY) for (const t of Object.values(RELATED)) expect(this.relations.get(`${id}/${t}`)?.size ?? 0).toBe(0);
      if (field === IDENTITY || field === SERVICE) {
        const type = field === IDENTITY ? RELATED.identity : RELATED.service;
        for (const [k, set] of this.relations) if (k.endsWith(`/${type}`)) expect(set.has(id), `${k} names ${id}`).toBe(false);
      }
      this.entities.delete(key);
      for (const t of Object.values(RELATED)) if (field === POLICY) this.relations.delete(`${id}/${t}`);
      return;
    }
    expect(this.entities.has(key), `${action} ${key}`).toBe(action === 'update');
    this.entities.set(key, e.buf(field).toString('hex'));
  }

  /** Entities and non-empty relations, comparable. */
  view() {
    const relations = [...this.relations].filter(([, s]) => s.size).map(([k, s]) => [k, [...s].sort()] as const);
    return { entities: Object.fromEntries(this.entities), relations: Object.fromEntries(relations) };
  }
}

let app: TestApp;
let admin: ApiClient;
const routers: ScriptedRouter[] = [];

const subscribe = (router: ScriptedRouter, sub: { currentIndex?: bigint; timelineId?: string; renew?: boolean } = {}) =>
  router.channel.send(
    message(
      20505,
      [],
      new ProtoWriter()
        .uint(1, sub.currentIndex ?? 0n)
        .uint(2, 300)
        .uint(3, sub.renew ?? false)
        .bytes(4, sub.timelineId ?? '')
        .finish(),
    ),
  );

async function subscribed(name: string, sub?: Parameters<typeof subscribe>[1]): Promise<ScriptedRouter> {
  const router = await connectedRouter(app, await enrolledRouter(app, admin, name));
  routers.push(router);
  subscribe(router, sub);
  return router;
}

/** A fresh router's whole model, once the store has settled. */
async function wholeModel(name: string): Promise<Replica> {
  const router = await subscribed(name);
  return Replica.of(await router.waitFor((m) => m.contentType === DATA_STATE));
}

/** The replica brought to `index` by the router's change sets, each the next index. */
async function follow(router: ScriptedRouter, replica: Replica, index: bigint): Promise<Replica> {
  while (replica.index < index) {
    const want = replica.index + 1n;
    replica.changeSet(await router.waitFor((m) => m.contentType === CHANGE_SET && new ProtoReader(m.body).bigint(1) === want));
  }
  return replica;
}

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.adminClient();
  await hostsAndClientsService(admin, 'model-sync');
});
afterAll(async () => {
  for (const r of routers) r.channel.close();
  await admin?.close();
  await app?.stop();
});

describe('the router data model over the control channel', () => {
  it('a change after the whole model is one change set with only it, at the next index', async () => {
    const router = await subscribed('sync-r1');
    const replica = Replica.of(await router.waitFor((m) => m.contentType === DATA_STATE));
    const id = await admin.create('/identities', { name: 'sync-one', type: 'Device', isAdmin: false });
    const m = await router.waitFor((x) => x.contentType === CHANGE_SET);
    const c = new ProtoReader(m.body);
    expect(c.bigint(1)).toBe(replica.index + 1n);
    expect(c.messages(3).map((e) => [ACTION[e.uint(1)], e.message(IDENTITY)?.str(1)])).toEqual([['create', id]]);
    // tags alone change nothing the router holds: the next change set is the rename, one index on
    await admin.patch(`/identities/${id}`, { tags: { note: 'x' } });
    await admin.patch(`/identities/${id}`, { name: 'sync-one-renamed' });
    const next = await router.waitFor((x) => x.contentType === CHANGE_SET && x !== m);
    const n = new ProtoReader(next.body);
    expect(n.bigint(1)).toBe(replica.index + 2n);
    expect(n.messages(3).map((e) => [ACTION[e.uint(1)], e.message(IDENTITY)?.str(2)])).toEqual([['update', 'sync-one-renamed']]);
    expect(router.received.filter((x) => x.contentType === DATA_STATE)).toHaveLength(1);
  });

  it('after a burst of writes in the same tick, failures among them, the replica equals the whole model', async () => {
    const router = await subscribed('sync-r2');
    const before = Replica.of(await router.waitFor((m) => m.contentType === DATA_STATE));
    const doomed = await admin.create('/identities', { name: 'sync-doomed', type: 'Device', isAdmin: false, roleAttributes: ['burst'] });
    const leaving = await admin.create('/identities', { name: 'sync-leaving', type: 'Device', isAdmin: false, roleAttributes: ['burst'] });
    const oldPolicy = await admin.create('/service-policies', {
      name: 'sync-old',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#burst'],
      serviceRoles: ['#all'],
    });
    const svc = await admin.create('/services', { name: 'sync-svc', encryptionRequired: true });

    const create = (path: string, body: unknown) => admin.post(path, body).then((r) => r.status);
    const statuses = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) =>
        create('/identities', { name: `sync-burst-${i}`, type: 'Device', isAdmin: false, roleAttributes: i % 2 ? ['burst'] : [] }),
      ),
      create('/identities', { name: 'sync-burst-0', type: 'Device', isAdmin: false }),
      create('/service-policies', { name: 'sync-bad', type: 'Sideways', semantic: 'AnyOf' }),
      create('/service-policies', { name: 'sync-new', type: 'Bind', semantic: 'AnyOf', identityRoles: ['#burst'], serviceRoles: [`@${svc}`] }),
      admin.del(`/identities/${doomed}`).then((r) => r.status),
      admin.patch(`/identities/${leaving}`, { roleAttributes: [] }).then((r) => r.status),
      admin.del(`/service-policies/${oldPolicy}`).then((r) => r.status),
      admin.patch(`/services/${svc}`, { name: 'sync-svc-renamed' }).then((r) => r.status),
    ]);
    // the duplicate name and the invalid policy are refused; the rest succeed (whichever of the two same-named
    // creates came first)
    expect(statuses.filter((s) => s >= 400)).toHaveLength(2);
    expect(statuses.filter((s) => s < 300)).toHaveLength(statuses.length - 2);

    const whole = await wholeModel('sync-r2-check');
    const replica = await follow(router, before.copy(), whole.index);
    expect(replica.view()).toEqual(whole.view());
    expect(replica.view().relations).not.toHaveProperty(`${oldPolicy}/2`);
    expect(Object.keys(replica.view().entities)).not.toContain(`${IDENTITY}/${doomed}`);
  });

  it('a router renewing behind gets the change sets it missed; one of another timeline gets the whole model', async () => {
    const first = await subscribed('sync-r3');
    const start = Replica.of(await first.waitFor((m) => m.contentType === DATA_STATE));
    for (let i = 0; i < 3; i++) await admin.create('/identities', { name: `sync-later-${i}`, type: 'Device', isAdmin: false });
    const whole = await wholeModel('sync-r3-check');

    // as a router restarting with the model it saved at `start`
    const behind = await subscribed('sync-r3-behind', { currentIndex: start.index, timelineId: start.timelineId });
    const caughtUp = await follow(behind, start.copy(), whole.index);
    expect(caughtUp.view()).toEqual(whole.view());
    expect(behind.received.filter((m) => m.contentType === DATA_STATE)).toHaveLength(0);

    const elsewhere = await subscribed('sync-r3-other', { currentIndex: start.index, timelineId: 'another-controller' });
    expect(Replica.of(await elsewhere.waitFor((m) => m.contentType === DATA_STATE)).view()).toEqual(whole.view());
    // a renewal at the index it holds sends nothing more
    const held = behind.received.length;
    subscribe(behind, { currentIndex: whole.index, timelineId: start.timelineId, renew: true });
    await admin.create('/identities', { name: 'sync-after-renew', type: 'Device', isAdmin: false });
    const m = await behind.waitFor((x) => behind.received.indexOf(x) >= held && x.contentType === CHANGE_SET);
    expect(new ProtoReader(m.body).bigint(1)).toBe(whole.index + 1n);
  });
});
