import type { Store } from '../store/db';
import { validationErrors, type FieldCause } from '../errors';
import { ROLE_KINDS, type RoleKind } from '../kinds';

/**
 * Roles that name entities by name (`@laptop-1`) as well as by id (`@4B814CpTFC`), as the `ziti` CLI accepts them:
 * each `@x` becomes `@<id>` of the entity of the kind whose id is x (an id wins, as with `ziti edge create ...`, so
 * resolving twice changes nothing), else whose name is x, else whose name is x ignoring case. The console's input
 * goes through here before a policy is written (REST keeps OpenZiti's `@id`). `@x` that names several entities
 * ignoring case (and none exactly) is ambiguous; `@x` that names nothing is unknown. `#attr` and `#all` pass through.
 */
export interface RoleNameProblem {
  role: string;
  problem: 'unknown' | 'ambiguous';
  /** the entities an ambiguous role could mean: their names (and ids) */
  candidates?: Array<{ id: string; name: string }>;
}

export interface ResolvedRoles {
  /** the roles with every resolvable `@name` as `@id` (unresolved ones as given), duplicates dropped, order kept */
  roles: string[];
  problems: RoleNameProblem[];
}

interface Named {
  id: string;
  name: string;
}

/** Resolves the `@name` roles of one side (one query by id or exact name, one more only for what is left). */
export async function lookupRoleNames(store: Store, kind: RoleKind, given: readonly string[]): Promise<ResolvedRoles> {
  const table = ROLE_KINDS[kind].table;
  const refs = [...new Set(given.filter((r) => r.startsWith('@') && r.length > 1).map((r) => r.slice(1)))];
  const byRef = new Map<string, string | RoleNameProblem>();
  if (refs.length) {
    const exact = await store.allSql<Named>(
      `SELECT id, name FROM ${table} WHERE id IN ${store.sql.jsonValues()} OR name IN ${store.sql.jsonValues()}`,
      JSON.stringify(refs),
      JSON.stringify(refs),
    );
    const left: string[] = [];
    for (const ref of refs) {
      const byId = exact.find((e) => e.id === ref);
      const byName = exact.filter((e) => e.name === ref);
      if (byId) byRef.set(ref, byId.id);
      else if (byName.length === 1) byRef.set(ref, byName[0]!.id);
      else if (byName.length > 1) byRef.set(ref, { role: `@${ref}`, problem: 'ambiguous', candidates: byName });
      else left.push(ref);
    }
    if (left.length) {
      const folded = await store.allSql<Named>(
        `SELECT id, name FROM ${table} WHERE lower(name) IN ${store.sql.jsonValues()} ORDER BY name`,
        JSON.stringify([...new Set(left.map((r) => r.toLowerCase()))]),
      );
      for (const ref of left) {
        const found = folded.filter((e) => e.name.toLowerCase() === ref.toLowerCase());
        if (found.length === 1) byRef.set(ref, found[0]!.id);
        else byRef.set(ref, { role: `@${ref}`, problem: found.length ? 'ambiguous' : 'unknown', ...(found.length ? { candidates: found } : {}) });
      }
    }
  }
  const roles: string[] = [];
  const problems: RoleNameProblem[] = [];
  for (const role of given) {
    const hit = role.startsWith('@') ? byRef.get(role.slice(1)) : undefined;
    const out = typeof hit === 'string' ? `@${hit}` : role;
    if (hit && typeof hit !== 'string' && !problems.some((p) => p.role === hit.role)) problems.push(hit);
    if (!roles.includes(out)) roles.push(out);
  }
  return { roles, problems };
}

/** What is wrong with a side's roles, in one sentence naming every role at fault. */
export function describeRoleNameProblems(kind: RoleKind, problems: readonly RoleNameProblem[]): string {
  const k = ROLE_KINDS[kind];
  const unknown = problems.filter((p) => p.problem === 'unknown').map((p) => p.role);
  const parts: string[] = [];
  if (unknown.length) parts.push(`no ${k.label} has the name or id ${unknown.join(', ')}`);
  for (const p of problems.filter((x) => x.problem === 'ambiguous')) {
    const which = (p.candidates ?? []).map((c) => `${c.name} (@${c.id})`).join(', ');
    parts.push(`${p.role} is ambiguous: it could mean the ${k.plural} ${which}; choose one by its id`);
  }
  return parts.join('; ');
}

export interface RoleField {
  /** the body field the roles came in (the error's field) */
  field: string;
  kind: RoleKind;
  roles: readonly string[];
}

/**
 * Several role fields resolved at once (`@name` to `@id`, in the order given); when any name is unknown or
 * ambiguous, one COULD_NOT_VALIDATE error lists every field at fault, each naming its roles (the first is the cause).
 */
export async function resolveRoleFields(store: Store, fields: readonly RoleField[]): Promise<string[][]> {
  const out: string[][] = [];
  const causes: FieldCause[] = [];
  for (const f of fields) {
    const { roles, problems } = await lookupRoleNames(store, f.kind, f.roles);
    if (problems.length) causes.push({ field: f.field, reason: describeRoleNameProblems(f.kind, problems), value: problems.map((p) => p.role) });
    out.push(roles);
  }
  if (causes.length) throw validationErrors(causes);
  return out;
}
