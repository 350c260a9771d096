import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { deriveKeys } from '../src/main/frontend/keys';
import { SessionCodec } from '../src/main/frontend/sessions';
import { runShareCommand } from '../src/main/share/shareCommand';
import { combine, cpuMicros, load, printTable, rowOf, startChild, type Child, type LoadOptions, type Measurement, type Row } from './lib';

const OAUTH = {
  bind_address: '127.0.0.1:0',
  endpoint_url: 'http://auth.bench.test:9',
  cookie_name: 'svc-auth-session',
  cookie_domain: 'bench.test',
  session_lifetime: '6h',
  intermediate_lifetime: '5m',
  signing_key: 'bench-signing-key-0123456789abcdef-0123',
  encryption_key: 'bench-encryption-key-0123456789',
  providers: [{ name: 'github', type: 'idp_a', client_id: 'bench', client_secret: 'bench-secret' }],
};
const GOAL = 0.7;

/** `weft share public ... --reserved` against the running bench Weft; returns the share's public URL. */
async function reserveShare(dataDir: string, args: string[]): Promise<URL> {
  const lines: string[] = [];
  const io = { out: (l: string) => void lines.push(l), err: (l: string) => void lines.push(l), stopped: new Promise<string>(() => undefined) };
  const code = await runShareCommand(['public', ...args, '--reserved', '--data-dir', dataDir], io);
  const url = /public URL:\s+(\S+)/.exec(lines.join('\n'))?.[1];
  if (code !== 0 || !url) throw new Error(`weft share public failed:\n${lines.join('\n')}`);
  return new URL(url);
}

/** A valid session cookie for a share, sealed with the frontend's own functions and keys (as a login would set it). */
async function sessionCookie(token: string, email: string): Promise<string> {
  const codec = new SessionCodec(deriveKeys(OAUTH.signing_key, OAUTH.encryption_key), {
    cookieName: OAUTH.cookie_name,
    cookieDomain: OAUTH.cookie_domain,
    secure: false,
  });
  const now = Date.now();
  const setCookie = await codec.issue(
    { provider: 'github', share: token, email, expiresAtMs: now + 6 * 3_600_000, checkedAtMs: now, tokens: {} },
    now,
  );
  return setCookie.split(';')[0]!;
}

async function expectStatus(origin: string, headers: Record<string, string>, status: number): Promise<void> {
  const res = await request(`${origin}/`, { headers });
  await res.body.dump();
  if (res.statusCode !== status) throw new Error(`bench set-up: expected ${status} from ${headers.host ?? origin}, got ${res.statusCode}`);
}

/**
 * Issue 6's table: requests per second through Weft's frontend with a valid OAuth session, side by side with
 * the backend hit directly and with a bare undici pass-through proxy; every server in its own process.
 */
