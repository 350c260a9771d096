/**
 * Types and constants shared by the console's server (src/main/console) and its renderer (src/renderer).
 * Nothing here imports main-process code: the renderer bundles this file.
 */

/** Every tRPC request of the renderer carries this header; the server refuses calls without it (CSRF). */
export const CSRF_HEADER = 'x-weft-console';
export const CSRF_HEADER_VALUE = '1';

/** Path of the one-time login link: `/login/link?token=...`. */
export const LOGIN_LINK_PATH = '/login/link';
/** Query parameter the server adds to `/` when a login link could not be used. */
export const LOGIN_LINK_FAILED_PARAM = 'login';

export interface ConsoleUrls {
  api: string;
  client: string;
  management: string;
  console: string;
  /** public share URL with `{token}` for the share's token; absent without a frontend */
  shareUrl?: string;
  /** Prometheus metrics (GET), when metrics are on */
  metrics?: string;
}

/** The OpenZiti error behind a console error: code, message and (for validation errors) the field. */
export interface ZitiErrorData {
  code: string;
  message: string;
  cause?: { field: string; reason: string; value?: unknown };
  /** the error in plain words, when the core has them ("An identity named eve already exists"); then it is the reason */
  plain?: string;
  /** every field at fault when there are several (the first is `cause`) */
  causes?: Array<{ field: string; reason: string; value?: unknown }>;
}

/** An entity as the management API presents it. */
export interface Entity {
  id: string;
  name?: string;
  createdAt?: string;
  updatedAt?: string;
  tags?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface Pagination {
  limit: number;
  offset: number;
  totalCount: number;
}

export interface ListPage<T = Entity> {
  data: T[];
  meta: { pagination: Pagination; filterableFields: string[] };
}

export type SortDir = 'asc' | 'desc';

export interface ListQuery {
  limit?: number;
  offset?: number;
  /** ZitiQL (without or with its own `sort by`, which then wins over `sort`) */
  filter?: string;
  sort?: { field: string; dir: SortDir };
  roleFilter?: string[];
  roleSemantic?: 'AllOf' | 'AnyOf';
}

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 500;

/** A ZitiQL string literal (the console's searches and the server's role-attribute lookups quote with it). */
export const zitiString = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** Sign-in through an external JWT signer's IdP: `/login/sso?signer=<id>` starts it, the IdP returns to the callback. */
export const SSO_START_PATH = '/login/sso';
export const SSO_CALLBACK_PATH = '/login/sso/callback';
/** What the server adds to `/?login=` when a sign-in through an IdP did not succeed (the login page says why). */
export const SSO_FAILURES = [
  'sso-signer',
  'sso-unavailable',
  'sso-state',
  'sso-idp',
  'sso-unknown-identity',
  'sso-policy',
  'sso-disabled',
  'sso-audience',
  'sso-refused',
] as const;
export type SsoFailure = (typeof SSO_FAILURES)[number];
