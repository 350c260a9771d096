// SDKs that log in the legacy way (POST /authenticate: Weft with `api.oidc.enabled: false`, or SDKs without OIDC)
// through a stock `ziti router run` (v1.7.2): the router accepts their opaque API session tokens because Weft told it
// of the sessions (OpenZiti's API session sync), with the certificates they may connect with. The Go SDK binds and
// dials through it; an API session deleted by an admin closes the SDK's connection to the router within 1 s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { echoThroughStockRouter } from './stockRouters';
import { echoServer, openzitiTools, sdkClient, withHeldDial, type ToolProcess, ZitiCli } from './tools';

let app: TestApp;
let admin: ApiClient;
let sdk: string;
let routerProc: ToolProcess;
const files: Record<string, string> = {};
const ids: Record<string, string> = {};

beforeAll(async () => {
  const tools = openzitiTools();
  sdk = tools.sdkClient;
  app = await startTestApp({ apiOidc: 'off' });
  admin = await app.adminClient();
  const cli = new ZitiCli(tools.ziti);
  await cli.ok('edge', 'login', app.urls.api, '-u', ADMIN_USER, '-p', ADMIN_PASSWORD, '-y');
  for (const [name, role] of [
    ['host', 'hosts'],
    ['client', 'clients'],
  ] as const) {
    const { id, file } = await cli.enrolledIdentity(`legacy-${name}`, [role]);
    files[name] = file;
    ids[name] = id;
  }
  ({ proc: routerProc } = await echoThroughStockRouter(tools.ziti, cli, admin, app.urls.ctrl!, 'stock-legacy'));
}, 180_000);

afterAll(async () => {
  routerProc?.kill('SIGKILL');
  await routerProc?.exited;
  await admin?.close();
  await app?.stop();
});

const apiSessionsOf = async (identity: string) =>
  ((await admin.get(`/api-sessions?filter=${encodeURIComponent(`identityId = "${identity}"`)}`)).body.data as Array<{ id: string }>).map((s) => s.id);

describe('legacy logins through a stock router', { timeout: 180_000 }, () => {
  it('the Go SDK binds and dials through the stock router with legacy API sessions: 1 MB echoed byte-identical', async () => {
    const server = await echoServer(sdk, files.host!, 'echo');
    try {
      // no OIDC: the SDKs hold opaque tokens, which only the sync told the router of
      expect((await admin.get('/version', { api: 'client' })).body.data.capabilities ?? []).not.toContain('OIDC_AUTH');
      const out = await sdkClient(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--bytes', String(1024 * 1024)], 60_000);
      expect(out[0]).toMatchObject({ bytes: 1024 * 1024 });
      expect(await apiSessionsOf(ids.host!)).not.toHaveLength(0);
    } finally {
      server.end();
      await server.exited;
    }
  });

  it("an admin deleting the dialer's API session closes its connection at the stock router within 1 s", async () => {
    await withHeldDial(sdk, files.host!, files.client!, 'echo', async (dialer) => {
      const sessions = await apiSessionsOf(ids.client!);
      expect(sessions.length).toBeGreaterThan(0);
      const deleted = Date.now();
      for (const id of sessions) expect((await admin.del(`/api-sessions/${id}`)).status).toBe(200);
      const line = await dialer.waitFor((l) => 'ended' in l);
      expect(line.ended).not.toBe('stdin closed');
      expect(Date.now() - deleted).toBeLessThan(1_000);
    });
  });
});
