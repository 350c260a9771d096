import { z } from 'zod';
import type { Ctx } from '../context';
import { validationError } from '../errors';
import { AccessChanges } from './changes';
import { classOf } from './classes';
import { decodeRow, json, rowShape } from '../store/rows';
import { parseInput } from '../validation';
import { nameSchema } from '../entities/common';
import { defineResource, type FieldDef } from '../entities/define';
import { policiesNaming } from './access';
import { POSTURE_CHECK, type PostureCheck, type PostureCheckDetails } from './postureEvaluation';

export const POSTURE_CHECK_TYPE_IDS = ['OS', 'PROCESS', 'DOMAIN', 'MAC', 'MFA', 'PROCESS_MULTI'] as const;
export type PostureCheckTypeId = (typeof POSTURE_CHECK_TYPE_IDS)[number];
export const OS_TYPES = ['Windows', 'WindowsServer', 'Android', 'iOS', 'Linux', 'macOS'] as const;

const osType = z.enum(OS_TYPES);
const strings = z.array(z.string());
const nonEmpty = (what: string) => z.array(z.string()).min(1, `must contain at least one ${what}`);
const processMulti = z.object({ osType, path: z.string().min(1), hashes: strings.optional(), signerFingerprints: strings.optional() });

/** The type-specific fields of each posture check type (create and update; PATCH takes any subset). */
export const POSTURE_CHECK_DETAILS: Record<PostureCheckTypeId, z.ZodRawShape> = {
  DOMAIN: { domains: nonEmpty('domain') },
  MAC: { macAddresses: nonEmpty('MAC address') },
  OS: { operatingSystems: z.array(z.object({ type: osType, versions: strings.default([]) })).min(1, 'must contain at least one operating system') },
  PROCESS: {
    process: z.object({ osType, path: z.string().min(1), hashes: strings.optional(), signerFingerprint: z.string().optional() }),
  },
  PROCESS_MULTI: {
    semantic: z.enum(['AllOf', 'AnyOf']),
    processes: z.array(processMulti).min(1, 'must contain at least one process'),
  },
  MFA: {
    timeoutSeconds: z.number().int().min(-1).default(-1),
    promptOnWake: z.boolean().default(false),
    promptOnUnlock: z.boolean().default(false),
    ignoreLegacyEndpoints: z.boolean().default(false),
  },
};
const DETAIL_KEYS = [...new Set(Object.values(POSTURE_CHECK_DETAILS).flatMap((s) => Object.keys(s)))];
/** The type-specific fields as body-only fields: any of them may come; `details` checks them for the check's type. */
const DETAIL_FIELDS: Record<string, FieldDef> = Object.fromEntries(
  DETAIL_KEYS.map((k) => [k, { codec: 'json', column: false, schema: z.unknown() }]),
);
const typeId = z.enum(POSTURE_CHECK_TYPE_IDS);

function checkAttributes(attrs: unknown): void {
  (Array.isArray(attrs) ? attrs : []).forEach((a: string) => {
    if (a.startsWith('#') || a.startsWith('@')) throw validationError('roleAttributes', `role attributes may not be prefixed with ${a[0]}`, a);
  });
}

/** The type-specific fields, validated for the check's type: complete for create/update, merged for PATCH. */
function details(
  type: PostureCheckTypeId,
  input: Record<string, unknown>,
  existing: PostureCheck | undefined,
  patch: boolean,
): Record<string, unknown> {
  const shape = POSTURE_CHECK_DETAILS[type];
  const given = Object.fromEntries(
    Object.keys(shape)
      .filter((k) => input[k] !== undefined && input[k] !== null)
      .map((k) => [k, input[k]]),
  );
  if (!patch) return parseInput(z.object(shape), given) as Record<string, unknown>;
  const partial = parseInput(z.object(shape).partial(), given) as Record<string, unknown>;
  for (const k of Object.keys(partial)) if (given[k] === undefined) delete partial[k];
  return { ...existing!.details, ...partial };
}

/** What a posture check shows beyond its declared fields: its type-specific fields. */
const POSTURE_DETAILS = rowShape({ details: json<PostureCheckDetails>() });

export const postureChecks = defineResource({
  entity: 'posture-checks',
  table: 'posture_checks',
  permission: 'posture-check',
  roleKind: 'posture-check',
  fields: {
    name: { codec: 'string', schema: nameSchema, required: true, filter: true },
    // given at create; later writes may repeat it but not change it (beforeWrite)
    typeId: { codec: 'string', schema: typeId, required: 'create', filter: true },
    version: { codec: 'int', filter: true },
    ...DETAIL_FIELDS,
  },
  defaultSort: 't.name ASC',
  associations: { 'service-policies': policiesNaming('posture-check', 'service-policies') },
  beforeWrite(op, input, stored) {
    checkAttributes(input.roleAttributes);
    const existing = stored && decodeRow(POSTURE_CHECK, stored);
    const type = (existing?.type_id ?? input.typeId) as PostureCheckTypeId;
    if (existing && input.typeId != null && input.typeId !== existing.type_id) {
      throw validationError('typeId', 'the type of a posture check can not be changed', input.typeId);
    }
    const extra: Record<string, unknown> = { details: JSON.stringify(details(type, input, existing, op === 'patch')) };
    if (op === 'create') Object.assign(extra, { type_id: type, version: 1 });
    else extra.version = existing!.version + 1;
    return extra;
  },
  async afterWrite(op, id, _input, _existing, ctx) {
    await postureViewsChanged(ctx, id, op === 'create');
  },
  async beforeDelete(row, ctx) {
    await postureViewsChanged(ctx, row.id, false, true);
  },
  decorate(items, rows) {
    items.forEach((item, i) => Object.assign(item, decodeRow(POSTURE_DETAILS, rows[i]!).details));
  },
});

/**
 * Posture checks show in the posture queries of the services their policies grant; the first check created
 * (or the last deleted) changes every service's posture queries.
 */
async function postureViewsChanged(ctx: Ctx, id: string, created: boolean, deleting = false): Promise<void> {
  const store = ctx.core.store;
  const changes = new AccessChanges();
  const count = (await store.getSql<{ n: number }>('SELECT count(*) AS n FROM posture_checks'))!.n;
  if ((created && count === 1) || (deleting && count === 1)) await changes.addEveryone(store);
  else await changes.addPostureClassAudience(store, [await classOf(store, 'posture-check', id)]);
  await changes.apply(ctx.core);
}

/** Posture check types (read-only, created at bootstrap). */
export const postureCheckTypes = defineResource({
  entity: 'posture-check-types',
  table: 'posture_check_types',
  permission: 'posture-check',
  writable: false,
  fields: {
    name: { codec: 'string', filter: true },
    operatingSystems: { codec: 'json' },
    version: { codec: 'string' },
  },
  defaultSort: 't.id ASC',
});
