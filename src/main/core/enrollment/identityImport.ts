import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { CsvError, csvField, parseCsv } from '../csv';
import { IDENTITY_TYPES, identities } from '../policy/index';
import { applyCreate } from '../entities/resource';
import { ApiError, validationError } from '../errors';
import { safeEntryName, zipStore, type ZipEntry } from '../zip';

/**
 * Identities from a CSV file (columns name, type, attributes, enrollment — a header row names them in any order),
 * with a preview: every row is created in a savepoint of one transaction, so the preview reports exactly the errors
 * the import will meet (duplicates inside the file included) and then rolls everything back; the import keeps the
 * rows that worked and reports the others. Their enrollment JWTs download as one ZIP archive.
 *
 * enrollment: `ott` (default when empty), `updb` or `updb:<username>` (default username: the name),
 * `ottca:<CA name or id>`, or `none`. attributes: separated by spaces, `;` or `|` (a leading `#` is dropped).
 */

export const MAX_IMPORT_ROWS = 1000;
export const MAX_ARCHIVE_IDENTITIES = 500;

const COLUMNS: Record<string, 'name' | 'type' | 'attributes' | 'enrollment'> = {
  name: 'name',
  type: 'type',
  'identity type': 'type',
  identitytype: 'type',
  attributes: 'attributes',
  'role attributes': 'attributes',
  roleattributes: 'attributes',
  roles: 'attributes',
  enrollment: 'enrollment',
  'enrollment method': 'enrollment',
  enrollmentmethod: 'enrollment',
  method: 'enrollment',
};

export interface ImportRow {
  line: number;
  name: string;
  type: string;
  attributes: string[];
  enrollment: string;
  ok: boolean;
  /** the created identity (import, not preview) */
  id?: string;
  error?: { field: string; reason: string; code: string };
}

export interface ImportResult {
  dryRun: boolean;
  rows: ImportRow[];
  created: number;
  failed: number;
  /** columns of the header that were not understood (ignored) */
  ignoredColumns: string[];
}

interface ParsedRow {
  row: ImportRow;
  body?: Record<string, unknown>;
}

/** Maps an identity create error onto the CSV's columns. */
function columnOf(field: string | undefined): string {
  if (!field) return 'row';
  if (field.startsWith('enrollment')) return 'enrollment';
  if (field.startsWith('roleAttributes')) return 'attributes';
  if (field === 'type' || field === 'name') return field;
  return field;
}

