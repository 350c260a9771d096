// The advertised address (core: dataPlane/networkAddress.ts) through the console's procedures: a default start names
// loopback only; an admin advertises another address of the machine (127.0.0.2 stands for a LAN address: Linux routes
// all of 127/8 to lo) and the API and router listen there too, with certificates naming it, enrollment JWTs signed again
// for it, /version, /controllers and the router's URL naming it; the choice survives a restart; a non-admin, a
// malformed address and an address the machine does not have change nothing; many changes in one tick, failures among
// them, end with the last good one everywhere. Runs on both stores (WEFT_TEST_STORE=postgres).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, tempDir, type TestApp } from '../support/app';
import { ApiClient } from '../support/client';
import { ConsoleClient } from '../support/consoleTrpc';
import { createUser } from '../support/users';

const NOT_MINE = '198.51.100.7'; // TEST-NET-2: no machine of ours has it
const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, any>;

describe('the advertised address: from loopback to an address other devices reach', { timeout: 60_000 }, () => {
  const dataDir = tempDir();
  let app: TestApp;
  let admin: ApiClient;
  let console_: ConsoleClient;
  let phoneId: string;
  let apiPort: string;
  let routerPort: string;

  const start = async () => {
    app = await startTestApp({ dataDir, consoleAddress: '127.0.0.1:0' });
    admin = await app.adminClient();
    console_ = await new ConsoleClient(app.urls.console!).login(ADMIN_USER, ADMIN_PASSWORD);
  };
  const stop = async (keepData = true) => {
    await admin?.close();
    await app?.stop({ keepData });
  };
  const phoneJwt = async () => (await admin.get(`/identities/${phoneId}`)).body.data.enrollment.ott.jwt as string;
  const routerUrl = async () => {
    const id = (await admin.get(`/edge-routers?filter=${encodeURIComponent('name = "er-builtin"')}`)).body.data[0].id;
    return (await admin.get(`/edge-routers/${id}`)).body.data.supportedProtocols.tls as string;
  };
  /** A client of the API at `host` that checks the server certificate against the network's CA and that host name. */
  const clientAt = async (host: string) => {
    const c = new ApiClient(`https://${host}:${apiPort}`, app.core.pki.caBundlePem);
    await c.login(ADMIN_USER, ADMIN_PASSWORD);
    return c;
  };

  beforeAll(async () => {
    await start();
    phoneId = await admin.create('/identities', { name: 'phone', type: 'Device', isAdmin: false, enrollment: { ott: true } });
    apiPort = new URL(app.urls.api).port;
    routerPort = app.router!.url.split(':').pop()!;
  });
  afterAll(() => stop(false));

  it('a default start advertises loopback only, and says so, listing the addresses that would reach it', async () => {
    const view = (await console_.query('networkAddress.view')).data;
    expect(view).toMatchObject({
      api: { url: `https://127.0.0.1:${apiPort}`, host: '127.0.0.1', loopback: true },
      router: { url: `tls://127.0.0.1:${routerPort}`, host: '127.0.0.1', loopback: true },
      loopbackOnly: true,
      saved: null,
    });
    const lan = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && !a.internal && a.family === 'IPv4' && !a.address.startsWith('127.'))
      .map((a) => a!.address);
    expect(view.candidates.map((c: { address: string }) => c.address).sort()).toEqual(lan.sort());
    expect(claims(await phoneJwt())).toMatchObject({ iss: `https://127.0.0.1:${apiPort}`, ctrls: [`https://127.0.0.1:${apiPort}`] });
  });

  it('a non-admin, a malformed address, a wildcard, IPv6 and an address this machine lacks change nothing', async () => {
    await createUser(admin, 'plain', 'plain-password-1');
    const plain = await new ConsoleClient(app.urls.console!).login('plain', 'plain-password-1');
    expect((await plain.mutate('networkAddress.advertise', { host: '127.0.0.2' })).error?.data.code).toBe('UNAUTHORIZED');
    expect((await plain.query('networkAddress.view')).error?.data.code).toBe('UNAUTHORIZED');
    const refused = async (host: string) => (await console_.mutate('networkAddress.advertise', { host })).error?.data.ziti;
    expect(await refused('my laptop')).toMatchObject({
      code: 'COULD_NOT_VALIDATE',
      cause: { field: 'host', reason: 'must be an IP address of this machine' },
    });
    expect(await refused('0.0.0.0')).toMatchObject({ cause: { field: 'host', reason: 'must be one address, not a wildcard' } });
    expect(await refused('fd00::2')).toMatchObject({ cause: { field: 'host', reason: 'must be an IPv4 address (router URLs are IPv4 only)' } });
    expect(await refused(NOT_MINE)).toMatchObject({ cause: { field: 'host', reason: 'is not an address of this machine', value: NOT_MINE } });
    expect((await console_.query('networkAddress.view')).data).toMatchObject({ api: { host: '127.0.0.1' }, saved: null });
    expect(existsSync(join(dataDir, 'network-address.json'))).toBe(false);
    expect(claims(await phoneJwt()).iss).toBe(`https://127.0.0.1:${apiPort}`);
    await expect(clientAt('127.0.0.2')).rejects.toThrow();
  });

  it('advertising 127.0.0.2: listeners there, certificates, JWTs, /version, /controllers and the router URL name it', async () => {
    const r = await console_.mutate('networkAddress.advertise', { host: '127.0.0.2' });
    expect(r.error).toBeUndefined();
    expect(r.data).toMatchObject({
      api: { url: `https://127.0.0.2:${apiPort}` },
      router: { url: `tls://127.0.0.2:${routerPort}` },
      saved: '127.0.0.2',
    });
    // the outstanding enrollment now names the new address; same token, same expiry
    const before = claims(await phoneJwt());
    expect(before).toMatchObject({ iss: `https://127.0.0.2:${apiPort}`, ctrls: [`https://127.0.0.2:${apiPort}`], sub: phoneId });
    // the API answers there, with a certificate for that address (the client checks it)
    const there = await clientAt('127.0.0.2');
    try {
      const version = (await there.get('/version', { api: 'root' })).body.data;
      expect(version.apiVersions['edge-client'].v1.apiBaseUrls).toEqual([`https://127.0.0.2:${apiPort}/edge/client/v1`]);
      const controllers = (await there.get('/controllers')).body.data;
      expect(controllers[0].apiAddresses['edge-management'][0].url).toBe(`https://127.0.0.2:${apiPort}/edge/management/v1`);
    } finally {
      await there.close();
    }
    expect(await routerUrl()).toBe(`tls://127.0.0.2:${routerPort}`);
    expect(JSON.parse(readFileSync(join(dataDir, 'network-address.json'), 'utf8'))).toEqual({ host: '127.0.0.2' });
    // the loopback listener stays (this machine's tools keep working)
    expect((await admin.get('/identities?limit=1')).status).toBe(200);
  });

  it('many changes in one tick, failures among them, end with one of the good ones everywhere', async () => {
    const good = ['127.0.0.3', '127.0.0.4', '127.0.0.5'];
    const results = await Promise.all(
      [good[0]!, NOT_MINE, good[1]!, 'nonsense', good[2]!].map((host) => console_.mutate('networkAddress.advertise', { host })),
    );
    expect(results.map((r) => (r.error ? 'refused' : 'ok'))).toEqual(['ok', 'refused', 'ok', 'refused', 'ok']);
    // whichever was applied last is what every record, the file and the listeners say
    const view = (await console_.query('networkAddress.view')).data;
    const last = view.api.host as string;
    expect(good).toContain(last);
    expect(view).toMatchObject({ router: { host: last }, saved: last });
    expect(claims(await phoneJwt()).iss).toBe(`https://${last}:${apiPort}`);
    expect(await routerUrl()).toBe(`tls://${last}:${routerPort}`);
    await (await clientAt(last)).close();
    // the addresses given up no longer listen
    for (const host of good.filter((h) => h !== last)) await expect(clientAt(host)).rejects.toThrow();
    expect((await console_.mutate('networkAddress.advertise', { host: '127.0.0.2' })).error).toBeUndefined();
  });

  it('a restart keeps the choice and the data; a saved address the machine lost falls back to loopback', async () => {
    await stop();
    await start();
    apiPort = new URL(app.urls.api).port;
    routerPort = app.router!.url.split(':').pop()!;
    expect(app.urls.api).toBe(`https://127.0.0.2:${apiPort}`);
    expect((await console_.query('networkAddress.view')).data).toMatchObject({ api: { host: '127.0.0.2' }, router: { host: '127.0.0.2' } });
    // the JWT keeps naming the address (its port is the one it was signed with: tests take a free port at each start)
    expect(new URL(claims(await phoneJwt()).iss).hostname).toBe('127.0.0.2');
    const there = await clientAt('127.0.0.2');
    await there.close();

    await stop();
    writeFileSync(join(dataDir, 'network-address.json'), JSON.stringify({ host: NOT_MINE }));
    await start();
    expect((await console_.query('networkAddress.view')).data).toMatchObject({ api: { host: '127.0.0.1' }, loopbackOnly: true, saved: NOT_MINE });
  });
});
