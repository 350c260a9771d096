import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';

let app: TestApp;
let admin: ApiClient;
const ids: Record<string, string> = {};

beforeAll(async () => {
  app = await startTestApp({ routerListener: 'off' }); // only the identities the tests make (no router identity)
  admin = await app.adminClient();
  const people = [
    { name: 'alice', roleAttributes: ['sales', 'emea'], tags: { team: 'red', vip: true }, defaultHostingCost: 10 },
    { name: 'bob', roleAttributes: ['sales'], tags: { team: 'blue' }, defaultHostingCost: 20 },
    { name: 'carol', roleAttributes: ['eng', 'emea'], tags: { team: 'red' }, defaultHostingCost: 30 },
    { name: 'dave', roleAttributes: [], tags: {}, defaultHostingCost: 40 },
    { name: 'Eve "quoted"', roleAttributes: ['eng'], tags: { team: 'Blue' }, defaultHostingCost: 50 },
  ];
  for (const p of people) ids[p.name] = await admin.create('/identities', { ...p, type: 'User', isAdmin: false });
});
afterAll(async () => {
  await admin.close();
  await app.stop();
});

async function names(filter: string, extra = ''): Promise<string[]> {
  const limit = /\blimit\b/.test(filter) ? '' : 'limit=500&';
  const r = await admin.get(`/identities?${limit}filter=${encodeURIComponent(filter)}${extra}`);
  if (r.status !== 200) throw new Error(`${filter}: ${r.status} ${r.text}`);
  return r.body.data.map((i: any) => i.name).filter((n: string) => n !== 'Default Admin');
}

describe('ZitiQL filters over HTTP (compiled to SQL)', () => {
  it.each([
    ['name = "alice"', ['alice']],
    ['name != "alice" and isAdmin = false', ['bob', 'carol', 'dave', 'Eve "quoted"']],
    ['name contains "o"', ['bob', 'carol', 'Eve "quoted"']],
    ['name contains "ar"', ['carol']],
    ['name icontains "EVE"', ['Eve "quoted"']],
    ['name = "Eve \\"quoted\\""', ['Eve "quoted"']],
    ['name in ["alice", "dave", "zed"]', ['alice', 'dave']],
    ['name not in ["alice", "dave"] and isAdmin = false', ['bob', 'carol', 'Eve "quoted"']],
    ['defaultHostingCost between 20 and 40', ['bob', 'carol']],
    ['defaultHostingCost >= 30 and defaultHostingCost < 50', ['carol', 'dave']],
    ['(name = "alice" or name = "bob") and defaultHostingCost > 10', ['bob']],
    ['not (name contains "a") and isAdmin = false', ['bob', 'Eve "quoted"']],
    ['tags.team = "red"', ['alice', 'carol']],
    ['tags.vip = true', ['alice']],
    ['tags.team = null and isAdmin = false', ['dave']],
    ['anyOf(roleAttributes) = "emea"', ['alice', 'carol']],
    ['anyOf(roleAttributes) in ["eng", "sales"]', ['alice', 'bob', 'carol', 'Eve "quoted"']],
    ['allOf(roleAttributes) = "sales"', ['bob']],
    ['isEmpty(roleAttributes) and isAdmin = false', ['dave']],
    ['createdAt > datetime(2000-01-01T00:00:00Z) and name = "bob"', ['bob']],
    ['createdAt < datetime(2000-01-01T00:00:00Z)', []],
    ['externalId = null and name = "dave"', ['dave']],
    ['NAME = "alice"'.replace('NAME', 'name').replace('=', '=') + ' AND isAdmin = FALSE', ['alice']],
  ])('%s', async (filter, expected) => {
    expect((await names(filter)).sort()).toEqual([...expected].sort());
  });

  it('sort by, skip and limit inside the filter', async () => {
    expect(await names('isAdmin = false sort by defaultHostingCost desc limit 2')).toEqual(['Eve "quoted"', 'dave']);
    expect(await names('isAdmin = false sort by name asc skip 1 limit 2')).toEqual(['alice', 'bob']);
    const r = await admin.get(`/identities?filter=${encodeURIComponent('isAdmin = false sort by defaultHostingCost limit 2 skip 1')}`);
    expect(r.status).toBe(400); // skip comes before limit in ZitiQL
  });

  it.each([
    'name = ',
    'nosuchfield = "x"',
    'name > 3',
    'defaultHostingCost = "x"',
    'name contains 5 and',
    '(name = "a"',
    'name = "unterminated',
    'createdAt > datetime(yesterday)',
    'roleAttributes = "x"',
    'sort by roleAttributes',
    'name = "x"; DROP TABLE identities',
    'name = "x" --',
    'tags. = "x"',
  ])('bad filter %s → 400 INVALID_FILTER', async (filter) => {
    const r = await admin.get(`/identities?filter=${encodeURIComponent(filter)}`);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_FILTER');
    expect(r.body.error.message).toBeTypeOf('string');
  });

  it('the table is intact after injection attempts', async () => {
    expect((await admin.get('/identities')).body.meta.pagination.totalCount).toBe(6);
  });
});

describe('pagination', () => {
  it('defaults to limit 10 and reports totalCount and filterable fields', async () => {
    const r = (await admin.get('/identities')).body;
    expect(r.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 6 });
    expect(r.meta.filterableFields).toEqual(expect.arrayContaining(['name', 'createdAt', 'roleAttributes', 'isAdmin']));
  });

  it('pages through without gaps or repeats', async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < 6; offset += 2) {
      const r = (await admin.get(`/identities?limit=2&offset=${offset}`)).body;
      expect(r.meta.pagination).toEqual({ limit: 2, offset, totalCount: 6 });
      seen.push(...r.data.map((i: any) => i.id));
    }
    expect(new Set(seen).size).toBe(6);
    expect((await admin.get('/identities?limit=2&offset=6')).body.data).toEqual([]);
  });

  it('edges: limit 500 ok, 501/0/-1/non-integers rejected, offset bounds', async () => {
    expect((await admin.get('/identities?limit=500')).status).toBe(200);
    expect((await admin.get('/identities?limit=1')).body.data).toHaveLength(1);
    for (const q of ['limit=501', 'limit=0', 'limit=-1', 'limit=2.5', 'limit=x', 'offset=-1', 'offset=100001', 'offset=1.5']) {
      const r = await admin.get(`/identities?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error.code).toBe('INVALID_PAGINATION');
    }
    expect((await admin.get('/identities?offset=100000')).body.data).toEqual([]);
  });

  it('explicit limit/offset parameters win over the filter', async () => {
    const r = (await admin.get(`/identities?limit=1&filter=${encodeURIComponent('true sort by name limit 3')}`)).body;
    expect(r.data).toHaveLength(1);
    expect(r.meta.pagination.limit).toBe(1);
  });
});
