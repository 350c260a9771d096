import { Agent, request } from 'undici';

/** How a client's connections are made (undici's `connect` option), from its CA and client certificate. */
export type ConnectWith = (tls: { ca: string; cert?: string; key?: string }) => NonNullable<Agent.Options['connect']>;
import { assertSwagger } from './swagger';

export interface Resp<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

export type Api = 'client' | 'management' | 'root';
const BASES: Record<Api, string> = { client: '/edge/client/v1', management: '/edge/management/v1', root: '' };

/** A minimal HTTPS client for the controller APIs, trusting only the controller's CA. */
export class ApiClient {
  token?: string;
  readonly agent: Agent;

  constructor(
    readonly baseUrl: string,
    readonly ca: string,
    tlsClient?: { cert: string; key: string },
    /** connections made otherwise than with Node's own certificate checks (e.g. verified at a simulated date) */
    readonly connectWith?: ConnectWith,
  ) {
    this.agent = new Agent({ connect: connectWith ? connectWith({ ca, ...tlsClient }) : { ca, ...(tlsClient ?? {}) } });
  }

  withCert(cert: string, key: string): ApiClient {
    return new ApiClient(this.baseUrl, this.ca, { cert, key }, this.connectWith);
  }

  async req<T = any>(
    method: string,
    path: string,
    body?: unknown,
    opts: { api?: Api; headers?: Record<string, string>; raw?: string | Buffer; contentType?: string } = {},
  ): Promise<Resp<T>> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (this.token && !('zt-session' in headers)) headers['zt-session'] = this.token;
    let payload: string | Buffer | undefined;
    if (opts.raw !== undefined) {
      payload = opts.raw;
      headers['content-type'] = opts.contentType ?? 'text/plain';
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const fullPath = BASES[opts.api ?? 'management'] + path;
    const res = await request(this.baseUrl + fullPath, {
      method: method as any,
      headers,
      body: payload,
      dispatcher: this.agent,
    });
    const text = await res.body.text();
    let parsed: any = text;
    const contentType = String(res.headers['content-type'] ?? '');
    if (contentType.includes('json') && text) parsed = JSON.parse(text);
    // every response of every test must match the official OpenZiti swagger (see ./swagger.ts)
    assertSwagger({ method, path: fullPath, status: res.statusCode, contentType, body: parsed, text });
    return { status: res.statusCode, headers: res.headers as Resp['headers'], body: parsed, text };
  }

  get<T = any>(path: string, opts?: Parameters<ApiClient['req']>[3]) {
    return this.req<T>('GET', path, undefined, opts);
  }
  post<T = any>(path: string, body?: unknown, opts?: Parameters<ApiClient['req']>[3]) {
    return this.req<T>('POST', path, body, opts);
  }
  put<T = any>(path: string, body?: unknown, opts?: Parameters<ApiClient['req']>[3]) {
    return this.req<T>('PUT', path, body, opts);
  }
  patch<T = any>(path: string, body?: unknown, opts?: Parameters<ApiClient['req']>[3]) {
    return this.req<T>('PATCH', path, body, opts);
  }
  del<T = any>(path: string, opts?: Parameters<ApiClient['req']>[3]) {
    return this.req<T>('DELETE', path, undefined, opts);
  }

  async login(username: string, password: string, api: Api = 'management'): Promise<Resp> {
    const r = await this.post('/authenticate?method=password', { username, password }, { api });
    if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.text}`);
    this.token = r.body.data.token;
    return r;
  }

  /** Creates an entity and returns its id, failing loudly on anything but 201. */
  async create(path: string, body: unknown, api: Api = 'management'): Promise<string> {
    const r = await this.post(path, body, { api });
    if (r.status !== 201) throw new Error(`create ${path} failed: ${r.status} ${r.text}`);
    return r.body.data.id;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
