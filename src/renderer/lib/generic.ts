import type { FieldSpec, Values } from '../components/ResourceForm';
import { schemaFacts, type JsonSchema, type ResourceDescription } from './describe';
import type { Entity } from './types';

/**
 * Forms and tables generated from what the core says about a type (`resources.describe`), for the types the console
 * has no page spec of: every property of the create or update body becomes a field of the kind its JSON Schema
 * suggests. What deriveFields adds (required, create-only, enum options, number bounds) comes on top, as for the
 * pages' own fields.
 */

const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

const ACRONYMS = new Set(['id', 'ca', 'api', 'jwt', 'jwks', 'url', 'uri', 'ip', 'mfa', 'ott', 'pem', 'oidc', 'updb']);

/** "identity-types" → "Identity types", "maxIdleTimeMillis" → "Max idle time millis", "caId" → "CA ID", "cas" → "CAs". */
export function humanize(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[-_\s]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase())
    .map((w) => (ACRONYMS.has(w) ? w.toUpperCase() : /s$/.test(w) && ACRONYMS.has(w.slice(0, -1)) ? `${w.slice(0, -1).toUpperCase()}s` : w));
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** "identity types" → "identity type", "policies" → "policy" (English plurals of resource names). */
export function singular(plural: string): string {
  if (/ies$/.test(plural)) return plural.replace(/ies$/, 'y');
  if (/(ss|sh|ch|x)es$/.test(plural)) return plural.replace(/es$/, '');
  if (/[^s]s$/.test(plural)) return plural.slice(0, -1);
  return plural;
}

/** The JSON types a schema's value can take (nullability and union branches flattened), without null. */
function typesOf(leaves: JsonSchema[]): Set<string> {
  const out = new Set<string>();
  for (const s of leaves) {
    const t = s.type;
    for (const one of Array.isArray(t) ? t : [t]) if (typeof one === 'string' && one !== 'null') out.add(one);
    if (t === undefined && Array.isArray(s.enum)) for (const v of s.enum as unknown[]) if (v !== null) out.add(typeof v);
  }
  return out;
}

const only = (types: Set<string>, ...allowed: string[]) => types.size > 0 && [...types].every((t) => allowed.includes(t));

/** The kind of field for a body property, from its schema (the leaves schemaFacts gives for its path). */
function fieldFor(name: string, leaves: JsonSchema[]): FieldSpec {
  const base = { name, label: humanize(name) };
  const described = leaves.find((s) => typeof s.description === 'string')?.description as string | undefined;
  const titled = leaves.find((s) => typeof s.title === 'string')?.title as string | undefined;
  const common = { ...base, label: titled ?? base.label, ...(described ? { help: described } : {}) };
  const types = typesOf(leaves);
  if (leaves.length && leaves.every((s) => Array.isArray(s.enum)) && only(types, 'string')) return { ...common, kind: 'select' };
  if (only(types, 'boolean')) return { ...common, kind: 'checkbox' };
  if (only(types, 'integer', 'number')) return { ...common, kind: 'number' };
  if (only(types, 'string')) return { ...common, kind: 'text' };
  if (only(types, 'array')) {
    const items = leaves.flatMap((s) => (isObject(s.items) ? [s.items] : []));
    if (items.length === leaves.length && only(typesOf(items), 'string')) return { ...common, kind: 'list' };
  }
  if (only(types, 'object') && leaves.every((s) => !isObject(s.properties) || !Object.keys(s.properties).length)) {
    const values = leaves.map((s) => s.additionalProperties);
    // tags: string (or boolean) values; a declaration may leave the values open under the name "tags"
    const plain = values.every((v) => isObject(v) && only(typesOf([v]), 'string', 'boolean', 'number'));
    const openTags = name === 'tags' && values.every((v) => v === undefined || v === true || (isObject(v) && !Object.keys(v).length));
    if (plain || openTags) return { ...common, kind: 'tags' };
  }
  return { ...common, kind: 'json' };
}

/** The fields of a body schema, in its order (tags last), one per top-level property. */
export function fieldsFromSchema(schema: JsonSchema | null | undefined): FieldSpec[] {
  if (!schema || !isObject(schema.properties)) return [];
  const names = Object.keys(schema.properties);
  const ordered = [...names.filter((n) => n !== 'tags'), ...names.filter((n) => n === 'tags')];
  return ordered.map((name) => fieldFor(name, schemaFacts(schema, name).leaves));
}

/**
 * A new entity's starting body: the schema's defaults, and values of required properties the user need not give
 * (a required boolean starts false, a required list empty), so that leaving them alone is a valid answer.
 */
export function initialFromSchema(schema: JsonSchema | null | undefined): Values {
  if (!schema || !isObject(schema.properties)) return {};
  const out: Values = {};
  for (const name of Object.keys(schema.properties)) {
    const facts = schemaFacts(schema, name);
    const withDefault = facts.leaves.find((s) => s.default !== undefined);
    if (withDefault) {
      out[name] = withDefault.default;
      continue;
    }
    if (!facts.required) continue;
    const types = typesOf(facts.leaves);
    if (only(types, 'boolean')) out[name] = false;
    else if (only(types, 'array')) out[name] = [];
  }
  return out;
}

/** The edit form's values: the entity's value of each field (absent ones left out). */
export function editValuesFrom(fields: FieldSpec[], entity: Entity): Values {
  return Object.fromEntries(fields.filter((f) => entity[f.name] !== undefined && entity[f.name] !== null).map((f) => [f.name, entity[f.name]]));
}

/**
 * The patch body of a generated edit form: a field that had a value and was emptied is sent as null (clear it), so
 * the core decides whether it may be cleared and says so at the field; fields never set stay out.
 */
export function editBodyFor(initial: Values): (values: Values) => Values {
  return (values) => {
    const out: Values = { ...values };
    for (const name of Object.keys(initial)) if (out[name] === undefined) out[name] = null;
    return out;
  };
}

/** Whether the type's entities carry a name (the first column of its list, and what its detail view is titled). */
export function hasName(d: ResourceDescription): boolean {
  return d.filterable.includes('name') || [d.create, d.update].some((s) => isObject(s?.properties) && 'name' in s.properties);
}
