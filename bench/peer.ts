import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import argon2 from 'argon2';
import { ARGON2_PARAMS } from '../src/main/core/auth/passwords';
import {
  checkRow,
  interleaved,
  medianRatio,
  memoryMiB,
  printTable,
  rowOf,
  startChild,
  weftNodeArgs,
  type LoadOptions,
  type Measurement,
  type Row,
} from './lib';
import { describeModel, LARGE, planModel, scaled } from './model';
import { INSTALL_COMMAND, seedOpenZiti, startOpenZiti, zitiBinary, type OpenZitiController } from './openziti';
import { Http, seedWeft } from './policy';

/**
 * The peer: the real OpenZiti controller (`ziti edge quickstart`, no router) and Weft on the same model, seeded with
 * the same entities (Weft through its core, OpenZiti through its Management API), measured in interleaved rounds
 * on the same requests. Also password logins under 50 concurrent clients against the raw argon2id rate of this
 * machine with Weft's parameters.
 */
const ADMIN = { username: 'admin', password: 'bench-admin-password' };
const USER_PASSWORD = 'bench-user-password';
const LOGIN_CLIENTS = 50;
const GOAL_LOGIN_SHARE = 0.8;
const GOAL_LOGIN_P99_MS = 2000;

interface System {
  name: 'weft' | 'openziti';
  origin: string;
  ca: string;
  http: Http;
  pid?: number;
  admin: string;
  user: string;
  /** API sessions of the sampled identity for session creation */
  tokens: string[];
  sampleIdentity: string;
  /** the sampled identity's dialable services, by name */
  dialable: Array<{ id: string; name: string }>;
}

/** The raw argon2id verify rate of this machine with Weft's parameters: the better of one and two per core in flight. */
async function rawArgon2(ms: number): Promise<{ rate: number; concurrency: number }> {
  const hash = await argon2.hash(USER_PASSWORD, ARGON2_PARAMS);
  let best = { rate: 0, concurrency: 0 };
  for (const concurrency of [availableParallelism(), 2 * availableParallelism()]) {
    let n = 0;
    let stop = false;
    const t0 = performance.now();
    const timer = setTimeout(() => (stop = true), ms);
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (!stop) {
          await argon2.verify(hash, USER_PASSWORD);
          n++;
        }
      }),
    );
    clearTimeout(timer);
    const rate = n / ((performance.now() - t0) / 1000);
    if (rate > best.rate) best = { rate, concurrency };
  }
  return best;
}

async function prepare(
  name: System['name'],
  origin: string,
  ca: string,
  sampleIdentity: string,
  sampleUsername: string,
  tokens: string[] | number,
  pid?: number,
): Promise<System> {
  const http = new Http(origin, ca);
  const admin = await http.login('management', ADMIN.username, ADMIN.password);
  const user = await http.login('client', sampleUsername, USER_PASSWORD, ['all']);
  const visible = await http.call('GET', '/edge/client/v1/services?limit=500', user);
  if (visible.status !== 200) throw new Error(`${name}: GET /services ${visible.status} ${visible.text}`);
  const dialable = (visible.json.data as Array<{ id: string; name: string; permissions: string[] }>)
    .filter((s) => s.permissions.includes('Dial'))
    .map((s) => ({ id: s.id, name: s.name }))
    .sort((a, b) => a.name.localeCompare(b.name));
  if (!dialable.length) throw new Error(`${name}: the sampled identity can dial nothing`);
  const sessionTokens =
    typeof tokens === 'number'
      ? await Promise.all(Array.from({ length: tokens }, () => http.login('client', sampleUsername, USER_PASSWORD)))
      : tokens;
  return { name, origin, ca, http, pid, admin, user, tokens: sessionTokens, sampleIdentity, dialable };
}

