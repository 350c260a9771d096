/**
 * What the PostgreSQL store does to the SQL the code writes. No rewriting of meaning: statements are written in the
 * SQL both stores accept, with the store's helpers (`store.sql`, sqlDialect.ts) for the constructs that differ.
 *
 * - `toPostgres(sql)`: one runtime statement: positional `?` parameters become `$1..$n`; what only SQLite has
 *   (PRAGMA, rowid, FTS5's MATCH, sqlite_* tables, changes()) is refused by name.
 * - `ddlToPostgres(script, schema)`: a migration script (SQLite's DDL: tables, indexes, triggers, plain statements)
 *   for one multi-statement query, preceded by POSTGRES_HELPERS: column types mapped (INTEGER PRIMARY KEY an
 *   identity, TEXT in the "C" collation), indexes placing NULLs as SQLite sorts them, triggers as plpgsql functions.
 */

import { POSTGRES_HELPERS } from './sqlDialect';

// ---------------------------------------------------------------------------------------------------------------
// tokens, and the tree of parenthesized groups (for the DDL)

interface Tok {
  k: 'ws' | 'comment' | 'str' | 'qid' | 'word' | 'num' | 'param' | 'op' | 'punct';
  v: string;
}
interface Group {
  k: 'group';
  items: Node[];
}
type Node = Tok | Group;

function tokenize(sql: string): Tok[] {
  const out: Tok[] = [];
  const lexeme =
    /\s+|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|'(?:[^']|'')*'|"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*|\d[\d.]*(?:e[+-]?\d+)?|\?\d*|[(),;]|\|\||<=|>=|<>|!=|::|./iy;
  while (lexeme.lastIndex < sql.length) {
    const at = lexeme.lastIndex;
    const v = lexeme.exec(sql)![0];
    const c = v[0]!;
    if ((c === "'" || c === '"') && (v.length < 2 || !v.endsWith(c))) throw new Error(`unterminated ${c} in SQL: ${sql.slice(at, at + 40)}`);
    if (c === '?' && v.length > 1) throw new Error(`numbered parameters are not supported: ${v}`);
    const k: Tok['k'] = /\s/.test(c)
      ? 'ws'
      : v.startsWith('--') || v.startsWith('/*')
        ? 'comment'
        : c === "'"
          ? 'str'
          : c === '"'
            ? 'qid'
            : /[A-Za-z_]/.test(c)
              ? 'word'
              : /\d/.test(c)
                ? 'num'
                : c === '?'
                  ? 'param'
                  : '(),;'.includes(c)
                    ? 'punct'
                    : 'op';
    out.push({ k, v });
  }
  return out;
}

/** Nests the tokens by parentheses. */
function parse(toks: Tok[]): Node[] {
  const stack: Node[][] = [[]];
  for (const t of toks) {
    if (t.k === 'punct' && t.v === '(') stack.push([]);
    else if (t.k === 'punct' && t.v === ')') {
      const items = stack.pop()!;
      if (!stack.length) throw new Error('unbalanced ) in SQL');
      stack[stack.length - 1]!.push({ k: 'group', items });
    } else stack[stack.length - 1]!.push(t);
  }
  if (stack.length !== 1) throw new Error('unbalanced ( in SQL');
  return stack[0]!;
}

/** The SQL of nodes, each `?` numbered. */
function render(nodes: Node[], counter = { n: 0 }): string {
  let s = '';
  for (const node of nodes) {
    if (node.k === 'group') s += `(${render(node.items, counter)})`;
    else s += node.k === 'param' ? `$${++counter.n}` : node.v;
  }
  return s;
}

// not a type guard: its false branch would narrow a node to a group
const isWord = (n: Node | undefined, ...words: string[]): boolean => n?.k === 'word' && (words.length === 0 || words.includes(n.v.toUpperCase()));
const isPunct = (n: Node | undefined, v: string): boolean => n?.k === 'punct' && n.v === v;
const significant = (n: Node): boolean => n.k !== 'ws' && n.k !== 'comment';
const unquote = (n: Node): string => (n.k === 'qid' ? n.v.slice(1, -1).replace(/""/g, '"') : n.k === 'group' ? '' : n.v.toLowerCase());

/** Splits a level at its top-level commas (the commas are dropped). */
function splitCommas(nodes: Node[]): Node[][] {
  const parts: Node[][] = [[]];
  for (const n of nodes) {
    if (isPunct(n, ',')) parts.push([]);
    else parts[parts.length - 1]!.push(n);
  }
  return parts;
}
function trimmed(nodes: Node[]): Node[] {
  let a = 0;
  let b = nodes.length;
  while (a < b && !significant(nodes[a]!)) a++;
  while (b > a && !significant(nodes[b - 1]!)) b--;
  return nodes.slice(a, b);
}

