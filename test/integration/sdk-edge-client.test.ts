// Weft's own SDK-side edge client (src/main/sdk) against the real built-in router: hello, bind, dial, data both ways,
// half close, StateClosed, backpressure, re-bind after the terminator or the router connection is lost, refusals.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EdgeRefusedError, EncryptionNotSupportedError, HelloRefusedError, RouterLink, type EdgeConn, type EdgeListener } from '../../src/main/sdk';
import { startTestApp, useTestApp, type TestApp } from '../support/app';
import { writeConfigFile } from '../support/shares';
import type { ApiClient } from '../support/client';
import { edgeClient, eventually, openRouter, sdkIdentity, serviceBetween, serviceSession, type SdkIdentity } from '../support/overlay';

let app: TestApp;
let admin: ApiClient;
let host: SdkIdentity;
let dialer: SdkIdentity;
let echoService: string;

useTestApp((a, c) => ((app = a), (admin = c)));

beforeAll(async () => {
  await openRouter(app, admin);
  [host, dialer] = await Promise.all([sdkIdentity(app, admin, 'sdk-host'), sdkIdentity(app, admin, 'sdk-dialer')]);
  echoService = await serviceBetween(admin, 'sdk-echo', host, dialer);
});

afterAll(async () => {
  await host?.client.close();
  await dialer?.client.close();
});

/** Reads everything until the readable side ends (without destroying the conn, as an async iterator would). */
async function readAll(conn: EdgeConn): Promise<Buffer> {
  const chunks: Buffer[] = [];
  conn.on('data', (c: Buffer) => chunks.push(c));
  await once(conn, 'end');
  return Buffer.concat(chunks);
}

/** Resolves once the conn is closed (at once if it is already). */
const closed = (conn: EdgeConn) => (conn.closed ? Promise.resolve() : once(conn, 'close').then(() => undefined));

/** Binds the echo service with an SDK client for `host`: every conn's bytes come back, its FIN too. */
async function echoHost(): Promise<{ listener: EdgeListener; accepted: EdgeConn[]; close(): void }> {
  const client = edgeClient(app, host);
  const listener = client.listen(await serviceSession(host, echoService, 'Bind'));
  const accepted: EdgeConn[] = [];
  listener.on('connection', (conn: EdgeConn) => {
    accepted.push(conn);
    conn.on('error', () => undefined);
    conn.pipe(conn);
  });
  await once(listener, 'bound');
  return { listener, accepted, close: () => client.close() };
}

