import { z } from 'zod';
import { validationErrors, type FieldCause } from './errors';

/**
 * Parses input with a zod schema; the first problem becomes OpenZiti's COULD_NOT_VALIDATE with cause.field, and
 * every problem (one per field) is listed for the console (`forPeople.causes`).
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(normalizeGoJson(schema, input));
  if (result.success) return result.data;
  const causes: FieldCause[] = [];
  for (const issue of result.error.issues) {
    const path = issue.path.map(String);
    const field = path.length ? path.join('.') : '(root)';
    if (causes.some((c) => c.field === field)) continue;
    const value = valueAt(input, path);
    let reason = issue.message;
    if (issue.code === 'invalid_type' && value === undefined) reason = 'is required';
    causes.push({ field, reason, value });
  }
  throw validationErrors(causes);
}

function valueAt(input: unknown, path: string[]): unknown {
  let v: unknown = input;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

/**
 * A REST PATCH body as OpenZiti reads it: a field whose value is `null` is not an update (its JSON field tracking
 * skips nil values), so Go clients send `null` for every field they leave alone, e.g. `ziti edge update
 * ext-jwt-signer`. Top-level fields only: nested objects (tags, app data, auth policy sections) are merged by their
 * owners. The core's own PATCH (used by the console) keeps `null` = clear.
 */
export function patchFields(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null));
}

/** Object shapes reachable from a schema through wrappers, unions, pipes and arrays (zod 4 definitions). */
type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  options?: z.ZodType[];
  valueType?: z.ZodType;
  left?: z.ZodType;
  right?: z.ZodType;
  getter?: () => z.ZodType;
};
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/**
 * OpenZiti decodes bodies with Go's encoding/json, and Go clients (its own CLI among them) rely on two of its habits:
 * field names match case-insensitively (`{"Type": "Windows", "Versions": [...]}` for OS posture checks), and a nil
 * slice is sent as `null` and means an empty list. Renames keys that differ from a known field only in case (exact
 * names win) and turns `null` into `[]` where the schema wants a list and does not accept null itself (where it
 * does, null keeps its own meaning, e.g. "inherit"). Returns the input
 * itself when nothing changes.
 */
export function normalizeGoJson(schema: z.ZodType, input: unknown, depth = 0): unknown {
  if (depth > 16) return input;
  const def = defOf(schema);
  if (input === null) {
    // a Go nil slice where the schema has no meaning for null: an empty list
    if (def.type === 'array') return [];
    if (['optional', 'default', 'prefault', 'catch', 'readonly', 'nonoptional'].includes(def.type))
      return normalizeGoJson(def.innerType!, input, depth + 1);
    return def.type === 'pipe' ? normalizeGoJson(def.in!, input, depth + 1) : input;
  }
  if (typeof input !== 'object') return input;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return normalizeGoJson(def.innerType!, input, depth + 1);
    case 'pipe':
      return normalizeGoJson(def.in!, input, depth + 1);
    case 'lazy':
      return normalizeGoJson(def.getter!(), input, depth + 1);
    case 'union':
      return def.options!.reduce<unknown>((v, option) => normalizeGoJson(option, v, depth + 1), input);
    case 'intersection':
      return normalizeGoJson(def.right!, normalizeGoJson(def.left!, input, depth + 1), depth + 1);
    case 'array': {
      if (!Array.isArray(input)) return input;
      const out = input.map((v) => normalizeGoJson(def.element!, v, depth + 1));
      return out.some((v, i) => v !== input[i]) ? out : input;
    }
    case 'record': {
      if (Array.isArray(input)) return input;
      const entries = Object.entries(input).map(([k, v]) => [k, normalizeGoJson(def.valueType!, v, depth + 1)] as const);
      return entries.some(([k, v]) => v !== (input as Record<string, unknown>)[k]) ? Object.fromEntries(entries) : input;
    }
    case 'object': {
      if (Array.isArray(input)) return input;
      const shape = def.shape!;
      let changed = false;
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(input)) {
        let name = key;
        if (!(key in shape)) {
          const lower = key.toLowerCase();
          const match = Object.keys(shape).find((k) => k.toLowerCase() === lower);
          if (match && !(match in input)) name = match;
        }
        const v = name in shape ? normalizeGoJson(shape[name]!, value, depth + 1) : value;
        if (name !== key || v !== value) changed = true;
        out[name] = v;
      }
      return changed ? out : input;
    }
    default:
      return input;
  }
}

/** A JSON Schema (draft 2020-12) object as zod writes it. */
export type JsonSchemaObject = { [key: string]: unknown };

/** The JSON Schema of a request body as clients send it (zod's input side; what JSON cannot express is left open). */
export function bodyJsonSchema(schema: z.ZodType): JsonSchemaObject {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaObject;
}
