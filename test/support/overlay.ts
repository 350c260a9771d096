// Identities, services and policies for tests that use the built-in edge router through Weft's own SDK
// (src/main/sdk): an enrolled identity with its certificate and key, logged in through the Client API.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { EdgeClient, type EdgeClientOptions, type ServiceSession } from '../../src/main/sdk';
import type { TestApp } from './app';
import type { ApiClient } from './client';
import { deviceSession, enrolledDevice } from './edge';

export interface SdkIdentity {
  id: string;
  name: string;
  cert: string;
  key: string;
  /** Client API, logged in with the certificate */
  client: ApiClient;
  /** the API session token of that login */
  apiSession: string;
}

/** A new identity enrolled (ott) with a fresh EC key, logged in with its certificate. */
export async function sdkIdentity(app: TestApp, admin: ApiClient, name: string, roleAttributes: string[] = []): Promise<SdkIdentity> {
  const device = await enrolledDevice(app, admin, name, roleAttributes);
  const { client, token } = await deviceSession(app, device);
  return { ...device, client, apiSession: token };
}

/** Lets every identity and every service use the built-in router (an edge router policy and a service edge router policy). */
export async function openRouter(app: TestApp, admin: ApiClient): Promise<void> {
  const router = `@${app.router!.id}`;
  await admin.create('/edge-router-policies', {
    name: 'all-identities-builtin',
    semantic: 'AnyOf',
    identityRoles: ['#all'],
    edgeRouterRoles: [router],
  });
  await admin.create('/service-edge-router-policies', {
    name: 'all-services-builtin',
    semantic: 'AnyOf',
    serviceRoles: ['#all'],
    edgeRouterRoles: [router],
  });
}

/** A service and two policies: `binder` may Bind it, `dialer` may Dial it. */
export async function serviceBetween(
  admin: ApiClient,
  name: string,
  binder: SdkIdentity,
  dialer: SdkIdentity,
  opts: { encryptionRequired?: boolean } = {},
): Promise<string> {
  const id = await admin.create('/services', { name, encryptionRequired: opts.encryptionRequired ?? false });
  await admin.create('/service-policies', {
    name: `${name}-bind`,
    type: 'Bind',
    semantic: 'AnyOf',
    identityRoles: [`@${binder.id}`],
    serviceRoles: [`@${id}`],
  });
  await admin.create('/service-policies', {
    name: `${name}-dial`,
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: [`@${dialer.id}`],
    serviceRoles: [`@${id}`],
  });
  return id;
}

/** A Dial or Bind session of the identity's API session (Client API `POST /sessions`). */
export async function serviceSession(
  identity: SdkIdentity,
  serviceId: string,
  type: 'Dial' | 'Bind',
  encryptionRequired = false,
): Promise<ServiceSession> {
  const r = await identity.client.post('/sessions', { serviceId, type }, { api: 'client' });
  if (r.status !== 201) throw new Error(`session ${type} ${serviceId}: ${r.status} ${r.text}`);
  return { token: r.body.data.token as string, encryptionRequired, service: serviceId };
}

/** An SDK client for the identity on the app's built-in router. */
export function edgeClient(app: TestApp, identity: SdkIdentity, opts: Partial<EdgeClientOptions> = {}): EdgeClient {
  return new EdgeClient({
    routerUrl: app.urls.router!,
    ca: app.core.pki.caBundlePem,
    cert: identity.cert,
    key: identity.key,
    apiSession: () => identity.apiSession,
    retry: { minDelayMs: 20, maxDelayMs: 200 },
    ...opts,
  });
}

/** Polls `check` until it returns a truthy value or the deadline passes (then the last error, or a timeout, is thrown). */
export async function eventually<T>(check: () => T | Promise<T>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A TCP relay to one address (e.g. the router's port), which tests can take down and bring back on the same port. */
export interface TcpRelay {
  port: number;
  /** connections relayed so far */
  connections: number;
  /** stops listening and cuts every relayed connection */
  down(): Promise<void>;
  /** listens again on the same port */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    relay.connections++;
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).on('close', () => client.destroy());
    upstream.pipe(client).on('close', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  const down = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  const relay: TcpRelay = { port, connections: 0, down, up: () => listen(port), close: () => (server.listening ? down() : Promise.resolve()) };
  return relay;
}
