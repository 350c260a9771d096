// tRPC over HTTP with the console's cookie and CSRF header, as the renderer calls it (for integration tests).
const CSRF = { 'x-weft-console': '1' };

export interface TrpcResult {
  status: number;
  data: any;
  error: { message: string; data: { code: string; ziti?: any } } | undefined;
}

export class ConsoleClient {
  cookie: string | undefined;
  constructor(readonly base: string) {}

  private async send(path: string, init: RequestInit): Promise<TrpcResult> {
    const res = await fetch(`${this.base}/trpc/${path}`, {
      ...init,
      headers: { ...CSRF, ...(this.cookie ? { cookie: this.cookie } : {}), ...init.headers },
    });
    const set = res.headers.get('set-cookie');
    if (set) this.cookie = set.split(';')[0];
    const body = (await res.json()) as any;
    return { status: res.status, data: body.result?.data, error: body.error };
  }

  query(path: string, input?: unknown): Promise<TrpcResult> {
    return this.send(`${path}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, {});
  }

  mutate(path: string, input?: unknown): Promise<TrpcResult> {
    return this.send(path, { method: 'POST', body: JSON.stringify(input ?? null), headers: { 'content-type': 'application/json' } });
  }

  /**
   * Several calls in one HTTP request, as the renderer's batch link sends them (the server starts them together);
   * one result per call, in order.
   */
  async batch(kind: 'query' | 'mutate', calls: Array<{ path: string; input?: unknown }>): Promise<Array<Omit<TrpcResult, 'status'>>> {
    const paths = calls.map((c) => c.path).join(',');
    const inputs = JSON.stringify(Object.fromEntries(calls.map((c, i) => [i, c.input ?? null])));
    const res = await fetch(
      `${this.base}/trpc/${paths}?batch=1${kind === 'query' ? `&input=${encodeURIComponent(inputs)}` : ''}`,
      kind === 'query'
        ? { headers: { ...CSRF, ...(this.cookie ? { cookie: this.cookie } : {}) } }
        : {
            method: 'POST',
            body: inputs,
            headers: { ...CSRF, 'content-type': 'application/json', ...(this.cookie ? { cookie: this.cookie } : {}) },
          },
    );
    const body = (await res.json()) as any[];
    return body.map((r) => ({ data: r.result?.data, error: r.error }));
  }

  /** The procedure's answer; throws with the error otherwise. */
  async ok(kind: 'query' | 'mutate', path: string, input?: unknown): Promise<any> {
    const r = kind === 'query' ? await this.query(path, input) : await this.mutate(path, input);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.error)}`);
    return r.data;
  }

  async login(username: string, password: string): Promise<this> {
    const r = await this.mutate('session.login', { username, password });
    if (r.status !== 200) throw new Error(`console login failed: ${r.status} ${r.error?.message}`);
    return this;
  }
}
