import type { FastifyRequest } from 'fastify';
import type { TLSSocket } from 'node:tls';
import type { z } from 'zod';
import type { Ctx } from '../core/context';
import type { ApiSession } from '../core/auth/index';

export type ApiName = 'client' | 'management' | 'fabric';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export const API_BASES: Record<ApiName, string> = {
  client: '/edge/client/v1',
  management: '/edge/management/v1',
  fabric: '/fabric/v1',
};

/**
 * Who may call a route: 'none' = anyone; 'session' = a complete API session;
 * 'partial' = any API session, including one still waiting for MFA (the MFA completion endpoints).
 */
export type RouteAuth = 'none' | 'session' | 'partial';

export interface ApiRequest {
  ctx: Ctx; // the caller's; ANONYMOUS (no permission) on routes that need no session
  session?: ApiSession;
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  body: unknown;
  headers: FastifyRequest['headers'];
  ip: string;
  /** DER of the TLS client certificate chain presented on the connection (leaf first), if any; computed on first use */
  readonly peerCertificates: Buffer[];
  api: ApiName;
  raw: FastifyRequest;
}

export interface ApiReply {
  status?: number;
  data?: unknown;
  meta?: object;
  /** a non-envelope body (PEM, PKCS#7, PNG, YAML, text) */
  raw?: { contentType: string; body: string | Buffer; headers?: Record<string, string> };
}

export interface RouteDef {
  apis: ApiName[];
  method: Method;
  path: string;
  auth: RouteAuth;
  summary: string;
  body?: z.ZodType;
  /**
   * GET only: the reply depends on nothing but the database, the caller's API session, the URL and the clock, so it
   * may be served again while nothing is written (for at most a second of the core clock; see api/replyCache.ts).
   * Presenters that show more (posture timeouts, in-memory state) call `markVolatile(ctx)` (core/replyReuse.ts).
   */
  cacheable?: boolean;
  /** an authentication step (argon2, JWKS fetches): shares the authentications' concurrency limit with /authenticate */
  authentication?: boolean;
  handler(req: ApiRequest): ApiReply | Promise<ApiReply>;
}

export function peerCertificates(req: FastifyRequest): Buffer[] {
  const socket = req.raw.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function') return [];
  const out: Buffer[] = [];
  let cert = socket.getPeerCertificate(true) as { raw?: Buffer; issuerCertificate?: unknown } | null;
  const seen = new Set<string>();
  while (cert?.raw && !seen.has(cert.raw.toString('base64'))) {
    seen.add(cert.raw.toString('base64'));
    out.push(cert.raw);
    cert = cert.issuerCertificate as typeof cert;
  }
  return out;
}

/** Query values as a string array (repeated parameters and single ones alike). */
export function queryList(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

export function queryString(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[v.length - 1] : v;
}