// ---------------------------------------------------------------------------------------------------------------
// runtime statements

/** A statement that uses what only SQLite has (PRAGMA, rowid, FTS5's MATCH, sqlite_master, changes()). */
export class UntranslatableSqlError extends Error {
  constructor(what: string, sql: string) {
    super(`${what} has no PostgreSQL translation: ${sql.replace(/\s+/g, ' ').slice(0, 200)}`);
  }
}

const SQLITE_FUNCTIONS: readonly string[] = ['changes', 'total_changes', 'last_insert_rowid'];

/** One runtime statement → PostgreSQL (`?` → `$n`). */
export function toPostgres(sql: string): string {
  const toks = tokenize(sql);
  const sig = toks.filter(significant);
  if (isWord(sig[0], 'PRAGMA')) throw new UntranslatableSqlError('PRAGMA', sql);
  sig.forEach((t, i) => {
    if (t.k !== 'word' && t.k !== 'qid') return;
    const name = unquote(t);
    if (name === 'rowid' || name === '_rowid_') throw new UntranslatableSqlError('rowid', sql);
    if (t.k === 'word' && name === 'match') throw new UntranslatableSqlError('MATCH (FTS5)', sql);
    if (/^sqlite_/.test(name)) throw new UntranslatableSqlError(name, sql);
    if (SQLITE_FUNCTIONS.includes(name) && isPunct(sig[i + 1], '(')) throw new UntranslatableSqlError(`${name}()`, sql);
  });
  let n = 0;
  return toks.map((t) => (t.k === 'param' ? `$${++n}` : t.v)).join('');
}

// ---------------------------------------------------------------------------------------------------------------
// migration scripts

/** What the migrations declared so far, by table: its NOT NULL columns (primary key included). */
export type DdlSchema = Map<string, Set<string>>;

/** Learns the tables of a migration script (ddlToPostgres does it for every script it translates). */
export function learnSchema(script: string, schema: DdlSchema): void {
  for (const stmt of splitStatements(parse(tokenize(script)))) {
    const s = stmt.filter(significant);
    if (isWord(s[0], 'CREATE') && isWord(s[1], 'TABLE')) {
      const body = s.find((n): n is Group => n.k === 'group');
      const notNull = new Set<string>();
      schema.set(unquote(s[isWord(s[2], 'IF') ? 5 : 2]!), notNull);
      for (const def of splitCommas(body?.items ?? [])) addColumn(notNull, def.filter(significant));
    } else if (isWord(s[0], 'ALTER')) {
      const notNull = schema.get(unquote(s[2]!));
      const add = s.findIndex((n) => isWord(n, 'ADD'));
      if (notNull && add > 0) addColumn(notNull, s.slice(isWord(s[add + 1], 'COLUMN') ? add + 2 : add + 1));
    }
  }
}

function addColumn(notNull: Set<string>, sig: Node[]): void {
  const keyword = (i: number, a: string, b: string) => isWord(sig[i], a) && isWord(sig[i + 1], b);
  if (isWord(sig[0], 'PRIMARY') && sig[2]?.k === 'group') {
    for (const c of splitCommas(sig[2].items)) notNull.add(unquote(trimmed(c)[0]!));
  } else if (sig[0] && !isWord(sig[0], 'UNIQUE', 'CHECK', 'FOREIGN', 'CONSTRAINT')) {
    if (sig.some((_, i) => keyword(i, 'PRIMARY', 'KEY') || keyword(i, 'NOT', 'NULL'))) notNull.add(unquote(sig[0]));
  }
}

/** A migration script in SQLite's dialect → one PostgreSQL script (helpers first). */
export function ddlToPostgres(script: string, schema: DdlSchema): string {
  learnSchema(script, schema);
  const out: string[] = [POSTGRES_HELPERS.trim()];
  for (const stmt of splitStatements(parse(tokenize(script)))) {
    const s = trimmed(stmt.filter((n) => n.k !== 'comment'));
    if (s.length) out.push(ddlStatement(s, schema) + ';');
  }
  return out.join('\n');
}

