import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import type { StartOptions } from '../../src/main/app';

/** Builds small overlay networks over the Management API for the policy, service, session and posture tests. */
export class Network {
  private constructor(
    readonly app: TestApp,
    readonly admin: ApiClient,
  ) {}
  private readonly clients: ApiClient[] = [];

  static async start(opts: StartOptions = {}): Promise<Network> {
    const app = await startTestApp(opts);
    return new Network(app, await app.adminClient());
  }

  async stop(): Promise<void> {
    for (const c of this.clients) await c.close();
    await this.admin.close();
    await this.app.stop();
  }

  identity(name: string, roleAttributes: string[] = [], extra: object = {}): Promise<string> {
    return this.admin.create('/identities', { name, type: 'User', isAdmin: false, roleAttributes, ...extra });
  }

  /** A Client API session of an identity (a updb authenticator is added for it). */
  async login(identityId: string, opts: { configTypes?: string[] } = {}): Promise<ApiClient> {
    const username = `user-${identityId}`;
    const password = 'password-1';
    await this.admin.create('/authenticators', { method: 'updb', identityId, username, password });
    const c = this.app.client();
    const r = await c.post('/authenticate?method=password', { username, password, configTypes: opts.configTypes }, { api: 'client' });
    if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.text}`);
    c.token = r.body.data.token;
    this.clients.push(c);
    return c;
  }

  service(name: string, roleAttributes: string[] = [], extra: object = {}): Promise<string> {
    return this.admin.create('/services', { name, encryptionRequired: true, roleAttributes, ...extra });
  }

  async router(name: string, roleAttributes: string[] = [], opts: { online?: boolean } = {}): Promise<string> {
    const id = await this.admin.create('/edge-routers', { name, roleAttributes });
    if (opts.online) await this.app.core.store.runSql('UPDATE edge_routers SET is_online = 1 WHERE id = ?', id);
    return id;
  }

  servicePolicy(name: string, type: 'Dial' | 'Bind', identityRoles: string[], serviceRoles: string[], extra: object = {}): Promise<string> {
    return this.admin.create('/service-policies', { name, type, semantic: 'AnyOf', identityRoles, serviceRoles, ...extra });
  }

  edgeRouterPolicy(name: string, identityRoles: string[], edgeRouterRoles: string[], extra: object = {}): Promise<string> {
    return this.admin.create('/edge-router-policies', { name, semantic: 'AnyOf', identityRoles, edgeRouterRoles, ...extra });
  }

  serviceEdgeRouterPolicy(name: string, serviceRoles: string[], edgeRouterRoles: string[], extra: object = {}): Promise<string> {
    return this.admin.create('/service-edge-router-policies', { name, semantic: 'AnyOf', serviceRoles, edgeRouterRoles, ...extra });
  }

  /** Every router usable by everyone for everything: the common case when only service policies are under test. */
  async openRouting(routerName = 'open-router'): Promise<string> {
    const r = await this.router(routerName, [], { online: true });
    await this.edgeRouterPolicy(`${routerName}-erp`, ['#all'], [`@${r}`]);
    await this.serviceEdgeRouterPolicy(`${routerName}-serp`, ['#all'], [`@${r}`]);
    return r;
  }

  /** Names of the services a client sees (Client API), sorted. */
  async visibleServices(c: ApiClient): Promise<string[]> {
    const r = await c.get('/services?limit=500', { api: 'client' });
    if (r.status !== 200) throw new Error(`GET /services: ${r.status} ${r.text}`);
    return r.body.data.map((s: { name: string }) => s.name).sort();
  }

  /** Ids listed by a management association listing, sorted. */
  async ids(path: string): Promise<string[]> {
    const r = await this.admin.get(path.includes('?') ? `${path}&limit=500` : `${path}?limit=500`);
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
    return r.body.data.map((x: { id: string }) => x.id).sort();
  }
}