async function rowsOf(ctx: Ctx, csv: string): Promise<{ rows: ParsedRow[]; ignored: string[] }> {
  let records;
  try {
    records = parseCsv(csv);
  } catch (e) {
    if (e instanceof CsvError) throw validationError('csv', e.message, null);
    throw e;
  }
  if (!records.length) throw validationError('csv', 'the file has no rows', null);
  let order: Array<'name' | 'type' | 'attributes' | 'enrollment' | undefined> = ['name', 'type', 'attributes', 'enrollment'];
  const ignored: string[] = [];
  const first = records[0]!.fields.map((f) => f.trim().toLowerCase());
  if (first.includes('name')) {
    order = first.map((f) => COLUMNS[f]);
    records[0]!.fields.forEach((f, i) => order[i] === undefined && f.trim() && ignored.push(f.trim()));
    records.shift();
  }
  if (records.length > MAX_IMPORT_ROWS) throw validationError('csv', `at most ${MAX_IMPORT_ROWS} rows at a time`, records.length);
  const cas = await ctx.core.store.allSql<{ id: string; name: string }>('SELECT id, name FROM cas');
  return {
    ignored,
    rows: records.map(({ line, fields }) => {
      const get = (col: string) => fields[order.indexOf(col as never)]?.trim() ?? '';
      const name = get('name');
      const typeText = get('type');
      const attributes = [
        ...new Set(
          get('attributes')
            .split(/[\s;|,]+/)
            .map((a) => a.replace(/^#/, ''))
            .filter(Boolean),
        ),
      ];
      const enrollment = get('enrollment') || 'ott';
      const row: ImportRow = { line, name, type: typeText || 'User', attributes, enrollment, ok: false };
      const fail = (field: string, reason: string): ParsedRow => ({ row: { ...row, error: { field, reason, code: 'COULD_NOT_VALIDATE' } } });
      if (!name) return fail('name', 'must not be empty');
      const type = IDENTITY_TYPES.find((t) => t.toLowerCase() === (typeText || 'User').toLowerCase());
      if (!type) return fail('type', `must be one of ${IDENTITY_TYPES.join(', ')}`);
      row.type = type;
      const [method, ...rest] = enrollment.split(':');
      const arg = rest.join(':').trim();
      let enroll: Record<string, unknown> | undefined;
      switch (method!.trim().toLowerCase()) {
        case 'none':
          break;
        case 'ott':
          enroll = { ott: true };
          break;
        case 'updb':
          enroll = { updb: arg || name };
          break;
        case 'ottca': {
          const ca = cas.find((c) => c.id === arg || c.name === arg);
          if (!ca) return fail('enrollment', arg ? `no CA named ${arg}` : 'ottca needs a CA: ottca:<CA name>');
          enroll = { ottca: ca.id };
          break;
        }
        default:
          return fail('enrollment', 'must be ott, updb[:username], ottca:<CA name> or none');
      }
      return { row, body: { name, type, isAdmin: false, roleAttributes: attributes, ...(enroll ? { enrollment: enroll } : {}) } };
    }),
  };
}

class Preview extends Error {}

export async function importIdentities(ctx: Ctx, csv: string, opts: { dryRun: boolean }): Promise<ImportResult> {
  requirePermission(ctx.caller, 'identity', 'create');
  const { rows, ignored } = await rowsOf(ctx, csv);
  const store = ctx.core.store;
  const out: ImportRow[] = [];
  const run = async () => {
    for (const { row, body } of rows) {
      if (!body) {
        out.push(row);
        continue;
      }
      try {
        // applyCreate is its own savepoint: a failing row leaves the others alone
        const id = await applyCreate(ctx, identities, body);
        out.push({ ...row, ok: true, ...(opts.dryRun ? {} : { id }) });
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        out.push({ ...row, error: { field: columnOf(e.fieldCause?.field), reason: e.fieldCause?.reason ?? e.message, code: e.code } });
      }
    }
    if (opts.dryRun) throw new Preview();
  };
  try {
    await store.tx(run);
  } catch (e) {
    if (!(e instanceof Preview)) throw e;
  }
  const created = out.filter((r) => r.ok).length;
  return { dryRun: opts.dryRun, rows: out, created, failed: out.length - created, ignoredColumns: ignored };
}

/**
 * The outstanding enrollment JWTs of some identities as one ZIP archive (`<name>.jwt`, or `<name>.<method>.jwt` when
 * an identity has several), with `enrollments.csv` listing identity, method, expiry and file.
 */
export async function enrollmentArchive(ctx: Ctx, ids: string[]): Promise<{ filename: string; base64: string; files: number; without: string[] }> {
  requirePermission(ctx.caller, 'identity', 'read');
  requirePermission(ctx.caller, 'enrollment', 'read');
  const list = [...new Set(ids)];
  if (!list.length) throw validationError('ids', 'must name at least one identity', ids);
  if (list.length > MAX_ARCHIVE_IDENTITIES) throw validationError('ids', `at most ${MAX_ARCHIVE_IDENTITIES} identities at a time`, list.length);
  const rows = await ctx.core.store.allSql<{ id: string; name: string; method: string | null; jwt: string | null; expires_at: string | null }>(
    `SELECT i.id, i.name, e.method, e.jwt, e.expires_at FROM identities i LEFT JOIN enrollments e ON e.identity_id = i.id
     WHERE i.id IN ${ctx.core.store.sql.jsonValues()} ORDER BY i.name, e.method`,
    JSON.stringify(list),
  );
  const perIdentity = new Map<string, number>();
  for (const r of rows) if (r.jwt) perIdentity.set(r.id, (perIdentity.get(r.id) ?? 0) + 1);
  const taken = new Set<string>(['enrollments.csv']);
  const entries: ZipEntry[] = [];
  const manifest = ['identity,method,expiresAt,file'];
  for (const r of rows) {
    if (!r.jwt) continue;
    const file = safeEntryName(perIdentity.get(r.id)! > 1 ? `${r.name}.${r.method}.jwt` : `${r.name}.jwt`, taken);
    entries.push({ name: file, data: r.jwt });
    manifest.push([r.name, r.method ?? '', r.expires_at ?? '', file].map(csvField).join(','));
  }
  const without = [...new Set(rows.filter((r) => !perIdentity.has(r.id)).map((r) => r.name))];
  if (!entries.length) throw validationError('ids', 'none of these identities has an outstanding enrollment', list.length);
  entries.push({ name: 'enrollments.csv', data: `${manifest.join('\r\n')}\r\n` });
  const now = ctx.core.clock.now();
  const zip = zipStore(entries, now);
  return { filename: `weft-enrollments-${now.toISOString().slice(0, 10)}.zip`, base64: zip.toString('base64'), files: entries.length - 1, without };
}