/** Statements of a script: split at top-level `;`, except inside CREATE TRIGGER ... BEGIN ... END. */
function splitStatements(nodes: Node[]): Node[][] {
  const out: Node[][] = [];
  let cur: Node[] = [];
  let inBody = false;
  let caseDepth = 0; // CASE ... END inside a trigger body does not end it
  for (const n of nodes) {
    if (!inBody && isWord(n, 'BEGIN') && isWord(cur.find(significant), 'CREATE') && cur.some((x) => isWord(x, 'TRIGGER'))) inBody = true;
    else if (inBody && isWord(n, 'CASE')) caseDepth++;
    else if (inBody && isWord(n, 'END')) {
      if (caseDepth > 0) caseDepth--;
      else inBody = false;
    }
    if (isPunct(n, ';') && !inBody) {
      out.push(cur);
      cur = [];
    } else cur.push(n);
  }
  if (trimmed(cur).length) out.push(cur);
  return out;
}

function ddlStatement(s: Node[], schema: DdlSchema): string {
  const sig = s.filter(significant);
  if (isWord(sig[0], 'CREATE')) {
    const what = sig.slice(1, 4).find((n) => isWord(n, 'TABLE', 'INDEX', 'TRIGGER', 'VIRTUAL', 'VIEW'));
    if (isWord(what, 'TABLE')) return createTable(s);
    if (isWord(what, 'INDEX')) return createIndex(s, schema);
    if (isWord(what, 'TRIGGER')) return createTrigger(s);
    if (isWord(what, 'VIRTUAL')) throw new Error(`virtual tables have no PostgreSQL translation: ${render(s).slice(0, 80)}`);
  }
  if (isWord(sig[0], 'ALTER') && sig.some((n) => isWord(n, 'ADD'))) {
    const colAt = s.findIndex((n) => isWord(n, 'COLUMN'));
    const start = colAt >= 0 ? colAt + 1 : s.findIndex((n) => isWord(n, 'ADD')) + 1;
    return `${render(s.slice(0, start))} ${columnDef(trimmed(s.slice(start)))}`;
  }
  return toPostgres(render(s));
}

/** The PostgreSQL type of a SQLite declared type (affinity rules, simplified to the types this schema uses). */
function columnType(t: Node | undefined): string {
  const name = t?.k === 'word' ? t.v.toUpperCase() : '';
  if (name.includes('INT')) return 'bigint';
  if (name === 'REAL' || name.includes('FLOA') || name.includes('DOUB')) return 'double precision';
  if (name === 'BLOB') return 'bytea';
  return 'text';
}

/** CREATE TABLE: column types mapped, WITHOUT ROWID / STRICT dropped. */
function createTable(s: Node[]): string {
  const gi = s.findIndex((n) => n.k === 'group');
  const defs = splitCommas((s[gi] as Group).items).map((def) => {
    const t = trimmed(def);
    return `\n  ${isWord(t[0], 'PRIMARY', 'UNIQUE', 'CHECK', 'FOREIGN', 'CONSTRAINT') ? render(t) : columnDef(t)}`;
  });
  return `${render(s.slice(0, gi))}(${defs.join(',')}\n)`;
}

const CONSTRAINT_WORDS = ['PRIMARY', 'NOT', 'NULL', 'UNIQUE', 'CHECK', 'DEFAULT', 'REFERENCES', 'COLLATE', 'CONSTRAINT'];

/** One column definition: name, mapped type, then the constraints as written. */
function columnDef(t: Node[]): string {
  const sig = t.filter(significant);
  const name = render([sig[0]!]);
  const typeTok = sig[1];
  const hasType = typeTok?.k === 'word' && !CONSTRAINT_WORDS.includes(typeTok.v.toUpperCase());
  const rest = trimmed(t.slice(t.indexOf(hasType ? typeTok : sig[0]!) + 1));
  const restSig = rest.filter(significant);
  const isPk = restSig.some((n, i) => isWord(n, 'PRIMARY') && isWord(restSig[i + 1], 'KEY'));
  const type = columnType(hasType ? typeTok : undefined);
  const autoincrement = restSig.some((n) => isWord(n, 'AUTOINCREMENT'));
  const restSql = render(rest.filter((n) => !isWord(n, 'AUTOINCREMENT'))).trim();
  // INTEGER PRIMARY KEY is SQLite's rowid: assigned when not given (a key that references another table's is not)
  if (type === 'bigint' && isPk && (autoincrement || !restSig.some((n) => isWord(n, 'REFERENCES')))) {
    return `${name} BIGINT GENERATED BY DEFAULT AS IDENTITY${restSql ? ' ' + restSql : ''}`;
  }
  const pgType = type === 'text' ? 'TEXT COLLATE "C"' : type.toUpperCase();
  return `${name} ${pgType}${restSql ? ' ' + restSql : ''}`;
}

