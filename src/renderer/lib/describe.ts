import { skipToken, useQuery } from '@tanstack/react-query';
import type { FieldSpec } from '../components/ResourceForm';
import { useTRPC } from '../trpc';
import type { ResourceName, RouterOutputs } from './types';

/**
 * What the core says about a resource type (`resources.describe`): the JSON Schemas of its create and update bodies
 * (null when the console does not offer the operation), the fields a list may sort and filter by, its role kind and
 * the writes offered. Forms and tables take their facts from it instead of restating them per page.
 */
export type ResourceDescription = RouterOutputs['resources']['describe'];
export type JsonSchema = { [key: string]: unknown };

/** The description of a type (none without a type); it never changes while the server runs, so it is fetched once. */
export function useResourceDescription(resource: ResourceName | undefined) {
  const trpc = useTRPC();
  return useQuery(trpc.resources.describe.queryOptions(resource ? { resource } : skipToken, { staleTime: Infinity, gcTime: Infinity }));
}

/** The console's resource types, as the server lists them (`resources.names`); they never change while it runs. */
export function useConsoleResources(enabled = true) {
  const trpc = useTRPC();
  return useQuery(trpc.resources.names.queryOptions(enabled ? undefined : skipToken, { staleTime: Infinity, gcTime: Infinity }));
}

// ---- reading a JSON Schema by dotted path ---------------------------------------------------------

const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNull = (s: unknown) => isObject(s) && (s.type === 'null' || (Array.isArray(s.type) && s.type.length === 1 && s.type[0] === 'null'));

/** Without nullability (`anyOf [X, null]`, `type: [T, "null"]`); other keys (e.g. `default`) do not matter here. */
function unwrap(s: JsonSchema): JsonSchema {
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t) => t !== 'null');
    return { ...s, type: types.length === 1 ? types[0] : types };
  }
  return s;
}

/** The alternatives a value of the schema can take: the branches of anyOf/oneOf/allOf, without null. */
function branches(schema: unknown): JsonSchema[] {
  if (!isObject(schema)) return [];
  const s = unwrap(schema);
  const alternatives = s.anyOf ?? s.oneOf ?? s.allOf;
  if (Array.isArray(alternatives)) return alternatives.filter((b) => !isNull(b)).flatMap(branches);
  return [s];
}

/** A schema that says nothing about what is inside it (`{}`, an object without declared properties): any path fits. */
function isOpen(s: JsonSchema): boolean {
  if (s.properties || s.items || s.additionalProperties === false || s.enum || s.const !== undefined) return false;
  return s.type === undefined || s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object'));
}

/** What a schema says about the value at a dotted path ("primary.updb.allowed", "processes.0.path"). */
export interface SchemaFacts {
  /** the path is in the schema (or under a part of it that declares nothing) */
  found: boolean;
  /** the path is under a part of the schema that declares nothing of it (its facts are unknown) */
  open: boolean;
  /** the body must hold a value there: every step of the path is required (within its list item, for items) */
  required: boolean;
  /** the schemas the value can take (one per union branch holding the path), nullability removed */
  leaves: JsonSchema[];
}

export function schemaFacts(schema: JsonSchema | null | undefined, path: string): SchemaFacts {
  if (!schema) return { found: false, open: false, required: false, leaves: [] };
  let current: Array<{ schema: unknown; required: boolean }> = [{ schema, required: true }];
  let open = false;
  for (const key of path.split('.')) {
    const next: typeof current = [];
    for (const c of current) {
      for (const b of branches(c.schema)) {
        const props = isObject(b.properties) ? b.properties : undefined;
        if (props && key in props) {
          const required = Array.isArray(b.required) && b.required.includes(key);
          next.push({ schema: props[key], required: c.required && required });
        } else if (/^\d+$/.test(key) && isObject(b.items)) {
          // an item on screen exists: what it requires counts, not whether the list is
          next.push({ schema: b.items, required: true });
        } else if (!props && isObject(b.additionalProperties)) {
          next.push({ schema: b.additionalProperties, required: false });
        } else if (isOpen(b)) {
          open = true;
        }
      }
    }
    if (!next.length) return { found: open, open, required: false, leaves: [] };
    current = next;
  }
  return {
    found: true,
    open: false,
    required: current.every((c) => c.required),
    leaves: current.flatMap((c) => branches(c.schema)),
  };
}

/** Whether a required key also needs a value the user gives: an empty list or object, or false, already fits it. */
function demandsInput(leaves: JsonSchema[]): boolean {
  return leaves.every((s) => {
    if (s.type === 'boolean' || s.type === 'object') return false;
    if (s.type === 'array') return typeof s.minItems === 'number' && s.minItems > 0;
    return true;
  });
}

/** The values an enum allows (of every branch), or undefined when the schema does not restrict them. */
function enumValues(leaves: JsonSchema[]): string[] | undefined {
  if (!leaves.length || !leaves.every((s) => Array.isArray(s.enum))) return undefined;
  return [...new Set(leaves.flatMap((s) => (s.enum as unknown[]).filter((v): v is string => typeof v === 'string')))];
}

/** A numeric bound worth showing (zod writes the safe-integer limits on every int). */
function bound(leaves: JsonSchema[], key: 'minimum' | 'maximum'): number | undefined {
  const v = leaves.map((s) => s[key]).find((x): x is number => typeof x === 'number');
  return v !== undefined && Math.abs(v) < Number.MAX_SAFE_INTEGER ? v : undefined;
}

/**
 * The form's fields with what the core knows filled in where the page leaves it out: required (by the create schema
 * on create, the update schema on edit), create-only (in the create schema, not in the update schema), the options
 * of a select or radio (the enum's values; the page may label them), a number's min and max. What a page states
 * itself wins: pages may deliberately differ (e.g. a field the API allows on update that the console keeps fixed).
 */
export function deriveFields(fields: FieldSpec[], description: ResourceDescription | undefined, mode: 'create' | 'edit'): FieldSpec[] {
  if (!description) return fields;
  const body = (mode === 'create' ? description.create : description.update) ?? null;
  const derive = (f: FieldSpec, path: string): FieldSpec => {
    const facts = schemaFacts(body, path);
    const out = { ...f } as FieldSpec;
    out.required ??= facts.required && demandsInput(facts.leaves);
    if (out.createOnly === undefined && description.create && description.update) {
      out.createOnly = schemaFacts(description.create, path).found && !schemaFacts(description.update, path).found;
    }
    if (out.kind === 'select' || out.kind === 'radio') {
      const values = enumValues(facts.leaves);
      if (values) {
        // the enum decides which values exist; the page's order and labels where it gives them
        const given = (out.options ?? []).filter((o) => values.includes(o.value));
        out.options = [...given, ...values.filter((v) => !given.some((o) => o.value === v)).map((v) => ({ value: v, label: v }))];
      }
    }
    if (out.kind === 'number') {
      out.min ??= bound(facts.leaves, 'minimum');
      out.max ??= bound(facts.leaves, 'maximum');
    }
    if (out.kind === 'repeat') out.fields = out.fields.map((sub) => derive(sub, `${path}.0.${sub.name}`));
    return out;
  };
  return fields.map((f) => derive(f, f.name));
}
