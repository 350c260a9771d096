// Identities, services and policies for tests that use the built-in edge router through Weft's own SDK
// (src/main/sdk): an enrolled identity with its certificate and key, logged in through the Client API.
import { EdgeClient, type EdgeClientOptions, type ServiceSession } from '../../src/main/sdk';
import type { TestApp } from './app';
import type { ApiClient } from './client';
import { csr } from './pki';

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
  const id = await admin.create('/identities', { name, type: 'Default', isAdmin: false, roleAttributes, enrollment: { ott: true } });
  const token = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott.token as string;
  const { csrPem, keyPem } = await csr('EC-P256', name);
  const enrolled = await app.client().post('/enroll/ott', { token, clientCsr: csrPem }, { api: 'client' });
  if (enrolled.status !== 200) throw new Error(`enroll ${name}: ${enrolled.status} ${enrolled.text}`);
  const cert = enrolled.body.data.cert as string;
  const client = app.client().withCert(cert, keyPem);
  const login = await client.post('/authenticate?method=cert', {}, { api: 'client' });
  if (login.status !== 200) throw new Error(`login ${name}: ${login.status} ${login.text}`);
  client.token = login.body.data.token;
  return { id, name, cert, key: keyPem, client, apiSession: client.token! };
}

/** Lets every identity and every service use the built-in router (an edge router policy and a service edge router policy). */
export async function openRouter(app: TestApp, admin: ApiClient): Promise<void> {
  const router = `@${app.router!.id}`;
  await admin.create('/edge-router-policies', { name: 'all-identities-builtin', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: [router] });
  await admin.create('/service-edge-router-policies', { name: 'all-services-builtin', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: [router] });
}

/** A service and two policies: `binder` may Bind it, `dialer` may Dial it. */
export async function serviceBetween(admin: ApiClient, name: string, binder: SdkIdentity, dialer: SdkIdentity, opts: { encryptionRequired?: boolean } = {}): Promise<string> {
  const id = await admin.create('/services', { name, encryptionRequired: opts.encryptionRequired ?? false });
  await admin.create('/service-policies', { name: `${name}-bind`, type: 'Bind', semantic: 'AnyOf', identityRoles: [`@${binder.id}`], serviceRoles: [`@${id}`] });
  await admin.create('/service-policies', { name: `${name}-dial`, type: 'Dial', semantic: 'AnyOf', identityRoles: [`@${dialer.id}`], serviceRoles: [`@${id}`] });
  return id;
}

/** A Dial or Bind session of the identity's API session (Client API `POST /sessions`). */
export async function serviceSession(identity: SdkIdentity, serviceId: string, type: 'Dial' | 'Bind', encryptionRequired = false): Promise<ServiceSession> {
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
