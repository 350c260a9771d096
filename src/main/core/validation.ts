import type { z } from 'zod';
import { validationError } from './errors';

/** Parses input with a zod schema; the first problem becomes OpenZiti's COULD_NOT_VALIDATE with cause.field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.map(String);
  const field = path.length ? path.join('.') : '(root)';
  const value = valueAt(input, path);
  let reason = issue.message;
  if (issue.code === 'invalid_type' && value === undefined) reason = 'is required';
  throw validationError(field, reason, value);
}

function valueAt(input: unknown, path: string[]): unknown {
  let v: unknown = input;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}
