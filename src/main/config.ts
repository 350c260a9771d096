import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parse as parseYaml } from 'yaml';
import { parseDuration } from '../shared/duration';
import { frontendConfigSchema } from './frontend/config';
import { eventsConfigSchema } from './events/config';

/** host:port with a port 0..65535 (0 = pick a free port). */
export const hostPort = z
  .string()
  .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port')
  .refine((v) => Number(v.slice(v.lastIndexOf(':') + 1)) <= 65535, 'port must be between 0 and 65535');
const duration = z.string().refine((v) => {
  try {
    return parseDuration(v) > 0;
  } catch {
    return false;
  }
}, 'must be a duration such as 30s, 5m or 6h');

/**
 * Rate limits of the controller API. Defaults are generous for one workstation's clients (and the test suite's
 * bursts of logins from 127.0.0.1) yet bound what one client or a login storm can take.
 */
const rateLimitsSchema = z
  .object({
    /** adaptive cap on concurrent authentications (POST /authenticate, /authenticate/mfa): 429 beyond it */
    auth: z
      .object({
        enabled: z.boolean().default(true),
        /** the window starts here and never grows past it */
        max_concurrent: z.number().int().min(1).max(10_000).default(64),
        /** the window never shrinks below this */
        min_concurrent: z.number().int().min(1).max(10_000).default(8),
        /** an authentication slower than this shrinks the window by a quarter; a faster one widens it by one */
        target_latency: duration.default('5s'),
      })
      .strict()
      .prefault({}),
    /** token bucket per client IP address over every API request: 429 with Retry-After when empty */
    per_client: z
      .object({
        enabled: z.boolean().default(true),
        requests_per_second: z.number().positive().max(1_000_000).default(1000),
        burst: z.number().int().min(1).max(1_000_000).default(2000),
      })
      .strict()
      .prefault({}),
    /** a request not answered within this time gets 503 SERVICE_UNAVAILABLE */
    request_timeout: duration.default('30s'),
    /** minimum time between two database snapshots (POST /database/snapshot): 429 before */
    snapshot_interval: duration.default('1m'),
  })
  .strict()
  .refine((v) => v.auth.min_concurrent <= v.auth.max_concurrent, {
    message: 'auth.min_concurrent must not exceed auth.max_concurrent',
    path: ['auth', 'min_concurrent'],
  });

