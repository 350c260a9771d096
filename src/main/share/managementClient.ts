import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { SVC_PROXY_CONFIG_TYPE_ID, SHARE_TAG, shareResourceName, type ShareConfigData } from '../core/shares/index';
import { adminClientFiles } from './adminClientCert';
import { ShareCliError } from './errors';
import { readRuntimeFile, type RuntimeInfo } from './runtimeFile';

const API_BASES = { management: '/edge/management/v1', client: '/edge/client/v1' } as const;
export type ApiName = keyof typeof API_BASES;

/** An error answer of the Management API. */
export class ApiAnswerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly field: string | undefined,
    readonly reason: string,
  ) {
    super(field ? `${field}: ${reason}` : reason);
  }
}

export interface ShareIds {
  configId: string;
  serviceId: string;
}

/**
 * The Management API as the default admin, logged in with the data dir's admin client certificate over
 * mutual TLS (`POST /authenticate?method=cert`): no password on the command line.
 */
export class ManagementClient {
  /** seconds until the API session expires without activity, as the login answered */
  sessionSeconds?: number;

  private constructor(
    readonly runtime: RuntimeInfo,
    /** the controller's CA bundle (PEM) */
    readonly ca: string,
    private readonly agent: Agent,
    private token: string,
    private readonly api: ApiName,
  ) {}

  static async login(dataDir: string): Promise<ManagementClient> {
    const runtime = readRuntimeFile(dataDir);
    const files = adminClientFiles(join(dataDir, 'pki'));
    let tls: { ca: string; cert: string; key: string };
    try {
      tls = { ca: readFileSync(files.ca, 'utf8'), cert: readFileSync(files.cert, 'utf8'), key: readFileSync(files.key, 'utf8') };
    } catch (err) {
      throw new ShareCliError(
        `cannot read the admin client certificate (${(err as Error).message}); it is issued on the first start of Weft in ${dataDir} ` +
          'and readable only by the user who started it',
      );
    }
    return ManagementClient.certificateLogin(runtime, tls, 'management', (err) => {
      if (err instanceof ApiAnswerError && err.status === 401) {
        throw new ShareCliError('certificate login refused: the admin client certificate of this data dir is no longer registered with Weft');
      }
      throw err;
    });
  }

  /** Logs in to one of the APIs with a client certificate (`POST /authenticate?method=cert`). */
  static async certificateLogin(
    runtime: RuntimeInfo,
    tls: { ca: string; cert: string; key: string },
    api: ApiName,
    onRefusal: (err: unknown) => never = (err) => {
      throw err;
    },
  ): Promise<ManagementClient> {
    const agent = new Agent({ connect: tls });
    try {
      const client = new ManagementClient(runtime, tls.ca, agent, '', api);
      const session = await client
        .call<{ token: string; authQueries?: unknown[]; expirationSeconds?: number }>('POST', '/authenticate?method=cert', {}, false)
        .catch(onRefusal);
      if (session.authQueries?.length) {
        throw new ShareCliError('the login requires MFA, which weft share cannot complete with a certificate');
      }
      client.token = session.token;
      client.sessionSeconds = session.expirationSeconds;
      return client;
    } catch (err) {
      await agent.close();
      throw err;
    }
  }

  /** The API session token of this login. */
  get apiSession(): string {
    return this.token;
  }

