import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parse as parseYaml } from 'yaml';
import { parseDuration } from '../shared/duration';

/** host:port with a port 0..65535 (0 = pick a free port). */
export const hostPort = z.string().regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port').refine(
  (v) => Number(v.slice(v.lastIndexOf(':') + 1)) <= 65535,
  'port must be between 0 and 65535',
);
const duration = z.string().refine((v) => {
  try {
    return parseDuration(v) > 0;
  } catch {
    return false;
  }
}, 'must be a duration such as 30s, 5m or 6h');

export const configSchema = z
  .object({
    data_dir: z.string().min(1).optional(),
    log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    api: z
      .object({
        address: hostPort.default('127.0.0.1:1280'),
        /** extra host names / IPs for the server certificate and the advertised URL (first one wins) */
        advertised_hosts: z.array(z.string().min(1)).default([]),
        session_timeout: duration.default('30m'),
      })
      .strict()
      .default({ address: '127.0.0.1:1280', advertised_hosts: [], session_timeout: '30m' }),
    frontend: z.unknown().optional(),
    console: z.unknown().optional(),
    rate_limits: z.unknown().optional(),
  })
  .strict();
export type WeftConfig = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Formats the first zod issue as one line naming the field. */
export function describeIssue(error: z.ZodError, prefix = ''): string {
  const issue = error.issues[0]!;
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
  if (!result.success) throw new ConfigError(`config file ${file}: ${describeIssue(result.error)}`);
  return result.data;
}

export function splitHostPort(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  return { host: address.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(address.slice(i + 1)) };
}
