import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { validationError } from './errors';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Compiles config-type JSON schemas once per (id, version) and validates config data against them. */
export class SchemaValidator {
  private readonly ajv = addFormats(new Ajv({ allErrors: false, strict: false }));
  private readonly cache = new Map<string, ValidateFunction>();

  /** Throws a field error on `field` when the schema itself is not a usable JSON schema. */
  compile(schema: object, field = 'schema'): ValidateFunction {
    try {
      return this.ajv.compile(schema);
    } catch (e) {
      throw validationError(field, `invalid JSON schema: ${(e as Error).message}`);
    }
  }

  validate(key: string, schema: object, data: unknown, field = 'data'): void {
    let fn = this.cache.get(key);
    if (!fn) {
      fn = this.compile(schema, 'configType.schema');
      this.cache.set(key, fn);
    }
    if (fn(data)) return;
    const err = fn.errors![0]!;
    const path = err.instancePath.split('/').filter(Boolean).join('.');
    const missing = err.keyword === 'required' ? (err.params as { missingProperty: string }).missingProperty : undefined;
    const at = [field, path, missing].filter(Boolean).join('.');
    throw validationError(at, missing ? 'is required' : (err.message ?? 'does not match the config type schema'), valueAt(data, path));
  }
}

function valueAt(data: unknown, path: string): unknown {
  let v = data;
  for (const p of path.split('.').filter(Boolean)) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}