describe('bind and dial through the router', () => {
  it('a dialed conn reaches the bound service: bytes both ways, half close, then StateClosed for both ends', async () => {
    const echo = await echoHost();
    const client = edgeClient(app, dialer);
    try {
      const conn = await client.dial(await serviceSession(dialer, echoService, 'Dial'));
      expect(conn.info.kind).toBe('dial');
      expect(conn.info.circuitId).toBeTruthy();
      conn.write('hello ');
      conn.end('overlay');
      // the host saw our FIN (its pipe ended its side), so the echo ends with a FIN too
      expect((await readAll(conn)).toString()).toBe('hello overlay');
      await closed(conn);
      expect(echo.accepted).toHaveLength(1);
      expect(echo.accepted[0]!.info).toMatchObject({ kind: 'accept', callerId: 'sdk-dialer' });
      await eventually(() => echo.accepted[0]!.destroyed, 'the host end to close');
      await eventually(() => app.router!.status().circuits.length === 0, 'the circuit to end');
    } finally {
      client.close();
      echo.close();
    }
  });

  it("half close: the host reads to the dialer's FIN and still answers afterwards", async () => {
    const client = edgeClient(app, host);
    const listener = client.listen(await serviceSession(host, echoService, 'Bind'));
    listener.on('connection', async (conn: EdgeConn) => {
      const got = await readAll(conn);
      conn.end(`got ${got.length} bytes`);
    });
    await once(listener, 'bound');
    const dialing = edgeClient(app, dialer);
    try {
      const conn = await dialing.dial(await serviceSession(dialer, echoService, 'Dial'));
      conn.end(randomBytes(100_000));
      expect((await readAll(conn)).toString()).toBe('got 100000 bytes');
    } finally {
      dialing.close();
      client.close();
    }
  });

  it("StateClosed: a host that destroys its conn ends the dialer's (EOF after what was sent), and the other way round", async () => {
    const client = edgeClient(app, host);
    const listener = client.listen(await serviceSession(host, echoService, 'Bind'));
    const accepted: EdgeConn[] = [];
    listener.on('connection', (conn: EdgeConn) => {
      accepted.push(conn);
      if (accepted.length === 1) conn.write('bye', () => conn.destroy());
    });
    await once(listener, 'bound');
    const dialing = edgeClient(app, dialer);
    try {
      const first = await dialing.dial(await serviceSession(dialer, echoService, 'Dial'));
      expect((await readAll(first)).toString()).toBe('bye');
      await closed(first);

      const second = await dialing.dial(await serviceSession(dialer, echoService, 'Dial'));
      await eventually(() => accepted.length === 2, 'the second conn');
      const hostSide = accepted[1]!;
      const ended = readAll(hostSide);
      second.destroy();
      expect((await ended).length).toBe(0);
      await closed(hostSide);
    } finally {
      dialing.close();
      client.close();
    }
  });

  it('several conns at once over one router connection, 8 MB each way on one, in order (backpressure on a slow reader)', async () => {
    const echo = await echoHost();
    const client = edgeClient(app, dialer);
    try {
      const session = await serviceSession(dialer, echoService, 'Dial');
      const conns = await Promise.all([1, 2, 3].map(() => client.dial(session)));
      const big = randomBytes(8 * 1024 * 1024);
      const bigEcho = (async () => {
        const chunks: Buffer[] = [];
        // a slow reader: the router connection pauses while its buffer is full
        for await (const c of conns[0]!) {
          chunks.push(c as Buffer);
          if (chunks.length % 16 === 0) await new Promise((r) => setImmediate(r));
        }
        return Buffer.concat(chunks);
      })();
      conns[0]!.end(big);
      const small = conns.slice(1).map(async (c, i) => {
        c.end(`conn ${i}`);
        return (await readAll(c)).toString();
      });
      expect(await Promise.all(small)).toEqual(['conn 0', 'conn 1']);
      expect((await bigEcho).equals(big)).toBe(true);
    } finally {
      client.close();
      echo.close();
    }
  });

  it('dedicated dials use their own router connection, closed with the conn', async () => {
    const echo = await echoHost();
    const client = edgeClient(app, dialer);
    try {
      const before = app.router!.status().connections;
      const conn = await client.dial(await serviceSession(dialer, echoService, 'Dial'), { dedicated: true });
      expect(app.router!.status().connections).toBe(before + 1);
      conn.end('x');
      expect((await readAll(conn)).toString()).toBe('x');
      await eventually(() => app.router!.status().connections === before, 'the dedicated connection to close');
    } finally {
      client.close();
      echo.close();
    }
  });
});

describe('re-binding', () => {
  it('a terminator deleted through the API is bound again (same listener), and dials work again', async () => {
    const echo = await echoHost();
    const client = edgeClient(app, dialer);
    try {
      const terminators = () => app.router!.status().terminators.filter((t) => t.serviceId === echoService);
      expect(terminators()).toHaveLength(1);
      const unavailable = once(echo.listener, 'unavailable');
      const old = terminators()[0]!.id;
      expect((await admin.del(`/terminators/${old}`)).status).toBe(200);
      expect(String((await unavailable)[0].message)).toMatch(/terminator was lost/);
      await once(echo.listener, 'bound');
      expect(terminators().map((t) => t.id)).not.toContain(old);
      expect(terminators()).toHaveLength(1);
      const conn = await client.dial(await serviceSession(dialer, echoService, 'Dial'));
      conn.end('again');
      expect((await readAll(conn)).toString()).toBe('again');
    } finally {
      client.close();
      echo.close();
    }
  });

  it('when the router drops the connection (router disabled, then enabled), the listener reconnects and binds again', async () => {
    const echo = await echoHost();
    const client = edgeClient(app, dialer);
    const routerId = app.router!.id;
    try {
      const lost = once(echo.listener, 'unavailable');
      expect((await admin.patch(`/edge-routers/${routerId}`, { disabled: true })).status).toBe(200);
      await lost;
      expect(echo.listener.bound).toBe(false);
      expect((await admin.patch(`/edge-routers/${routerId}`, { disabled: false })).status).toBe(200);
      await eventually(() => echo.listener.bound, 'the listener to bind again');
      const conn = await client.dial(await serviceSession(dialer, echoService, 'Dial'));
      conn.end('back');
      expect((await readAll(conn)).toString()).toBe('back');
    } finally {
      await admin.patch(`/edge-routers/${routerId}`, { disabled: false });
      client.close();
      echo.close();
    }
  });

  it('a dialer whose router connection was dropped opens a new one for the next dial', async () => {
    const echo = await echoHost();
    const client = edgeClient(app, dialer);
    try {
      const session = () => serviceSession(dialer, echoService, 'Dial');
      const first = await client.dial(await session());
      const link = await client.sharedLink();
      const failed = once(first, 'error');
      link.close();
      expect(String((await failed)[0].message)).toMatch(/connection to the router closed/);
      const second = await client.dial(await session());
      expect(await client.sharedLink()).not.toBe(link);
      second.end('new link');
      expect((await readAll(second)).toString()).toBe('new link');
    } finally {
      client.close();
      echo.close();
    }
  });
});

