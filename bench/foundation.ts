import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { startApp } from '../src/main/app';
import { identities } from '../src/main/core/entities/identities';
import { createResource, listSql } from '../src/main/core/entities/resource';
import { benchConfigFile, load, printTable, rowOf, startChild, timeSync, type Row } from './lib';

const ADMIN = { username: 'admin', password: 'bench-admin-password' };

/** Seeds `count` identities through the core (not over HTTP) in batched transactions. */
export async function seedIdentities(dataDir: string, count: number): Promise<void> {
  const app = await startApp({
    dataDir,
    apiAddress: '127.0.0.1:0',
    logger: pino({ level: 'silent' }),
    env: { WEFT_ADMIN_USERNAME: ADMIN.username, WEFT_ADMIN_PASSWORD: ADMIN.password },
  });
  const ctx = app.core.system;
  const batch = 2000;
  for (let i = 0; i < count; i += batch) {
    app.core.store.tx(() => {
      for (let j = i; j < Math.min(count, i + batch); j++) {
        createResource(ctx, identities, {
          name: `identity-${String(j).padStart(6, '0')}`,
          type: 'Device',
          isAdmin: false,
          roleAttributes: [`group-${j % 50}`, j % 2 ? 'odd' : 'even'],
        });
      }
    });
  }
  await app.close();
}

async function login(origin: string, ca: string): Promise<string> {
  const { request, Agent } = await import('undici');
  const res = await request(`${origin}/edge/management/v1/authenticate?method=password`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
    dispatcher: new Agent({ connect: { ca } }),
  });
  return ((await res.body.json()) as { data: { token: string } }).data.token;
}

async function record(origin: string, ca: string, paths: string[], headers: Record<string, string>) {
  const { request, Agent } = await import('undici');
  const dispatcher = new Agent({ connect: { ca } });
  const out: Record<string, { status: number; contentType: string; body: string }> = {};
  for (const p of paths) {
    const res = await request(origin + p, { headers, dispatcher });
    out[p] = { status: res.statusCode, contentType: String(res.headers['content-type']), body: await res.body.text() };
  }
  return out;
}

/**
 * Issue 2's table: GET /version and identity lists (no filter, `name =`, `name contains`) at 100,000 identities,
 * against the floor server (same bytes, same certificate) and the same SQL run directly on better-sqlite3.
 */
export async function foundationBench(workDir: string, opts: { identities: number; durationMs: number }): Promise<Row[]> {
  const dataDir = join(workDir, 'foundation');
  console.log(`seeding ${opts.identities} identities through the core…`);
  await seedIdentities(dataDir, opts.identities);
  const weft = await startChild(new URL('./weftServer.ts', import.meta.url).pathname, [dataDir, benchConfigFile(workDir)]);
  const rows: Row[] = [];
  try {
    const origin = weft.info.origin as string;
    const { readFileSync } = await import('node:fs');
    const ca = readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8');
    const token = await login(origin, ca);
    const auth = { 'zt-session': token };
    const target = `identity-${String(Math.floor(opts.identities / 2)).padStart(6, '0')}`;
    const needle = String(Math.floor(opts.identities / 3)).padStart(6, '0');
    const filters = { none: undefined, 'name =': `name = "${target}"`, 'name contains': `name contains "${needle}"` };
    const cases: Array<{ name: string; path: string; filter?: string }> = [
      { name: 'GET /version', path: '/edge/client/v1/version' },
      ...Object.entries(filters).map(([k, f]) => ({
        name: `list identities limit=10 (${k})`,
        path: `/edge/management/v1/identities?limit=10${f ? `&filter=${encodeURIComponent(f)}` : ''}`,
        filter: f,
      })),
    ];
    const responses = await record(origin, ca, cases.map((c) => c.path), auth);
    const specFile = join(workDir, 'floor.json');
    writeFileSync(specFile, JSON.stringify({
      key: readFileSync(join(dataDir, 'pki', 'server.key.pem'), 'utf8'),
      cert: readFileSync(join(dataDir, 'pki', 'server-chain.pem'), 'utf8'),
      responses,
    }));
    const floor = await startChild(new URL('./floorServer.ts', import.meta.url).pathname, [specFile]);
    const db = new Database(join(dataDir, 'weft.db'), { readonly: true });
    try {
      for (const c of cases) {
        const w = await load({ origin, path: c.path, headers: auth, ca, durationMs: opts.durationMs });
        const f = await load({ origin: floor.info.origin, path: c.path, ca, durationMs: opts.durationMs });
        rows.push(rowOf(c.name, 'weft', w));
        rows.push(rowOf(c.name, 'floor (node:https, same bytes)', f));
        const costRatio = f.rps / w.rps;
        if (c.path.includes('/identities')) {
          const sqlUs = timeSql(db, c.filter);
          const budgetUs = sqlUs + 1e6 / f.rps;
          const weftUs = 1e6 / w.rps;
          rows.push({ scenario: c.name, target: 'raw SQL on better-sqlite3', note: `${sqlUs.toFixed(1)} µs per count+page` });
          const goal = c.filter?.includes('contains') ? 1.5 : 2;
          const ratio = c.filter?.includes('contains') ? weftUs / budgetUs : costRatio;
          rows.push({
            scenario: c.name,
            target: 'check',
            note: `${ratio.toFixed(2)}× ${c.filter?.includes('contains') ? '(SQL + floor)' : 'floor'} per request; goal ≤ ${goal}× ${ratio <= goal ? 'MET' : 'NOT MET'}`,
          });
        } else {
          rows.push({ scenario: c.name, target: 'check', note: `${costRatio.toFixed(2)}× floor per request; goal ≤ 2× ${costRatio <= 2 ? 'MET' : 'NOT MET'}` });
        }
      }
    } finally {
      db.close();
      await floor.stop();
    }
  } finally {
    await weft.stop();
  }
  printTable('Foundation: /version and identity lists at ' + opts.identities + ' identities', rows);
  return rows;
}

/** The exact count + page SQL Weft runs for an identity list, prepared once and timed on better-sqlite3. */
function timeSql(db: Database.Database, filter: string | undefined): number {
  const q = listSql(identities, { filter, limit: 10 });
  const count = db.prepare(q.countSql);
  const page = db.prepare(q.pageSql);
  return timeSync(() => {
    count.get(...q.args);
    page.all(...q.args, q.limit, q.offset);
  }, filter?.includes('contains') ? 50 : 2000);
}