/** The requests measured on both, as load options for one system. */
function cases(s: System, identities: number) {
  const pad = (i: number) => String(i).padStart(6, '0');
  const mgmt = (path: string) => ({ origin: s.origin, ca: s.ca, path: `/edge/management/v1${path}`, headers: { 'zt-session': s.admin } });
  const list = (filter?: string) => mgmt(`/identities?limit=10${filter ? `&filter=${encodeURIComponent(filter)}` : ''}`);
  let n = 0;
  const session = (): LoadOptions => ({
    origin: s.origin,
    ca: s.ca,
    path: '',
    ok: (st) => st === 201,
    next: () => {
      const i = n++;
      return {
        path: '/edge/client/v1/sessions',
        method: 'POST',
        headers: { 'zt-session': s.tokens[Math.floor(i / s.dialable.length) % s.tokens.length]!, 'content-type': 'application/json' },
        body: JSON.stringify({ serviceId: s.dialable[i % s.dialable.length]!.id, type: 'Dial' }),
      };
    },
  });
  return {
    'GET /version': { origin: s.origin, ca: s.ca, path: '/edge/client/v1/version' },
    'list identities limit=10 (none)': list(),
    'list identities limit=10 (name =)': list(`name = "id-${pad(Math.floor(identities / 2))}"`),
    'list identities limit=10 (name contains)': list(`name contains "${pad(Math.floor(identities / 3))}"`),
    'client GET /services?limit=100': { origin: s.origin, ca: s.ca, path: '/edge/client/v1/services?limit=100', headers: { 'zt-session': s.user } },
    'POST /sessions (create Dial)': session(),
    'GET policy-advice': mgmt(`/identities/${s.sampleIdentity}/policy-advice/${s.dialable[0]!.id}`),
  } satisfies Record<string, LoadOptions>;
}

/** Every request a different URL (an extra query parameter the route ignores): Weft computes every reply afresh. */
function missing(o: LoadOptions): LoadOptions {
  let n = 0;
  return { ...o, next: () => ({ path: `${o.path}${o.path.includes('?') ? '&' : '?'}bench-miss=${n++}`, headers: o.headers }) };
}

function logins(s: System, username: string): LoadOptions {
  return {
    origin: s.origin,
    ca: s.ca,
    path: '/edge/client/v1/authenticate?method=password',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password: USER_PASSWORD }),
    connections: LOGIN_CLIENTS,
  };
}