/** CREATE INDEX: each nullable column's NULLs placed as SQLite sorts them (so the index gives store.sql.orderBy's order). */
function createIndex(s: Node[], schema: DdlSchema): string {
  const gi = s.findIndex((n) => n.k === 'group');
  const table = unquote(s[s.slice(0, gi).map(significant).lastIndexOf(true)]!);
  const cols = splitCommas((s[gi] as Group).items).map((c) => {
    const t = trimmed(c);
    const sig = t.filter(significant);
    const last = sig[sig.length - 1];
    const desc = isWord(last, 'DESC');
    const e = trimmed(isWord(last, 'ASC', 'DESC') ? t.slice(0, t.lastIndexOf(last!)) : t);
    const isCol = e.length === 1 && (e[0]!.k === 'word' || e[0]!.k === 'qid');
    const sql = render(e);
    const column = isCol || sql.startsWith('(') ? sql : `(${sql})`;
    if (isCol && schema.get(table)?.has(unquote(e[0]!))) return `${column}${desc ? ' DESC' : ''}`;
    return `${column}${desc ? ' DESC NULLS LAST' : ' NULLS FIRST'}`;
  });
  return `${render(s.slice(0, gi))}(${cols.join(', ')})${render(s.slice(gi + 1))}`;
}

/**
 * CREATE TRIGGER name {BEFORE|AFTER} {INSERT|UPDATE [OF cols]|DELETE} ON t [FOR EACH ROW] [WHEN cond] BEGIN ... END
 * → a plpgsql function name_fn() and a row trigger executing it.
 */
function createTrigger(s: Node[]): string {
  const sig = s.filter(significant);
  if (isWord(sig[1], 'TEMP', 'TEMPORARY')) throw new Error('TEMP triggers are not translated');
  const ifNotExists = isWord(sig[2], 'IF');
  const nameTok = sig[ifNotExists ? 5 : 2]!;
  const name = render([nameTok]);
  const beginAt = s.findIndex((n) => isWord(n, 'BEGIN'));
  const endAt = s.length - 1 - [...s].reverse().findIndex((n) => isWord(n, 'END'));
  const head = s.slice(s.indexOf(nameTok) + 1, beginAt);
  const whenAt = head.findIndex((n) => isWord(n, 'WHEN'));
  const event = (whenAt >= 0 ? head.slice(0, whenAt) : head).filter((n) => !isWord(n, 'FOR', 'EACH', 'ROW'));
  const timing = (event.find(significant) as Tok).v.toUpperCase();
  if (timing === 'INSTEAD') throw new Error('INSTEAD OF triggers are not translated');
  const cond = whenAt >= 0 ? render(trimmed(head.slice(whenAt + 1))) : undefined;
  const body = splitStatements(s.slice(beginAt + 1, endAt))
    .map((st) => trimmed(st.filter((n) => n.k !== 'comment')))
    .filter((st) => st.length)
    .map((st) => `    ${triggerStatement(st)};`)
    .join('\n');
  const isDelete = event.some((n) => isWord(n, 'DELETE'));
  const ret = timing === 'BEFORE' ? (isDelete ? 'OLD' : 'NEW') : 'NULL';
  const fn = `${name.replace(/"/g, '')}_fn`;
  const inner = cond ? `  IF ${cond} THEN\n${body}\n  END IF;` : body.replace(/^ {2}/gm, '');
  return (
    `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $weft$\nBEGIN\n${inner}\n  RETURN ${ret};\nEND\n$weft$;\n` +
    `CREATE ${ifNotExists ? 'OR REPLACE ' : ''}TRIGGER ${name} ${render(trimmed(event))} FOR EACH ROW EXECUTE FUNCTION ${fn}()`
  );
}

/** A trigger body statement: `SELECT RAISE(ABORT, 'msg')` → RAISE EXCEPTION, other SELECTs → PERFORM. */
function triggerStatement(st: Node[]): string {
  const sig = st.filter(significant);
  if (isWord(sig[0], 'SELECT') && isWord(sig[1], 'RAISE') && sig[2]?.k === 'group') {
    const args = splitCommas(sig[2].items).map(trimmed);
    if (render(args[0]!).toUpperCase() === 'IGNORE') return 'RETURN NULL';
    return `RAISE EXCEPTION '%', ${render(args[1]!)}`;
  }
  const sql = toPostgres(render(st));
  return isWord(sig[0], 'SELECT') ? sql.replace(/^\s*SELECT\b/i, 'PERFORM') : sql;
}
