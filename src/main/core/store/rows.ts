import type { Row, Store } from './db';

/**
 * Typed rows at the store boundary. A row is read as the store hands it back (SQLite's values; the PostgreSQL store
 * gives the same: booleans 1/0, counts as numbers, JSON as text) and decoded once, column by column, through a codec:
 * the codecs of the declarations' fields (entities/define.ts) and of the ad-hoc reads, which name theirs in a shape:
 *
 *   const SESSION = { id: 'string', is_mfa_complete: 'bool', config_types: json<string[]>(), expires_at: 'datetime?' } as const;
 *   const row = await getRow(store, SESSION, 'SELECT * FROM api_sessions WHERE id = ?', id);
 *   // row: { id: string; is_mfa_complete: boolean; config_types: string[]; expires_at: string | null } | undefined
 *
 * A decoded row holds the shape's columns only (under their column names), never the raw values of the others.
 */
export type Codec = 'string' | 'int' | 'bool' | 'json' | 'datetime';

/** JSON of a known shape (the codec 'json' at run time): `json<string[]>()`, `json<Details>('?')` when it may be NULL. */
export type Json<T> = 'json' & { readonly __json: T };
export type NullableJson<T> = 'json?' & { readonly __json: T };
export function json<T>(): Json<T>;
export function json<T>(nullable: '?'): NullableJson<T>;
export function json(nullable?: '?'): string {
  return nullable ? 'json?' : 'json';
}

/** A column of a shape: its codec, with '?' when the column may be NULL (or absent, e.g. a LEFT JOIN's). */
export type ColumnCodec = Codec | `${Codec}?` | Json<unknown> | NullableJson<unknown>;
export type RowShape = Readonly<Record<string, ColumnCodec>>;

/** A shape, its column codecs kept literal: `rowShape({ id: 'string', n: 'int', tags: json<Tags>() })`. */
export const rowShape = <const S extends RowShape>(shape: S): S => shape;

/** A shape's columns as a SELECT list (`prefix`: a table alias, e.g. 't.'). */
export const selectList = (shape: RowShape, prefix = ''): string =>
  Object.keys(shape)
    .map((c) => prefix + c)
    .join(', ');

type Base<C> = C extends 'string' | 'datetime' ? string : C extends 'int' ? number : C extends 'bool' ? boolean : unknown;
/** The decoded value of a column of codec C. */
export type ValueOf<C> = C extends { readonly __json: infer T }
  ? C extends `${string}?`
    ? T | null
    : T
  : C extends `${infer B}?`
    ? Base<B> | null
    : Base<C>;
/** A row of shape S as the decoder gives it. */
export type Decoded<S extends RowShape> = { -readonly [K in keyof S]: ValueOf<S[K]> };

/** The value of codec C as the stores hand it back (what a hook's undecoded row holds). */
export type StoredOf<C> = (C extends `${string}?` ? null : never) | (C extends 'int' | 'bool' | 'int?' | 'bool?' ? number : string);
export type Stored<S extends RowShape> = { -readonly [K in keyof S]: StoredOf<S[K]> };

/** A value as it is written: JSON as text, booleans 1/0, dates as ISO strings. */
export function encode(codec: Codec, v: unknown): unknown {
  if (v === undefined || v === null) return v;
  switch (codec) {
    case 'json':
      return JSON.stringify(v);
    case 'bool':
      return v ? 1 : 0;
    case 'datetime':
      return v instanceof Date ? v.toISOString() : v;
    default:
      return v;
  }
}

/** A stored value read back through its codec (NULL stays null, an absent column undefined). */
export function decode(codec: Codec, v: unknown): unknown {
  if (v === null || v === undefined) return v;
  switch (codec) {
    case 'json':
      return typeof v === 'string' ? JSON.parse(v) : v;
    case 'bool':
      return v === 1 || v === true || v === 1n;
    case 'int':
      return typeof v === 'number' ? v : Number(v);
    default:
      return v;
  }
}

/** A shape's columns, its codecs split from their nullability, made once per shape. */
const compiled = new WeakMap<RowShape, Array<[column: string, codec: Codec, nullable: boolean]>>();
function columnsOf(shape: RowShape) {
  let list = compiled.get(shape);
  if (!list) {
    list = Object.entries(shape).map(([column, c]): [string, Codec, boolean] =>
      c.endsWith('?') ? [column, c.slice(0, -1) as Codec, true] : [column, c as Codec, false],
    );
    compiled.set(shape, list);
  }
  return list;
}

/** Marks a decoded row (not enumerated): decoding it again, or presenting it (entities/resource.ts), takes its values as they are. */
const DECODED = Symbol('decoded');
export const isDecoded = (row: Row): boolean => DECODED in row;

/** Decodes one stored row through a shape: a nullable column that is absent reads as null. A decoded row is only reshaped. */
export function decodeRow<S extends RowShape>(shape: S, raw: Row): Decoded<S> {
  const out: Record<string | symbol, unknown> = {};
  const decoded = isDecoded(raw);
  for (const [column, codec, nullable] of columnsOf(shape)) {
    const v = decoded ? raw[column] : decode(codec, raw[column]);
    out[column] = v === undefined && nullable ? null : v;
  }
  Object.defineProperty(out, DECODED, { value: true });
  return out as Decoded<S>;
}

export const decodeRows = <S extends RowShape>(shape: S, raws: readonly Row[]): Array<Decoded<S>> => raws.map((r) => decodeRow(shape, r));

/** `store.getSql`, decoded through `shape`. */
export async function getRow<S extends RowShape>(store: Store, shape: S, sql: string, ...params: unknown[]): Promise<Decoded<S> | undefined> {
  const raw = await store.getSql(sql, ...params);
  return raw && decodeRow(shape, raw);
}

/** `store.allSql`, decoded through `shape`. */
export async function allRows<S extends RowShape>(store: Store, shape: S, sql: string, ...params: unknown[]): Promise<Array<Decoded<S>>> {
  return decodeRows(shape, await store.allSql(sql, ...params));
}
