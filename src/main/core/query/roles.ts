import { validationError } from '../errors';
import type { SqlDialect } from '../store/sqlDialect';

export type Semantic = 'AllOf' | 'AnyOf';

export interface ParsedRoles {
  all: boolean;
  ids: string[];
  attrs: string[];
}

/** Splits policy roles: `#all`, `#attr` (attribute), `@id` (entity id). */
export function parseRoles(roles: readonly string[], field = 'roles'): ParsedRoles {
  const out: ParsedRoles = { all: false, ids: [], attrs: [] };
  roles.forEach((r, i) => {
    if (r === '#all') out.all = true;
    else if (r.startsWith('#') && r.length > 1) out.attrs.push(r.slice(1));
    else if (r.startsWith('@') && r.length > 1) out.ids.push(r.slice(1));
    else throw validationError(`${field}.${i}`, "roles must be '#all', '#<attribute>' or '@<id>'", r);
  });
  return out;
}

export function parseSemantic(v: string | undefined, field = 'semantic'): Semantic {
  if (v === undefined || v === '' || v === 'AllOf') return 'AllOf';
  if (v === 'AnyOf') return 'AnyOf';
  throw validationError(field, "must be 'AllOf' or 'AnyOf'", v);
}

/**
 * SQL condition over alias `t` selecting the entities of a kind that the roles match:
 * listed ids always match; attributes must all (AllOf) or any (AnyOf) be present; `#all` matches everything.
 */
export function roleMatchSql(sql: SqlDialect, entityType: string, roles: ParsedRoles, semantic: Semantic): { where: string; params: unknown[] } {
  if (roles.all) return { where: '1=1', params: [] };
  const parts: string[] = [];
  const params: unknown[] = [];
  if (roles.ids.length) {
    parts.push(`t.id IN ${sql.jsonValues()}`);
    params.push(JSON.stringify(roles.ids));
  }
  const attrs = [...new Set(roles.attrs)];
  if (attrs.length) {
    if (semantic === 'AnyOf') {
      parts.push(`t.id IN (SELECT entity_id FROM role_attributes WHERE entity_type = ? AND attr IN ${sql.jsonValues()})`);
      params.push(entityType, JSON.stringify(attrs));
    } else {
      parts.push(
        `t.id IN (SELECT entity_id FROM role_attributes WHERE entity_type = ? AND attr IN ${sql.jsonValues()} GROUP BY entity_id HAVING count(*) = ?)`,
      );
      params.push(entityType, JSON.stringify(attrs), attrs.length);
    }
  }
  return { where: parts.length ? parts.join(' OR ') : '1=0', params };
}

/** The `roleFilter`/`roleSemantic` query parameters of identity, service, edge-router and posture-check lists. */
export function roleFilterSql(sql: SqlDialect, entityType: string, roleFilter: string[], roleSemantic: string | undefined) {
  if (!roleFilter.length) return undefined;
  return roleMatchSql(sql, entityType, parseRoles(roleFilter, 'roleFilter'), parseSemantic(roleSemantic, 'roleSemantic'));
}

/**
 * Validates the roles of one policy side as OpenZiti does: every entry is `#attr` or `@id`, `#all` stands alone,
 * and every `@id` names an existing entity of `table`. Returns the parsed roles.
 */
export async function checkPolicyRoles(
  store: { allSql<T>(sql: string, ...params: unknown[]): Promise<T[]>; sql: SqlDialect },
  field: string,
  roles: readonly string[],
  entity: { table: string; missing: string },
): Promise<ParsedRoles> {
  if (roles.length > 1 && roles.includes('#all')) {
    throw validationError(field, 'if using #all, it should be the only role specified', roles);
  }
  const invalid = roles.filter((r) => !/^[#@]./s.test(r));
  if (invalid.length) {
    throw validationError(field, 'role entries must prefixed with # (to indicate role attributes) or @ (to indicate a name or id)', invalid);
  }
  const parsed = parseRoles(roles, field);
  if (parsed.ids.length) {
    const found = new Set(
      (await store.allSql<{ id: string }>(`SELECT id FROM ${entity.table} WHERE id IN ${store.sql.jsonValues()}`, JSON.stringify(parsed.ids))).map(
        (r) => r.id,
      ),
    );
    const missing = parsed.ids.filter((id) => !found.has(id));
    if (missing.length) throw validationError(field, `no ${entity.missing} found with the given ids`, missing);
  }
  return parsed;
}