export async function peerBench(workDir: string, opts: { quick: boolean; durationMs: number }): Promise<Row[]> {
  // OpenZiti seeds 1/20 of "large" in a couple of minutes here; at 1/5 its policy creation alone ran past 15 minutes
  const spec = opts.quick ? scaled(LARGE, 0.01, 'large-x0.01') : scaled(LARGE, 0.05, 'large-x0.05');
  const title = `Peer: Weft and the OpenZiti controller on the same model (${spec.name}: ${describeModel(spec)})`;
  const plan = planModel(spec);
  const rounds = opts.quick ? 1 : 3;
  const apiSessions = opts.quick ? 20 : 100;
  const rows: Row[] = [];
  const stops: Array<() => Promise<void>> = [];
  const label = `${spec.name}`;
  try {
    const dataDir = join(workDir, 'peer-weft');
    console.log(`peer model ${spec.name}: seeding Weft through the core…`);
    const w = await seedWeft(dataDir, plan, { onlineRouters: false, apiSessions });
    const configFile = join(workDir, 'peer-weft.yml');
    // as OpenZiti's quickstart runs: no router; the authentication limiter at its defaults (no per-client limit:
    // every request comes from this one address)
    (await import('node:fs')).writeFileSync(
      configFile,
      'rate_limits:\n  per_client:\n    enabled: false\nrouter:\n  enabled: false\nconsole:\n  enabled: false\n',
    );
    const weftChild = await startChild(new URL('./weftServer.ts', import.meta.url).pathname, [dataDir, configFile], {}, weftNodeArgs());
    stops.push(() => weftChild.stop());
    const weft = await prepare(
      'weft',
      weftChild.info.origin as string,
      readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8'),
      w.sampleIdentity,
      w.sampleUsername,
      w.sessionTokens,
      weftChild.proc.pid,
    );
    stops.push(() => weft.http.close());
    rows.push({ scenario: label, target: 'weft: seed through the core', note: `${w.seconds.toFixed(1)} s` });

    const tool = zitiBinary();
    let peer: System | undefined;
    let ctrl: OpenZitiController | undefined;
    if ('missing' in tool) {
      console.log(`\nthe OpenZiti controller is not installed (${tool.missing}): install it with \`${INSTALL_COMMAND}\`; the peer rows are skipped`);
      rows.push({ scenario: label, target: 'openziti', note: `skipped: not installed (${tool.missing}); run \`${INSTALL_COMMAND}\`` });
    } else {
      console.log('starting the OpenZiti controller (ziti edge quickstart --no-router)…');
      ctrl = await startOpenZiti(tool.bin, join(workDir, 'openziti'), ADMIN.password);
      stops.push(() => ctrl!.stop());
      console.log(`seeding OpenZiti through its Management API (${spec.identities} identities, 16 requests in flight)…`);
      const o = await seedOpenZiti(ctrl, ADMIN, plan, USER_PASSWORD);
      rows.push({
        scenario: label,
        target: 'openziti: seed through the Management API',
        note:
          `${o.seconds.toFixed(1)} s (${Object.entries(o.phases)
            .map(([k, v]) => `${k} ${v.toFixed(1)} s`)
            .join(', ')}; ` + `${(plan.identities.length / (o.phases.identities ?? o.seconds)).toFixed(0)} identities/s)`,
      });
      peer = await prepare('openziti', ctrl.origin, ctrl.ca, o.sampleIdentity, o.sampleUsername, apiSessions, ctrl.proc.pid);
      stops.push(() => peer!.http.close());
    }

    const wc = cases(weft, spec.identities);
    const pc = peer && cases(peer, spec.identities);
    for (const name of Object.keys(wc) as Array<keyof typeof wc>) {
      const isRead = name !== 'POST /sessions (create Dial)';
      const targets: Record<string, LoadOptions> = { weft: wc[name] };
      if (isRead) targets.miss = missing(wc[name]);
      if (pc) targets.openziti = pc[name];
      const m = await interleaved(targets, { rounds, durationMs: opts.durationMs });
      const scenario = `${label} ${name}`;
      rows.push(rowOf(scenario, 'weft', m.combined.weft!));
      if (isRead) rows.push(rowOf(scenario, 'weft, every request a miss', m.combined.miss!));
      if (!pc) continue;
      rows.push(rowOf(scenario, 'openziti', m.combined.openziti!));
      const ratio = medianRatio(m.rounds.weft!, m.rounds.openziti!);
      const missRatio = isRead ? medianRatio(m.rounds.miss!, m.rounds.openziti!) : ratio;
      // the check holds Weft to the slower of its two paths: every reply computed afresh
      rows.push(
        checkRow(
          scenario,
          `Weft/OpenZiti ${Math.min(ratio, missRatio).toFixed(2)}× the requests per second${isRead ? ` (${ratio.toFixed(2)}× repeating the URL, ${missRatio.toFixed(2)}× every request a miss)` : ''}`,
          '≥ 1× (ahead of the peer)',
          Math.min(ratio, missRatio) >= 1,
        ),
      );
    }

    // password logins: 50 clients logging in back to back, against the raw argon2id rate of this machine
    const raw = await rawArgon2(Math.max(1500, opts.durationMs));
    const loginScenario = `${label} password logins, ${LOGIN_CLIENTS} clients`;
    rows.push({
      scenario: loginScenario,
      target: 'raw argon2id verify in the bench process',
      rps: raw.rate,
      note: `m=${ARGON2_PARAMS.memoryCost / 1024} MiB, t=${ARGON2_PARAMS.timeCost}, p=${ARGON2_PARAMS.parallelism}, ${raw.concurrency} in flight`,
    });
    const lt: Record<string, LoadOptions> = { weft: logins(weft, w.sampleUsername) };
    if (peer) lt.openziti = logins(peer, `bench-${plan.sample}`);
    const lm = await interleaved(lt, { rounds, durationMs: Math.max(2000, opts.durationMs) });
    const wl: Measurement = lm.combined.weft!;
    rows.push(rowOf(loginScenario, 'weft (auth limiter at its defaults)', wl));
    if (lm.combined.openziti) {
      rows.push(rowOf(loginScenario, 'openziti', lm.combined.openziti, "argon2id m=3 MiB, t=1, p=4 (about an eighth of the work of Weft's hash)"));
      rows.push({
        scenario: loginScenario,
        target: 'weft/openziti',
        note: `${medianRatio(lm.rounds.weft!, lm.rounds.openziti!).toFixed(2)}× the logins per second (no goal: OpenZiti's hash is much cheaper)`,
      });
    }
    const share = wl.okRps / raw.rate;
    rows.push(
      checkRow(
        loginScenario,
        `${wl.okRps.toFixed(1)} logins/s = ${(share * 100).toFixed(0)}% of the raw rate`,
        `≥ ${GOAL_LOGIN_SHARE * 100}%`,
        share >= GOAL_LOGIN_SHARE,
      ),
    );
    rows.push(
      checkRow(
        loginScenario,
        `p99 ${wl.p99Ms.toFixed(0)} ms (p50 ${wl.p50Ms.toFixed(0)} ms)`,
        `p99 ≤ ${GOAL_LOGIN_P99_MS} ms`,
        wl.p99Ms <= GOAL_LOGIN_P99_MS,
      ),
    );

    for (const s of [weft, peer]) {
      const mem = s && memoryMiB(s.pid);
      if (mem)
        rows.push({
          scenario: `${label} memory`,
          target: s!.name,
          note: `RSS ${mem.rss.toFixed(0)} MiB (peak ${mem.peak.toFixed(0)} MiB)`,
          values: { rssMiB: mem.rss, peakMiB: mem.peak },
        });
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
  printTable(title, rows);
  return rows;
}