  /** One request; `data` of the answer, or an ApiAnswerError / ShareCliError (unreachable). */
  async call<T = unknown>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, withSession = true, api: ApiName = this.api): Promise<T> {
    const headers: Record<string, string> = {};
    if (withSession) headers['zt-session'] = this.token;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res;
    try {
      res = await request(this.runtime.api + API_BASES[api] + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher: this.agent,
      });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new ShareCliError(`cannot reach Weft at ${this.runtime.api}: ${e.code ?? e.message}`);
    }
    const text = await res.body.text();
    let parsed: { data?: unknown; error?: { code?: string; message?: string; cause?: { field?: string; reason?: string } } };
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      throw new ShareCliError(`unexpected answer from ${this.runtime.api} (HTTP ${res.statusCode})`);
    }
    if (res.statusCode >= 400) {
      const e = parsed?.error ?? {};
      throw new ApiAnswerError(res.statusCode, e.code, e.cause?.field, e.cause?.reason ?? e.message ?? `HTTP ${res.statusCode}`);
    }
    return parsed.data as T;
  }

  /**
   * Creates the share's config and its service; a failure leaves nothing behind. Overlay shares' services do not
   * require end-to-end encryption (Weft's SDK, on both ends, has none; the router carries them over TLS).
   */
  async createShare(data: ShareConfigData): Promise<ShareIds> {
    const name = shareResourceName(data.token);
    const tags = { [SHARE_TAG]: true };
    const config = await this.call<{ id: string }>('POST', '/configs', { name, configTypeId: SVC_PROXY_CONFIG_TYPE_ID, data, tags });
    try {
      const service = await this.call<{ id: string }>('POST', '/services', { name, encryptionRequired: !data.overlay, configs: [config.id], tags });
      return { configId: config.id, serviceId: service.id };
    } catch (err) {
      await this.call('DELETE', `/configs/${config.id}`).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Deletes what belongs to the share: an overlay share's policies and identity (named after the token), every
   * service carrying the config, then the config; already-deleted parts are fine.
   */
  async deleteShare(configId: string): Promise<void> {
    const config = await this.call<{ data?: ShareConfigData }>('GET', `/configs/${configId}`).catch(ignoreNotFound(undefined));
    if (config?.data?.token) await this.deleteOverlayParts(config.data.token);
    const services = await this.call<Array<{ id: string }>>('GET', `/configs/${configId}/services?limit=500`).catch(ignoreNotFound([]));
    for (const s of services) await this.call('DELETE', `/services/${s.id}`).catch(ignoreNotFound(undefined));
    await this.call('DELETE', `/configs/${configId}`).catch(ignoreNotFound(undefined));
  }

  /** The policies and identity an overlay share was created with (none for a local one); how many were deleted. */
  async deleteOverlayParts(token: string): Promise<number> {
    let deleted = 0;
    const name = shareResourceName(token);
    const names = overlayPartNames(token);
    const byName = (list: string[]) => encodeURIComponent(list.map((n) => `name = "${n}"`).join(' or '));
    for (const [path, wanted] of [
      ['/service-policies', [names.bindPolicy, names.dialPolicy]],
      ['/edge-router-policies', [name]],
      ['/service-edge-router-policies', [name]],
      ['/identities', [names.identity]],
    ] as const) {
      const found = await this.call<Array<{ id: string; name: string }>>('GET', `${path}?filter=${byName([...wanted])}&limit=10`);
      for (const e of found) {
        if (!(wanted as readonly string[]).includes(e.name)) continue;
        await this.call('DELETE', `${path}/${e.id}`).catch(ignoreNotFound(undefined));
        deleted++;
      }
    }
    return deleted;
  }

  /** The config of the share created by `weft share public` with this token, if any. */
  async findShareConfig(token: string): Promise<string | undefined> {
    const filter = encodeURIComponent(`name = "${shareResourceName(token)}" and type = "${SVC_PROXY_CONFIG_TYPE_ID}"`);
    const found = await this.call<Array<{ id: string; data: ShareConfigData }>>('GET', `/configs?filter=${filter}`);
    return found.find((c) => c.data?.token === token)?.id;
  }

  /** Logs out (unless the API session is handed on, as a share grant's is) and closes the connections. */
  async close(opts: { keepSession?: boolean } = {}): Promise<void> {
    if (!opts.keepSession) await this.call('DELETE', '/current-api-session').catch(() => undefined);
    await this.agent.close();
  }
}

/** Names of what an overlay share adds to its config and service (all tagged like them). */
export function overlayPartNames(token: string) {
  const name = shareResourceName(token);
  return { identity: name, bindPolicy: `${name}-bind`, dialPolicy: `${name}-dial`, edgeRouterPolicy: name, serviceEdgeRouterPolicy: name };
}

function ignoreNotFound<T>(fallback: T) {
  return (err: unknown): T => {
    if (err instanceof ApiAnswerError && err.status === 404) return fallback;
    throw err;
  };
}
