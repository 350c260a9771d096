import type { FieldType, ScalarField } from './compile';

/** Declares a single-valued filterable field over the main table (alias t). */
export const scalar = (type: FieldType, sql: string, sortable = true): ScalarField => ({ kind: 'scalar', type, sql, sortable });