export async function frontendBench(workDir: string, opts: { quick: boolean; durationMs: number }): Promise<Row[]> {
  const dir = join(workDir, 'frontend');
  const dataDir = join(dir, 'data');
  mkdirSync(dir, { recursive: true });
  const configFile = join(dir, 'weft.yml');
  writeFileSync(configFile, JSON.stringify({ frontend: { bind_address: '127.0.0.1:0', share_domain: 'share.bench.test', oauth: OAUTH } }));

  const children: Child[] = [];
  const rows: Row[] = [];
  try {
    const backend = await startChild(new URL('./httpBackend.ts', import.meta.url).pathname);
    children.push(backend);
    const bare = await startChild(new URL('./bareProxy.ts', import.meta.url).pathname, [backend.info.origin]);
    children.push(bare);
    const weft = await startChild(new URL('./frontendWeft.ts', import.meta.url).pathname, [dataDir, configFile, join(dir, 'weft.log')]);
    children.push(weft);

    const open = await reserveShare(dataDir, [backend.info.origin, '--backend-mode', 'proxy']);
    const guarded = await reserveShare(dataDir, [
      backend.info.origin,
      '--backend-mode',
      'proxy',
      '--oauth-provider',
      'github',
      '--oauth-email-address-pattern',
      '*@bench.test',
    ]);
    const token = guarded.hostname.split('.')[0]!;
    const cookie = await sessionCookie(token, 'user@bench.test');
    const weftOrigin = weft.info.publicListener as string;
    const openHeaders = { host: open.host };
    const sessionHeaders = { host: guarded.host, cookie, accept: 'application/json' };
    await expectStatus(weftOrigin, openHeaders, 200);
    await expectStatus(weftOrigin, { host: guarded.host, accept: 'application/json' }, 401);
    await expectStatus(weftOrigin, sessionHeaders, 200);

    const targets: Record<'direct' | 'bare' | 'open' | 'session', LoadOptions> = {
      direct: { origin: backend.info.origin, path: '/' },
      bare: { origin: bare.info.origin, path: '/' },
      open: { origin: weftOrigin, path: '/', headers: openHeaders },
      session: { origin: weftOrigin, path: '/', headers: sessionHeaders },
    };
    // Interleaved rounds, so a burst of load from elsewhere on the machine hits every target alike; the check
    // uses the median of the rounds' ratios (each pair measured back to back).
    const rounds = opts.quick ? 5 : 8;
    const runs: Record<keyof typeof targets, Measurement[]> = { direct: [], bare: [], open: [], session: [] };
    // CPU used by the server under test per request: steadier than req/s on a shared machine.
    const server = { direct: backend, bare, open: weft, session: weft };
    const cpu = { direct: 0, bare: 0, open: 0, session: 0 };
    const served = { direct: 0, bare: 0, open: 0, session: 0 };
    for (let round = 0; round < rounds; round++) {
      for (const [name, target] of Object.entries(targets) as Array<[keyof typeof targets, LoadOptions]>) {
        const warmupMs = round === 0 ? 500 : 150;
        const before = cpuMicros(server[name].proc.pid);
        const m = await load({ ...target, durationMs: opts.durationMs, warmupMs });
        const after = cpuMicros(server[name].proc.pid);
        if (before !== undefined && after !== undefined) {
          cpu[name] += after - before;
          served[name] += (m.rps * (opts.durationMs + warmupMs)) / 1000; // the warm-up's requests used CPU too
        }
        runs[name].push(m);
      }
    }
    const cpuNote = (name: keyof typeof cpu) =>
      served[name] ? `≈${(cpu[name] / served[name]).toFixed(0)} µs CPU/req in its server process` : undefined;
    const direct = combine(runs.direct);
    const bareM = combine(runs.bare);
    const openM = combine(runs.open);
    const sessionM = combine(runs.session);

    const scenario = 'GET / (256 B JSON)';
    rows.push(rowOf(scenario, 'backend directly (node:http)', direct, cpuNote('direct')));
    rows.push(rowOf(scenario, 'bare undici pass-through proxy', bareM, cpuNote('bare')));
    rows.push(rowOf(scenario, 'weft frontend, open share', openM, cpuNote('open')));
    rows.push(rowOf(scenario, 'weft frontend, OAuth share + valid session', sessionM, cpuNote('session')));
    const ratios = runs.session.map((m, i) => m.rps / runs.bare[i]!.rps).sort((x, y) => x - y);
    const ratio = ratios[Math.floor(ratios.length / 2)]!;
    rows.push({
      scenario,
      target: 'check',
      note:
        `OAuth share with session at ${(ratio * 100).toFixed(0)}% of the bare proxy (median of ${rounds} paired rounds, ` +
        `range ${(ratios[0]! * 100).toFixed(0)}-${(ratios.at(-1)! * 100).toFixed(0)}%); goal ≥ ${GOAL * 100}% ${ratio >= GOAL ? 'MET' : 'NOT MET'}`,
    });
  } finally {
    for (const c of children.reverse()) await c.stop();
  }
  printTable(`Frontend: requests per second through the public frontend${opts.quick ? ' (quick)' : ''}`, rows);
  return rows;
}