/** 127.0.0.0/8, ::1 or localhost: the console speaks plain HTTP and must not be reachable from the network. */
function isLoopbackAddress(address: string): boolean {
  const { host } = splitHostPort(address);
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** tls:HOST:PORT, the form OpenZiti writes router listeners and URLs in. */
export const tlsAddress = z
  .string()
  .regex(/^tls:(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be tls:host:port')
  .refine((v) => Number(v.slice(v.lastIndexOf(':') + 1)) <= 65535, 'port must be between 0 and 65535');

/** The built-in edge router (src/main/router): OpenZiti's edge protocol for SDKs and tunnelers. */
const routerSchema = z
  .object({
    enabled: z.boolean().default(true),
    /** the edge router entity's name (at its creation; rename it through the API afterwards) */
    name: z.string().min(1).max(100).default('er-builtin'),
    /** unset: tls:127.0.0.1:3022, or a free port when that one is taken; port 0 = a free port */
    listener: tlsAddress.optional(),
    /** host[:port] SDKs connect to (in sessions' edge router URLs); default: the listener's (127.0.0.1 for 0.0.0.0) */
    advertise: z
      .string()
      .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/, 'must be host or host:port')
      .optional(),
    /** connections that do not answer a ping within this interval are closed (their terminators removed) */
    heartbeat_interval: duration.default('30s'),
    /**
     * where stock routers dial to link with the built-in router (tls:host:port; port 0 = a free port), advertised with
     * the router's advertised host; unset: the built-in router takes no part in the stock routers' mesh
     */
    link_listener: tlsAddress.optional(),
  })
  .strict();

/**
 * The control channel stock OpenZiti routers dial (src/main/ctrl): OpenZiti's `ctrl` listener. `advertise` is what
 * router enrollment JWTs name in `ctrls` (what `ziti router enroll` writes as the router's ctrl endpoint).
 */
const ctrlSchema = z
  .object({
    enabled: z.boolean().default(true),
    /** unset: tls:127.0.0.1:6262, or a free port when that one is taken; port 0 = a free port */
    listener: tlsAddress.optional(),
    /** tls:host[:port] routers are told to dial; default: the listener's host (127.0.0.1 for 0.0.0.0) and bound port */
    advertise: z
      .string()
      .regex(/^tls:(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/, 'must be tls:host or tls:host:port')
      .refine((v) => !/:\d+$/.test(v) || Number(v.slice(v.lastIndexOf(':') + 1)) <= 65535, 'port must be between 0 and 65535')
      .optional(),
    /** how often a heartbeat goes to each router (OpenZiti's default: 10s) */
    heartbeat_interval: duration.default('10s'),
    /** a router that answers no heartbeat for this long is dropped (OpenZiti's default: 30s; twice that after connecting) */
    unresponsive_timeout: duration.default('30s'),
  })
  .strict();

/** The operator console (src/main/console): a loopback HTTP server for the renderer and its tRPC API. */
const consoleSchema = z
  .object({
    enabled: z.boolean().default(true),
    /** unset: 127.0.0.1:1281, or a free port when that one is taken; port 0 = a free port */
    address: hostPort.refine(isLoopbackAddress, 'must be a loopback address (127.0.0.1, [::1] or localhost)').optional(),
    /** how long a one-time login link printed at start (or made by the desktop app) stays usable */
    login_link_ttl: duration.default('15m'),
  })
  .strict();

/** Prometheus metrics (src/main/metrics): GET /metrics on a plain HTTP listener of their own. */
const metricsSchema = z
  .object({
    enabled: z.boolean().default(true),
    /** unset: 127.0.0.1:1282, or a free port when that one is taken; port 0 = a free port */
    address: hostPort.optional(),
    /** a file holding the token scrapers must send (`Authorization: Bearer <token>`); required off loopback */
    bearer_token_file: z.string().min(1).optional(),
  })
  .strict()
  .refine((v) => !v.address || isLoopbackAddress(v.address) || v.bearer_token_file, {
    message: 'a non-loopback address needs metrics.bearer_token_file (metrics are plain HTTP)',
    path: ['address'],
  });

export const configSchema = z
  .object({
    data_dir: z.string().min(1).optional(),
    /** the database: a SQLite file (default <data_dir>/weft.db) or a PostgreSQL URL (several nodes on one database) */
    store: z
      .object({ url: z.string().min(1).optional() })
      .strict()
      .prefault({}),
    log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** auto: readable lines on a terminal, JSON lines otherwise; overridden by --log-format */
    log_format: z.enum(['auto', 'pretty', 'json']).default('auto'),
    api: z
      .object({
        address: hostPort.default('127.0.0.1:1280'),
        /** extra host names / IPs for the server certificate and the advertised URL (first one wins) */
        advertised_hosts: z.array(z.string().min(1)).default([]),
        session_timeout: duration.default('30m'),
        /** the brand word in what Weft sends (MFA auth query provider): svc (the specification's) or ziti (stock SDKs) */
        brand: z.enum(['svc', 'ziti']).default('svc'),
        /**
         * OpenZiti's OIDC authentication (/oidc, advertised as the OIDC_AUTH capability, which SDKs then prefer to
         * POST /authenticate; `enabled: false` serves the legacy login only) and its tokens' lifetimes (OpenZiti's
         * defaults; an OIDC API session ends when its last refresh token expires)
         */
        oidc: z
          .object({
            enabled: z.boolean().default(true),
            access_token_lifetime: duration.default('30m'),
            id_token_lifetime: duration.default('30m'),
            refresh_token_lifetime: duration.default('24h'),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    frontend: frontendConfigSchema.optional(),
    console: consoleSchema.prefault({}),
    metrics: metricsSchema.prefault({}),
    router: routerSchema.prefault({}),
    ctrl: ctrlSchema.prefault({}),
    rate_limits: rateLimitsSchema.prefault({}),
    /** event loggers, as OpenZiti's controller config writes them (events/config.ts) */
    events: eventsConfigSchema.default({}),
    /** the audit log: entries older than `retention`, and the oldest beyond `max_entries`, are pruned (every 10 minutes) */
    audit: z
      .object({
        retention: duration.default('2160h'),
        max_entries: z.number().int().min(1000).max(100_000_000).default(1_000_000),
      })
      .strict()
      .prefault({}),
  })
  .strict();
export type WeftConfig = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Formats a zod issue (the first by default) as one line naming the field. */
export function describeIssue(error: z.ZodError, prefix = '', issue: z.core.$ZodIssue = error.issues[0]!): string {
  const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') message = `unknown field(s): ${issue.keys.join(', ')}`;
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) message = 'is required';
  return `${path || '(root)'}: ${message}`;
}

/** Reads and validates the YAML config file (or the defaults when there is none). Throws ConfigError. */
export function loadConfig(file: string | undefined): WeftConfig {
  let raw: unknown = {};
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new ConfigError(`config file ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : (e as Error).message}`);
    }
    try {
      raw = parseYaml(text) ?? {};
    } catch (e) {
      throw new ConfigError(`config file ${file}: not valid YAML: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    // One line per bad field: a field failing several checks reports its first problem only.
    const fields = new Map<string, z.core.$ZodIssue>();
    for (const issue of result.error.issues) if (!fields.has(issue.path.join('.'))) fields.set(issue.path.join('.'), issue);
    throw new ConfigError([...fields.values()].map((issue) => `config file ${file}: ${describeIssue(result.error, '', issue)}`).join('\n'));
  }
  return result.data;
}

export function splitHostPort(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  return { host: address.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(address.slice(i + 1)) };
}
