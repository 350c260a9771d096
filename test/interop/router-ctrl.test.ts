// A stock OpenZiti router (`ziti router run`, v1.7.2) on Weft's control channel: created through the Management API,
// enrolled with the real `ziti router enroll` (whose endpoints file comes from the JWT's `ctrls`: the router's own
// config names a dead address), it connects, shows online and stays connected across heartbeats; killed, it shows
// offline. A disabled router, and a router whose certificate is no longer its record's, are refused (a certificate
// presented under another router's id is refused too: test/integration/ctrl-channel.test.ts, which can send such a
// hello; a stock router always names itself by its certificate's common name).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, tempDir, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { enrolledRouter as enrolledStockRouter, runRouter as runStockRouter, type RouterDir } from './stockRouters';
import { eventually, openzitiTools, type ToolProcess } from './tools';

let app: TestApp;
let admin: ApiClient;
let ziti: string;
const routers: ToolProcess[] = [];
/** the control channel's refusals Weft logged (warn: "control channel: router refused", with the reason) */
const refusals: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  ziti = openzitiTools().ziti;
  const configFile = join(tempDir(), 'weft.yml');
  // heartbeats every 200 ms: staying connected across several unresponsive timeouts takes a second or two
  writeFileSync(configFile, 'ctrl:\n  heartbeat_interval: 200ms\n  unresponsive_timeout: 1s\n');
  const logger = pino(
    { level: 'warn' },
    {
      write: (l: string) => {
        const line = JSON.parse(l) as Record<string, unknown>;
        if (line.msg === 'control channel: router refused') refusals.push(line);
      },
    },
  );
  app = await startTestApp({ configFile, logger });
  admin = await app.adminClient();
});
afterAll(async () => {
  for (const r of routers) r.kill('SIGKILL');
  await Promise.all(routers.map((r) => r.exited));
  await admin?.close();
  await app?.stop();
});

async function enrolledRouter(name: string): Promise<RouterDir> {
  return enrolledStockRouter(ziti, admin, app.urls.ctrl!, name);
}

function runRouter(r: RouterDir): ToolProcess {
  const p = runStockRouter(ziti, r);
  routers.push(p);
  return p;
}

async function isOnline(id: string): Promise<boolean> {
  return (await admin.get(`/edge-routers/${id}`)).body.data.isOnline as boolean;
}

describe('a stock OpenZiti router on the control channel', { timeout: 120_000 }, () => {
  it('enrolled with ziti router enroll, ziti router run connects, stays online across heartbeats, and goes offline when killed', async () => {
    const r = await enrolledRouter('stock-r1');
    expect(await isOnline(r.id)).toBe(false);
    const proc = runRouter(r);
    await eventually(() => isOnline(r.id), 60_000, 'the router online');
    const ch = app.ctrl!.channelOf(r.id)!;
    expect(ch.version).toMatch(/^v1\.7\.2\|/);
    // the router answers the controller's heartbeats: connected well past the unresponsive timeout
    await eventually(() => ch.heartbeats.answered >= 10, 60_000, 'ten heartbeats answered');
    expect(app.ctrl!.channelOf(r.id)).toBe(ch);
    expect(await isOnline(r.id)).toBe(true);
    proc.kill('SIGKILL');
    await proc.exited;
    await eventually(async () => !(await isOnline(r.id)), 30_000, 'the router offline');
  });

  it('refuses a disabled router, and a router whose certificate is no longer its record’s (re-enrolled)', async () => {
    const d = await enrolledRouter('stock-disabled');
    await admin.patch(`/edge-routers/${d.id}`, { disabled: true });
    runRouter(d);
    await eventually(() => refusals.find((l) => String(l.reason).includes(`router disabled, routerId: ${d.id}`)), 60_000, 'the refusal');
    expect(await isOnline(d.id)).toBe(false);

    const r = await enrolledRouter('stock-reenrolled');
    const proc = runRouter(r);
    await eventually(() => isOnline(r.id), 60_000, 'the router online');
    // a new enrollment: the certificate the running router holds is not the record's any more
    expect((await admin.post(`/edge-routers/${r.id}/re-enroll`, {})).status).toBe(200);
    await eventually(() => refusals.find((l) => String(l.reason).includes(`router enrollment incomplete, routerId: ${r.id}`)), 60_000, 'the refusal');
    expect(await isOnline(r.id)).toBe(false);
    expect(app.ctrl!.channelOf(r.id)).toBeUndefined();
    proc.kill('SIGKILL');
  });
});