describe('refusals are clear', () => {
  it('a hello with an unknown API session', async () => {
    const err = await RouterLink.open({
      url: app.urls.router!,
      ca: app.core.pki.caBundlePem,
      cert: dialer.cert,
      key: dialer.key,
      apiSessionToken: 'not-a-session',
      timeoutMs: 5000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HelloRefusedError);
    expect((err as HelloRefusedError).reason).toBe('invalid or expired API session');
  });

  it("a certificate that is not the API session's identity", async () => {
    const err = await RouterLink.open({
      url: app.urls.router!,
      ca: app.core.pki.caBundlePem,
      cert: host.cert,
      key: host.key,
      apiSessionToken: dialer.apiSession,
      timeoutMs: 5000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HelloRefusedError);
  });

  it('dialing with a Bind session, and a service nobody binds', async () => {
    const client = edgeClient(app, dialer);
    try {
      const wrongType = await client.dial(await serviceSession(host, echoService, 'Bind')).catch((e: unknown) => e);
      expect(wrongType).toBeInstanceOf(EdgeRefusedError);
      const unbound = await client.dial(await serviceSession(dialer, echoService, 'Dial')).catch((e: unknown) => e);
      expect(unbound).toBeInstanceOf(EdgeRefusedError);
      expect((unbound as EdgeRefusedError).reason).toMatch(/has no terminators/);
    } finally {
      client.close();
    }
  });

  it('services that require end-to-end encryption are refused before anything is sent', async () => {
    const encrypted = await serviceBetween(admin, 'sdk-encrypted', host, dialer, { encryptionRequired: true });
    const client = edgeClient(app, host);
    try {
      const listener = client.listen(await serviceSession(host, encrypted, 'Bind', true));
      const [err] = await once(listener, 'unavailable');
      expect(err).toBeInstanceOf(EncryptionNotSupportedError);
      listener.close();
      const dialErr = await edgeClient(app, dialer)
        .dial(await serviceSession(dialer, encrypted, 'Dial', true))
        .catch((e: unknown) => e);
      expect(dialErr).toBeInstanceOf(EncryptionNotSupportedError);
      expect(app.router!.status().terminators.filter((t) => t.serviceId === encrypted)).toEqual([]);
    } finally {
      client.close();
    }
  });
});

describe('heartbeats', () => {
  it('a router that sweeps every 100 ms keeps a silent SDK connection (and its terminator) through many sweeps', async () => {
    const quick = await startTestApp({ configFile: writeConfigFile({ router: { heartbeat_interval: '100ms' } }) });
    const quickAdmin = await quick.adminClient();
    try {
      await openRouter(quick, quickAdmin);
      const [h, d] = await Promise.all([sdkIdentity(quick, quickAdmin, 'hb-host'), sdkIdentity(quick, quickAdmin, 'hb-dialer')]);
      const svc = await serviceBetween(quickAdmin, 'hb', h, d);
      const client = edgeClient(quick, h);
      const listener = client.listen(await serviceSession(h, svc, 'Bind'));
      await once(listener, 'bound');
      const link = await client.sharedLink();
      const lastRead = link.channel.lastRead;
      // sweeps check API sessions and send nothing (OpenZiti's router sends SDKs no keepalive frames)
      for (let i = 0; i < 20; i++) await quick.router!.sweep();
      expect(link.channel.lastRead).toBe(lastRead);
      expect(link.closed).toBe(false);
      expect(listener.bound).toBe(true);
      expect(quick.router!.status().terminators.filter((t) => t.serviceId === svc)).toHaveLength(1);
      client.close();
      await h.client.close();
      await d.client.close();
    } finally {
      await quickAdmin.close();
      await quick.stop();
    }
  });
});
