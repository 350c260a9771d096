import { z } from 'zod';

/** Schema pieces shared by resource declarations. */
export const tagsSchema = z.record(z.string(), z.union([z.string(), z.boolean(), z.null()]));
export const nullableTags = tagsSchema.nullable();
export const costSchema = z.number().int().min(0, 'must be between 0 and 65535').max(65535, 'must be between 0 and 65535');
export const precedenceSchema = z.enum(['default', 'required', 'failed']);
export const attributesSchema = z.array(z.string()).nullable();
export const nameSchema = z.string().trim().min(1, 'must not be empty').max(1000);
export const usernameSchema = z.string().min(4, 'must be between 4 and 100 characters').max(100, 'must be between 4 and 100 characters');
export const passwordSchema = z.string().min(5, 'must be between 5 and 100 characters').max(100, 'must be between 5 and 100 characters');

/** For PATCH bodies: every field optional and nullable. */
export function patchOf<T extends z.ZodRawShape>(shape: T) {
  const out: Record<string, z.ZodType> = {};
  for (const [k, v] of Object.entries(shape)) out[k] = (v as z.ZodType).nullable().optional();
  return z.object(out as { [K in keyof T]: z.ZodOptional<z.ZodNullable<T[K]>> });
}
