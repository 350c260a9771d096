/**
 * Translates the SQLite SQL this codebase writes (store/*, entities, policy, ZitiQL's compiler, the migrations) into
 * PostgreSQL 15. No SQL parser: a tokenizer (strings, quoted identifiers, comments) builds a tree of parenthesized
 * groups, and targeted rewrites run on each level of it. It covers the constructs the code uses, not all of SQLite.
 *
 * - `toPostgres(sql)`: one runtime statement (positional `?` parameters become `$1..$n`).
 * - `ddlToPostgres(script)`: a migration script (tables, indexes, triggers, plain statements) for one multi-statement
 *   query, preceded by `POSTGRES_HELPERS` (the weft_* functions the translations call).
 */

import { quoteIdent } from './db';
import { migrations } from './migrations/index';

// ---------------------------------------------------------------------------------------------------------------
// tokens and the tree of parenthesized groups

type TokKind = 'ws' | 'comment' | 'str' | 'qid' | 'word' | 'num' | 'param' | 'op' | 'punct' | 'raw';
interface Tok {
  k: TokKind;
  v: string;
}
interface Group {
  k: 'group';
  items: Node[];
  /** made by a rewrite around nodes already rewritten at their level: only the groups inside are still to do */
  done?: boolean;
}
type Node = Tok | Group;

const raw = (v: string): Tok => ({ k: 'raw', v });
const word = (v: string): Tok => ({ k: 'word', v });
const group = (items: Node[]): Group => ({ k: 'group', items });

function tokenize(sql: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    const start = i;
    if (/\s/.test(c)) {
      while (i < n && /\s/.test(sql[i]!)) i++;
      out.push({ k: 'ws', v: sql.slice(start, i) });
    } else if (c === '-' && sql[i + 1] === '-') {
      while (i < n && sql[i] !== '\n') i++;
      out.push({ k: 'comment', v: sql.slice(start, i) });
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
      out.push({ k: 'comment', v: sql.slice(start, i) });
    } else if (c === "'" || c === '"' || c === '`') {
      i = quotedEnd(sql, i, c);
      const body = sql.slice(start, i);
      // SQLite's `name` quoting is PostgreSQL's "name"
      out.push(c === "'" ? { k: 'str', v: body } : { k: 'qid', v: c === '`' ? quoteIdent(body.slice(1, -1)) : body });
    } else if (c === '[') {
      const end = sql.indexOf(']', i);
      i = end < 0 ? n : end + 1;
      out.push({ k: 'qid', v: quoteIdent(sql.slice(start + 1, i - 1)) });
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      const m = /^(0x[0-9a-f]+|[0-9]*\.?[0-9]+(e[+-]?[0-9]+)?|[0-9]+\.)/i.exec(sql.slice(i))!;
      i += m[0].length;
      out.push({ k: 'num', v: m[0] });
    } else if (/[A-Za-z_]/.test(c)) {
      while (i < n && /[A-Za-z0-9_$]/.test(sql[i]!)) i++;
      out.push({ k: 'word', v: sql.slice(start, i) });
    } else if (c === '?') {
      i++;
      while (i < n && /[0-9]/.test(sql[i]!)) i++;
      if (i > start + 1) throw new Error(`numbered parameters are not supported: ${sql.slice(start, i)}`);
      out.push({ k: 'param', v: '?' });
    } else if ('(),;'.includes(c)) {
      i++;
      out.push({ k: 'punct', v: c });
    } else {
      const two = sql.slice(i, i + 2);
      const op = ['||', '<=', '>=', '<>', '!=', '==', '<<', '>>', '->'].includes(two) ? two : c;
      i += op.length;
      out.push({ k: 'op', v: op === '==' ? '=' : op });
    }
  }
  return out;
}

/** The index after the closing quote of the literal/identifier opened at `i` (a doubled quote is an escape). */
function quotedEnd(sql: string, i: number, q: string): number {
  let j = i + 1;
  for (;;) {
    const end = sql.indexOf(q, j);
    if (end < 0) throw new Error(`unterminated ${q} in SQL: ${sql.slice(i, i + 40)}`);
    if (sql[end + 1] === q) j = end + 2;
    else return end + 1;
  }
}

/** Nests the tokens by parentheses. */
function parse(toks: Tok[]): Node[] {
  const stack: Node[][] = [[]];
  for (const t of toks) {
    if (t.k === 'punct' && t.v === '(') stack.push([]);
    else if (t.k === 'punct' && t.v === ')') {
      const items = stack.pop()!;
      if (!stack.length) throw new Error('unbalanced ) in SQL');
      stack[stack.length - 1]!.push(group(items));
    } else stack[stack.length - 1]!.push(t);
  }
  if (stack.length !== 1) throw new Error('unbalanced ( in SQL');
  return stack[0]!;
}

/** The SQL of nodes; each `?` becomes the next `$n` (with its cast, if the rewrites gave it one). */
function render(nodes: Node[], counter = { n: 0 }): string {
  let s = '';
  for (const node of nodes) {
    if (node.k === 'group') s += `(${render(node.items, counter)})`;
    else if (node.k === 'param') s += `$${++counter.n}${paramCasts.get(node) ?? ''}`;
    else s += node.v;
  }
  return s;
}

/** Casts given to parameter tokens by the rewrites (`::text` where PostgreSQL cannot infer a type). */
const paramCasts = new WeakMap<Tok, string>();
function castParam(node: Node | undefined, type: string): void {
  if (node?.k === 'param' && !paramCasts.has(node)) paramCasts.set(node, `::${type}`);
}

// ---------------------------------------------------------------------------------------------------------------
// helpers over one level of nodes

// not a type guard: its false branch would narrow a node to a group
const isWord = (n: Node | undefined, ...words: string[]): boolean => n?.k === 'word' && (words.length === 0 || words.includes(n.v.toUpperCase()));
const isPunct = (n: Node | undefined, v: string): boolean => n?.k === 'punct' && n.v === v;
const isOp = (n: Node | undefined, ...ops: string[]): boolean => n?.k === 'op' && ops.includes(n.v);
const significant = (n: Node): boolean => n.k !== 'ws' && n.k !== 'comment';

/** Index of the next significant node after i (or -1). */
function next(nodes: Node[], i: number): number {
  for (let j = i + 1; j < nodes.length; j++) if (significant(nodes[j]!)) return j;
  return -1;
}
function prev(nodes: Node[], i: number): number {
  for (let j = i - 1; j >= 0; j--) if (significant(nodes[j]!)) return j;
  return -1;
}

/** Splits a level at its top-level commas (the commas are dropped). */
function splitCommas(nodes: Node[]): Node[][] {
  const parts: Node[][] = [[]];
  for (const n of nodes) {
    if (isPunct(n, ',')) parts.push([]);
    else parts[parts.length - 1]!.push(n);
  }
  return parts;
}
const joinCommas = (parts: Node[][]): Node[] => parts.flatMap((p, i) => (i ? [{ k: 'punct', v: ',' } as Tok, ...p] : p));
const trimmed = (nodes: Node[]): Node[] => {
  let a = 0;
  let b = nodes.length;
  while (a < b && !significant(nodes[a]!)) a++;
  while (b > a && !significant(nodes[b - 1]!)) b--;
  return nodes.slice(a, b);
};

/** SQL keywords that are never function names (a word followed by a group is a call otherwise). */
const KEYWORDS = new Set(
  (
    'SELECT FROM WHERE AND OR NOT IN EXISTS VALUES AS ON USING JOIN INTO SET WITH OVER FILTER BY GROUP ORDER HAVING ' +
    'LIMIT OFFSET UNION ALL EXCEPT INTERSECT CASE WHEN THEN ELSE END IS NULL LIKE ILIKE GLOB BETWEEN DISTINCT ' +
    'RETURNING TABLE INDEX KEY REFERENCES UNIQUE CHECK PRIMARY FOREIGN DEFAULT CONSTRAINT IF RECURSIVE LATERAL ' +
    'LEFT RIGHT INNER OUTER CROSS FULL NATURAL UPDATE DELETE INSERT REPLACE CONFLICT DO NOTHING ESCAPE COLLATE ' +
    'PARTITION WINDOW RAISE TRUE FALSE ASC DESC NULLS FIRST LAST MATCH CAST'
  ).split(' '),
);
/** Words after which a boolean condition starts. */
const CONDITION_START = new Set(['WHERE', 'AND', 'OR', 'NOT', 'ON', 'HAVING', 'WHEN']);
/** Words that end a condition's operand. */
const CONDITION_END = ['AND', 'OR', 'THEN', 'ORDER', 'GROUP', 'LIMIT', 'HAVING', 'UNION', 'RETURNING', 'WINDOW', 'EXCEPT', 'INTERSECT', 'ON', 'DO'];
/** Words that end a clause at one level. */
const CLAUSE_END = new Set([
  'FROM',
  'WHERE',
  'GROUP',
  'ORDER',
  'LIMIT',
  'OFFSET',
  'UNION',
  'EXCEPT',
  'INTERSECT',
  'HAVING',
  'WINDOW',
  'RETURNING',
  'ON',
  'FETCH',
]);

/** Whether a level (a select item, a function argument) is a boolean expression in PostgreSQL. */
function isBooleanExpr(nodes: Node[]): boolean {
  const t = trimmed(nodes);
  // a parenthesized expression is looked into; a scalar subquery is a value
  if (t.length === 1 && t[0]!.k === 'group') return !isWord(trimmed(t[0].items)[0], 'SELECT', 'WITH', 'VALUES') && isBooleanExpr(t[0].items);
  let caseDepth = 0;
  for (const n of nodes) {
    if (isWord(n, 'CASE')) caseDepth++;
    else if (isWord(n, 'END')) caseDepth--;
    else if (caseDepth > 0) continue;
    else if (isOp(n, '=', '<>', '!=', '<', '>', '<=', '>=')) return true;
    else if (isWord(n, 'IS', 'IN', 'LIKE', 'ILIKE', 'GLOB', 'BETWEEN', 'EXISTS', 'NOT', 'AND', 'OR', 'MATCH')) return true;
  }
  return false;
}

/** `(expr)::int`: a boolean where SQLite would give 0/1 (`done`: the nodes were rewritten already). */
const asInt = (nodes: Node[], done = false): Node[] => [{ ...group(nodes), done }, raw('::int')];

// ---------------------------------------------------------------------------------------------------------------
// schema knowledge: column types and primary keys (for INSERT OR REPLACE and for typing parameters)

interface TableInfo {
  columns: Map<string, string>;
  primaryKey: string[];
  /** NOT NULL and primary key columns: NULL placement means nothing for them */
  notNull: Set<string>;
}
const schema = new Map<string, TableInfo>();
let schemaLoaded = false;

/** Learns the tables of a migration script in SQLite's dialect (ddlToPostgres does it for every script it sees). */
export function learnSchema(script: string): void {
  for (const stmt of splitStatements(parse(tokenize(script)))) {
    const s = trimmed(stmt);
    if (isWord(s[0], 'CREATE') && isWord(s[next(s, 0)], 'TABLE')) {
      const nameAt = next(s, next(s, 0));
      const body = s.find((n): n is Group => n.k === 'group');
      if (!body || nameAt < 0) continue;
      const info: TableInfo = { columns: new Map(), primaryKey: [], notNull: new Set() };
      schema.set(unquote(s[nameAt]!), info);
      for (const def of splitCommas(body.items)) addColumnDef(info, trimmed(def));
    } else if (isWord(s[0], 'ALTER')) {
      const t = trimmed(stmt).filter(significant);
      const info = schema.get(unquote(t[2]!));
      const addAt = t.findIndex((n) => isWord(n, 'ADD'));
      const colAt = isWord(t[addAt + 1], 'COLUMN') ? addAt + 1 : addAt;
      if (info && addAt > 0) addColumnDef(info, t.slice(colAt + 1));
    }
  }
}

function addColumnDef(info: TableInfo, def: Node[]): void {
  const sig = def.filter(significant);
  if (isWord(sig[0], 'PRIMARY') && sig[2]?.k === 'group') {
    info.primaryKey = splitCommas(sig[2].items).map((c) => unquote(trimmed(c)[0]!));
    for (const c of info.primaryKey) info.notNull.add(c);
    return;
  }
  if (!sig[0] || isWord(sig[0], 'UNIQUE', 'CHECK', 'FOREIGN', 'CONSTRAINT')) return;
  const name = unquote(sig[0]);
  info.columns.set(name, columnType(sig[1]));
  if (sig.some((n, i) => isWord(n, 'PRIMARY') && isWord(sig[i + 1], 'KEY'))) info.primaryKey = [name];
  if (info.primaryKey.includes(name) || sig.some((n, i) => isWord(n, 'NOT') && isWord(sig[i + 1], 'NULL'))) info.notNull.add(name);
}

/** The PostgreSQL type of a SQLite declared type (affinity rules, simplified to the types this schema uses). */
function columnType(t: Node | undefined): string {
  const name = t?.k === 'word' ? t.v.toUpperCase() : '';
  if (name.includes('INT')) return 'bigint';
  if (name === 'REAL' || name.includes('FLOA') || name.includes('DOUB')) return 'double precision';
  if (name === 'BLOB') return 'bytea';
  return 'text';
}

const unquote = (n: Node): string => (n.k === 'qid' ? n.v.slice(1, -1).replace(/""/g, '"') : n.k === 'group' ? '' : n.v.toLowerCase());

/** Learns the schema of the built-in migrations on first need (tables declared elsewhere: `learnSchema`). */
function ensureSchema(): void {
  if (schemaLoaded) return;
  schemaLoaded = true;
  const learn = (s: string) => learnSchema(s);
  for (const m of migrations) m.up({ dialect: 'postgres', exec: learn, native: learn });
}
function tableInfo(table: string): TableInfo | undefined {
  ensureSchema();
  return schema.get(table);
}

// ---------------------------------------------------------------------------------------------------------------
// runtime statements

/** A statement that uses what only SQLite has (PRAGMA, rowid, FTS5's MATCH, sqlite_master, changes()). */
export class UntranslatableSqlError extends Error {
  constructor(what: string, sql: string) {
    super(`${what} has no PostgreSQL translation: ${sql.replace(/\s+/g, ' ').slice(0, 200)}`);
  }
}

/** Refuses the SQLite-only constructs outright (rather than let PostgreSQL fail on them with a syntax error). */
function refuseSqliteOnly(toks: Tok[], sql: string): void {
  const first = toks.find(significant);
  if (first && isWord(first, 'PRAGMA')) throw new UntranslatableSqlError('PRAGMA', sql);
  for (const t of toks) {
    if (t.k !== 'word' && t.k !== 'qid') continue;
    const name = unquote(t);
    if (name === 'rowid' || name === '_rowid_') throw new UntranslatableSqlError('rowid', sql);
    if (t.k === 'word' && name === 'match') throw new UntranslatableSqlError('MATCH (FTS5)', sql);
    if (/^sqlite_/.test(name)) throw new UntranslatableSqlError(name, sql);
  }
}

/** One runtime statement in SQLite's dialect → PostgreSQL (`?` → `$n`). */
export function toPostgres(sql: string): string {
  const toks = tokenize(sql);
  refuseSqliteOnly(toks, sql);
  const nodes = parse(toks);
  rewriteLevel(nodes, false);
  return render(rewriteStatement(nodes));
}

/**
 * The rewrites of one level, then of the groups in it. `condition`: the level is a boolean condition (a WHERE
 * clause's parenthesized part), so a bare integer column in it is a truth value.
 */
function rewriteLevel(nodes: Node[], condition: boolean): void {
  nameSelectItems(nodes);
  typeJsonValues(nodes);
  rewriteCalls(nodes);
  rewriteOperators(nodes);
  rewriteBareConditions(nodes, condition);
  rewriteSelectList(nodes);
  rewriteOrderBy(nodes);
  rewriteInsertSelect(nodes);
  aliasSubqueries(nodes);
  qualifyUpsert(nodes);
  descend(nodes, condition);
}

/** Rewrites the groups of a level. */
function descend(nodes: Node[], condition: boolean): void {
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i]!;
    if (n.k !== 'group') continue;
    if (n.done) {
      descend(n.items, false);
      continue;
    }
    const p = nodes[prev(nodes, i)];
    const after = nodes[next(nodes, i)];
    const whole = after === undefined || isWord(after, ...CONDITION_END) || isPunct(after, ';');
    const inCondition = whole && (isWord(p, ...CONDITION_START) || (condition && p === undefined));
    rewriteLevel(n.items, inCondition);
  }
}

/** The PostgreSQL type of a column name, if every table that has a column of that name gives it the same type. */
function typeOfName(name: string): string | undefined {
  ensureSchema();
  let type: string | undefined;
  for (const info of schema.values()) {
    const t = info.columns.get(name);
    if (t && type && t !== type) return undefined;
    type ??= t;
  }
  return type;
}
function knownName(name: string): boolean {
  ensureSchema();
  return [...schema.values()].some((i) => i.columns.has(name));
}

const levelTables = new WeakMap<Node[], Map<string, TableInfo>>();
/** The tables named in FROM/JOIN at one level, by alias (and by name). */
function tablesOf(nodes: Node[]): Map<string, TableInfo> {
  const cached = levelTables.get(nodes);
  if (cached) return cached;
  const out = new Map<string, TableInfo>();
  levelTables.set(nodes, out);
  for (let i = 0; i < nodes.length; i++) {
    if (!isWord(nodes[i], 'FROM', 'JOIN', 'UPDATE', 'INTO')) continue;
    const t = next(nodes, i);
    const name = nodes[t] && nodes[t].k !== 'group' ? unquote(nodes[t]) : '';
    const info = tableInfo(name);
    if (!info) continue;
    out.set(name, info);
    let a = next(nodes, t);
    if (isWord(nodes[a], 'AS')) a = next(nodes, a);
    const alias = nameAt(nodes, a);
    if (alias) out.set(alias, info);
  }
  return out;
}

/** The type of the column named by the identifier chain ending at i, resolved by this level's tables if it can be. */
function typeAt(nodes: Node[], i: number, name: string): string | undefined {
  const tables = tablesOf(nodes);
  const start = chainStart(nodes, i);
  if (start < i) {
    const t = tables.get(unquote(nodes[i - 2]!));
    if (t?.columns.has(name)) return t.columns.get(name);
  } else {
    const owners = [...new Set(tables.values())].filter((t) => t.columns.has(name));
    if (owners.length === 1) return owners[0]!.columns.get(name);
  }
  return typeOfName(name);
}

/** The name at the end of an identifier chain ending at index i (`a.b` → b), or undefined. */
function nameAt(nodes: Node[], i: number): string | undefined {
  const n = nodes[i];
  if (n?.k === 'qid' || (n?.k === 'word' && !KEYWORDS.has(n.v.toUpperCase()))) return unquote(n);
  return undefined;
}
/** The start index of the identifier chain ending at i. */
function chainStart(nodes: Node[], i: number): number {
  let j = i;
  while (isOp(nodes[j - 1], '.') && (nodes[j - 2]?.k === 'word' || nodes[j - 2]?.k === 'qid')) j -= 2;
  return j;
}

/**
 * json_each's `value` is text here (SQLite gives numbers as numbers), and PostgreSQL has no text = bigint: where it
 * meets an integer column it is cast to the column's type. Handled: `col IN (SELECT value FROM json_each(..))`,
 * `value IN (SELECT col FROM table)` and `a = b` where one side is a typed column and the other `value` or a name
 * no table has (a CTE's column).
 */
function typeJsonValues(nodes: Node[]): void {
  const cast = (at: number, type: string | undefined) => {
    if (type && type !== 'text') nodes.splice(at + 1, 0, raw(`::${type}`));
  };
  for (let i = 0; i < nodes.length; i++) {
    const g = nodes[i]!;
    if (g.k === 'group' && isWord(nodes[prev(nodes, i)], 'IN')) {
      let p = prev(nodes, prev(nodes, i));
      if (isWord(nodes[p], 'NOT')) p = prev(nodes, p);
      const sel = trimmed(g.items).filter(significant);
      if (!isWord(sel[0], 'SELECT')) continue;
      const lg = nodes[p];
      const lSel = lg?.k === 'group' ? trimmed(lg.items).filter(significant) : [];
      // (SELECT col FROM ...) IN (...): the subquery's column
      const lhs = isWord(lSel[0], 'SELECT') ? nameAt(lSel, isOp(lSel[2], '.') ? 3 : 1) : nameAt(nodes, p);
      const selName = nameAt(sel, sel.length > 2 && isOp(sel[2], '.') ? 3 : 1);
      if (lhs && selName === 'value' && sel.some((n) => isWord(n, 'JSON_EACH'))) {
        const v = g.items.indexOf(sel[isOp(sel[2], '.') ? 3 : 1]!);
        const type = lg?.k === 'group' ? typeOfName(lhs) : typeAt(nodes, p, lhs);
        if (type && type !== 'text') g.items.splice(v + 1, 0, raw(`::${type}`));
      } else if (lhs === 'value' && isWord(sel[2], 'FROM') && selName) {
        const type = tableInfo(unquote(sel[3] ?? raw('')))?.columns.get(selName);
        cast(p, type);
        i++;
      }
    } else if (isOp(g, '=', '<>', '!=', '<', '>', '<=', '>=')) {
      const l = prev(nodes, i);
      let r = next(nodes, i);
      while (isOp(nodes[r + 1], '.') && (nodes[r + 2]?.k === 'word' || nodes[r + 2]?.k === 'qid')) r += 2;
      const lName = nameAt(nodes, l);
      const rName = nameAt(nodes, r);
      if (!lName || !rName || isOp(nodes[r + 1], '.') || nodes[next(nodes, r)]?.k === 'group') continue;
      const untyped = (name: string, at: number) => name === 'value' || (!knownName(name) && chainStart(nodes, at) < at);
      const lType = typeAt(nodes, l, lName);
      const rType = typeAt(nodes, r, rName);
      if (lType && lType !== 'text' && untyped(rName, r)) cast(r, lType);
      else if (rType && rType !== 'text' && untyped(lName, l)) {
        cast(l, rType);
        i++;
      }
    }
  }
}

/** PostgreSQL 15 wants an alias on every subquery in FROM (SQLite does not). */
function aliasSubqueries(nodes: Node[]): void {
  for (let i = 0; i < nodes.length; i++) {
    const g = nodes[i]!;
    if (g.k !== 'group' || !isWord(nodes[prev(nodes, i)], 'FROM', 'JOIN')) continue;
    if (!isWord(trimmed(g.items)[0], 'SELECT', 'WITH', 'VALUES')) continue;
    const a = nodes[next(nodes, i)];
    if (isWord(a, 'AS') || a?.k === 'qid' || (a?.k === 'word' && !KEYWORDS.has(a.v.toUpperCase()))) continue;
    nodes.splice(i + 1, 0, raw(` AS weft_subquery${i}`));
  }
}

/**
 * `ON CONFLICT ... DO UPDATE SET n = n + excluded.n`: SQLite reads a bare column as the target row's, PostgreSQL
 * finds it ambiguous (the target or EXCLUDED), so bare columns of the target table right of `=` are qualified.
 */
function qualifyUpsert(nodes: Node[]): void {
  const ins = nodes.findIndex((n) => isWord(n, 'INSERT'));
  const doAt = nodes.findIndex((n, i) => isWord(n, 'DO') && isWord(nodes[next(nodes, i)], 'UPDATE'));
  if (ins < 0 || doAt < 0) return;
  const tableAt = next(
    nodes,
    nodes.findIndex((n, i) => i > ins && isWord(n, 'INTO')),
  );
  const table = unquote(nodes[tableAt]!);
  const aliasAt = isWord(nodes[next(nodes, tableAt)], 'AS') ? next(nodes, next(nodes, tableAt)) : -1;
  const qualifier = aliasAt >= 0 ? render([nodes[aliasAt]!]) : render([nodes[tableAt]!]);
  const columns = tableInfo(table)?.columns;
  if (!columns) return;
  const qualify = (level: Node[], from: number) => {
    let lhs = from === 0 ? false : true; // inside SET: the name before `=` is the assigned column
    for (let i = from; i < level.length; i++) {
      const n = level[i]!;
      if (isWord(n, 'SET') || isPunct(n, ',')) lhs = level === nodes;
      else if (isOp(n, '=') && lhs) lhs = false;
      else if (isWord(n, 'WHERE', 'RETURNING')) lhs = false;
      if (n.k === 'group') qualify(n.items, 0);
      else if (!lhs && n.k === 'word' && columns.has(n.v.toLowerCase()) && !isOp(level[i - 1], '.') && !isOp(level[i + 1], '.')) {
        if (level[next(level, i)]?.k === 'group' || KEYWORDS.has(n.v.toUpperCase())) continue;
        level[i] = raw(`${qualifier}.${n.v}`);
      }
      if (isWord(n, 'RETURNING') && level === nodes) return;
    }
  };
  qualify(nodes, next(nodes, doAt) + 1);
}

/** Function calls: renames, JSON functions, booleans passed as values. */
function rewriteCalls(nodes: Node[]): void {
  for (let i = 0; i < nodes.length; i++) {
    const w = nodes[i]!;
    const gi = next(nodes, i);
    const g = nodes[gi];
    if (w.k !== 'word' || g?.k !== 'group' || KEYWORDS.has(w.v.toUpperCase())) {
      if (isWord(w, 'CAST') && g?.k === 'group') rewriteCast(g);
      continue;
    }
    const name = w.v.toLowerCase();
    const args = splitCommas(g.items);
    // a comparison passed as a value (sum(x = 1), coalesce(a > b, 0)) is a boolean in PostgreSQL
    if (!['json_each', 'json_tree'].includes(name) && args.some((a) => isBooleanExpr(a))) {
      g.items = joinCommas(args.map((a) => (isBooleanExpr(a) ? asInt(a) : a)));
    }
    const replaced = rewriteCall(name, splitCommas(g.items), nodes, i, gi);
    if (replaced) {
      nodes.splice(i, gi - i + 1 + replaced.consumed, ...replaced.nodes);
      i += replaced.nodes.length - 1;
    }
  }
}

interface Replacement {
  nodes: Node[];
  /** nodes after the call's group that the replacement also replaces (a json_each alias) */
  consumed: number;
}

function rewriteCall(name: string, args: Node[][], nodes: Node[], i: number, gi: number): Replacement | undefined {
  const call = (fn: string, a: Node[][] = args): Replacement => ({ nodes: [word(fn), group(joinCommas(a))], consumed: 0 });
  switch (name) {
    case 'ifnull':
      return call('coalesce');
    case 'instr':
      return call('strpos');
    case 'max':
    case 'min':
      return args.length >= 2 ? call(name === 'max' ? 'greatest' : 'least') : undefined;
    case 'group_concat':
      return call('string_agg', [[...args[0]!, raw('::text')], args[1] ?? [raw("','")]]);
    case 'json_extract':
      if (numberGuarded(nodes, i)) return call('weft_json_number', [jsonArg(args[0]!), [raw(jsonPath(args[1]))]]);
      return { nodes: [group([...asJson(args[0]!), raw(` #>> ${jsonPath(args[1])}`)])], consumed: 0 };
    case 'json_type':
      return call('weft_json_type', [jsonArg(args[0]!), [raw(args[1] ? jsonPath(args[1]) : "'{}'")]]);
    case 'json_array_length':
      return call('weft_json_array_length', [jsonArg(args[0]!)]);
    case 'json_valid':
      return call('weft_json_valid', [textArg(args[0]!)]);
    case 'json':
      return { nodes: [group([...asJson(args[0]!), raw('::text')])], consumed: 0 };
    case 'json_array':
      return { nodes: [raw('jsonb_build_array'), group(joinCommas(args)), raw('::text')], consumed: 0 };
    case 'json_object':
      return { nodes: [raw('jsonb_build_object'), group(joinCommas(args)), raw('::text')], consumed: 0 };
    case 'json_group_array':
      return { nodes: [raw('coalesce'), group([raw('jsonb_agg'), group(joinCommas(args)), raw(`, '[]'::jsonb`)]), raw('::text')], consumed: 0 };
    case 'json_each':
      return jsonEach(args, nodes, gi);
    case 'strftime':
      return strftime(args);
    case 'datetime':
      return args.length === 1 ? strftime([[raw("'%Y-%m-%d %H:%M:%S'")], args[0]!]) : undefined;
    case 'total_changes':
    case 'changes':
    case 'last_insert_rowid':
      throw new UntranslatableSqlError(`${name}()`, render(nodes));
    default:
      return undefined;
  }
}

/**
 * Whether the json_extract at i follows `json_type(..) IN ('integer', 'real') AND` (ZitiQL's number comparison of a
 * tag): then it is compared as a number (as text, '10' < '9').
 */
function numberGuarded(nodes: Node[], i: number): boolean {
  const and = prev(nodes, i);
  const list = nodes[prev(nodes, and)];
  const inAt = prev(nodes, prev(nodes, and));
  return isWord(nodes[and], 'AND') && list?.k === 'group' && isWord(nodes[inAt], 'IN') && /^'integer',\s*'real'$/.test(render(trimmed(list.items)));
}

/**
 * A JSON text argument as json (not jsonb: json keeps the text as stored, so an object or array read out of it is
 * the same minified text SQLite gives): a parameter is typed json, anything else cast.
 */
function asJson(arg: Node[]): Node[] {
  const t = trimmed(arg);
  if (t.length === 1 && t[0]!.k === 'param') {
    castParam(t[0], 'json');
    return t;
  }
  return [group(t), raw('::json')];
}
function jsonArg(arg: Node[]): Node[] {
  const t = trimmed(arg);
  if (t.length === 1) castParam(t[0], 'text');
  return t;
}
const textArg = jsonArg;

/** `'$.a."b.c"[0]'` → `'{a,"b.c",0}'` (a path for #> and #>>). */
function jsonPath(arg: Node[] | undefined): string {
  const t = trimmed(arg ?? []);
  if (t.length !== 1 || t[0]!.k !== 'str') throw new Error(`JSON paths must be string literals: ${render(t)}`);
  const path = t[0].v.slice(1, -1).replace(/''/g, "'");
  if (!path.startsWith('$')) throw new Error(`bad JSON path ${path}`);
  const parts: string[] = [];
  const re = /\.("((?:[^"]|"")*)"|[^.[]+)|\[(\d+)\]/y;
  re.lastIndex = 1;
  while (re.lastIndex < path.length) {
    const m = re.exec(path);
    if (!m) throw new Error(`unsupported JSON path ${path}`);
    parts.push(m[3] ?? m[2] ?? m[1]!);
  }
  const elems = parts.map((p) => `"${p.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
  return `'{${elems.join(',').replace(/'/g, "''")}}'`;
}

/**
 * `json_each(x [, path]) [AS] alias` → a LATERAL subquery with json_each's `value` (text; JSON text for objects and
 * arrays), 0-based `key` and `type` columns, under the same alias (`json_each` when it had none). Numbers come out as
 * text (see typeJsonValues). A scalar is one element, as in SQLite; an object's members are its values.
 */
function jsonEach(args: Node[][], nodes: Node[], gi: number): Replacement {
  let consumed = 0;
  let alias = 'json_each';
  let j = next(nodes, gi);
  if (isWord(nodes[j], 'AS')) j = next(nodes, j);
  const a = nodes[j];
  if (a && (a.k === 'qid' || (a.k === 'word' && !KEYWORDS.has(a.v.toUpperCase())))) {
    alias = a.v;
    consumed = j - gi;
  }
  const sub =
    `LATERAL (SELECT CASE WHEN json_typeof(e.v) IN ('object', 'array') THEN e.v::text ELSE e.v #>> '{}' END AS value, ` +
    `e.ord - 1 AS key, weft_json_typeof(e.v) AS type FROM json_array_elements(`;
  const path = args[1] ? [raw(` #> ${jsonPath(args[1])}`)] : [];
  return {
    nodes: [raw(sub), raw('weft_json_elements('), ...asJson(args[0]!), ...path, raw(`)) WITH ORDINALITY AS e(v, ord)) AS ${alias}`)],
    consumed,
  };
}

/** strftime(format, time): the formats the code uses, as UTC text. */
function strftime(args: Node[][]): Replacement {
  const fmt = trimmed(args[0] ?? []);
  if (fmt.length !== 1 || fmt[0]!.k !== 'str') throw new Error('strftime formats must be string literals');
  const time = trimmed(args[1] ?? [raw("'now'")]);
  const isNow = time.length === 1 && time[0]!.k === 'str' && time[0].v.toLowerCase() === "'now'";
  if (args.length > 2) throw new Error('strftime modifiers are not supported');
  const map: Record<string, string> = { Y: 'YYYY', m: 'MM', d: 'DD', H: 'HH24', M: 'MI', S: 'SS', f: 'SS.MS', j: 'DDD', '%': '%' };
  let pg = '';
  const f = fmt[0].v.slice(1, -1);
  for (let k = 0; k < f.length; k++) {
    if (f[k] === '%') {
      const spec = map[f[++k]!];
      if (!spec) throw new Error(`unsupported strftime format %${f[k]}`);
      pg += spec;
    } else pg += `"${f[k]}"`;
  }
  const ts = isNow ? [raw('statement_timestamp()')] : [group(time), raw('::timestamptz')];
  return { nodes: [raw('to_char'), group([group(ts), raw(` AT TIME ZONE 'UTC', '${pg.replace(/'/g, "''")}'`)])], consumed: 0 };
}

/** CAST(x AS INTEGER) → BIGINT, REAL → DOUBLE PRECISION, BLOB → BYTEA. */
function rewriteCast(g: Group): void {
  const as = g.items.findIndex((n) => isWord(n, 'AS'));
  const t = g.items[next(g.items, as)];
  if (as >= 0 && t?.k === 'word') t.v = columnType(t) === 'text' ? t.v : columnType(t).toUpperCase();
}

/** LIKE → ILIKE (ESCAPE '' unless one is given), GLOB → a regular expression, `IS [NOT] x` → IS [NOT] DISTINCT FROM, `? IS NULL` typed. */
function rewriteOperators(nodes: Node[]): void {
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i] as Tok;
    if (isWord(n, 'LIKE')) {
      n.v = 'ILIKE';
      // PostgreSQL's LIKE escapes with a backslash unless told otherwise; SQLite's has no escape character
      const end = operandEnd(nodes, next(nodes, i));
      if (!isWord(nodes[next(nodes, end - 1)], 'ESCAPE')) nodes.splice(end, 0, raw(" ESCAPE ''"));
    } else if (isWord(n, 'GLOB')) {
      const p = prev(nodes, i);
      const negated = isWord(nodes[p], 'NOT');
      if (negated) nodes[p] = raw('');
      n.k = 'raw';
      n.v = negated ? '!~' : '~';
      const r = next(nodes, i);
      const end = operandEnd(nodes, r);
      nodes.splice(r, end - r, raw('weft_glob_regex('), ...nodes.slice(r, end), raw(')'));
    } else if (isWord(n, 'IS')) {
      // SQLite's `a IS b` is IS NOT DISTINCT FROM, `a IS NOT b` IS DISTINCT FROM
      const notAt = isWord(nodes[next(nodes, i)], 'NOT') ? next(nodes, i) : -1;
      const operand = nodes[next(nodes, notAt >= 0 ? notAt : i)];
      if (isWord(operand, 'NULL')) castParam(nodes[prev(nodes, i)], 'text');
      else if (isWord(operand, 'TRUE', 'FALSE', 'DISTINCT')) continue;
      else if (notAt >= 0) nodes[notAt] = raw('DISTINCT FROM');
      else nodes.splice(i + 1, 0, raw(' NOT DISTINCT FROM'));
    } else if (n.k === 'op' && n.v === '->') throw new Error('the -> JSON operator is not translated');
  }
}

/** The end (exclusive) of the simple operand starting at i: names (a.b), calls, groups, literals, parameters, joined by ||. */
function operandEnd(nodes: Node[], i: number): number {
  let j = i;
  for (;;) {
    const n = nodes[j];
    if (!n) return j;
    j++;
    if (n.k === 'word' || n.k === 'qid') {
      while (isOp(nodes[j], '.') && nodes[j + 1]) j += 2;
      const g = next(nodes, j - 1);
      if (nodes[g]?.k === 'group') j = g + 1;
    }
    const concat = next(nodes, j - 1);
    if (!isOp(nodes[concat], '||')) return j;
    j = next(nodes, concat);
  }
}

/**
 * `WHERE t.disabled`, `AND NOT x.is_system`, `NOT coalesce(p, 0)`: an integer column or call as a condition →
 * `<> 0` (the calls this translation makes return integers where SQLite's do, e.g. weft_json_valid).
 */
function rewriteBareConditions(nodes: Node[], condition: boolean): void {
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i]!;
    if (n.k !== 'word' && n.k !== 'qid' && n.k !== 'num') continue;
    if (n.k === 'word' && KEYWORDS.has(n.v.toUpperCase())) continue;
    const p = prev(nodes, i);
    const starts = p < 0 ? condition : isWord(nodes[p], ...CONDITION_START) && !betweenAnd(nodes, p);
    if (!starts) continue;
    let end = i + 1;
    while (isOp(nodes[end], '.') && (nodes[end + 1]?.k === 'word' || nodes[end + 1]?.k === 'qid')) end += 2;
    const g = next(nodes, end - 1);
    if (end === i + 1 && nodes[g]?.k === 'group') end = g + 1; // a call
    const after = next(nodes, end - 1);
    if (after < 0 ? p >= 0 || condition : isWord(nodes[after], ...CONDITION_END) || isPunct(nodes[after], ';')) {
      nodes.splice(end, 0, raw(' <> 0'));
    }
  }
}

/** Whether the AND at p is the second half of BETWEEN x AND y. */
function betweenAnd(nodes: Node[], p: number): boolean {
  if (!isWord(nodes[p], 'AND')) return false;
  for (let j = prev(nodes, p); j >= 0; j = prev(nodes, j)) {
    if (isWord(nodes[j], 'BETWEEN')) return true;
    if (isWord(nodes[j], 'AND', 'OR', 'WHERE', 'ON', 'WHEN', 'HAVING')) return false;
  }
  return false;
}

/**
 * SQLite names an unaliased expression column by its text (`count(*)`, `1`), PostgreSQL by the function (`count`)
 * or `?column?`: such items get their SQLite name as an alias (before any rewrite changes their text).
 */
function nameSelectItems(nodes: Node[]): void {
  mapSelectLists(nodes, (items) =>
    items.map((item) => {
      const t = trimmed(item);
      const sig = t.filter(significant);
      const simple = sig.every((n, k) => (k % 2 === 0 ? n.k === 'word' || n.k === 'qid' || isOp(n, '*') : isOp(n, '.')));
      const aliased = sig.some((n) => isWord(n, 'AS')) || (sig.length >= 2 && isNameTok(sig[sig.length - 1]) && !isOp(sig[sig.length - 2], '.'));
      if (simple || aliased || !t.length) return item;
      const at = item.lastIndexOf(t[t.length - 1]!) + 1;
      const alias: Tok[] = [raw(' '), word('AS'), raw(' '), { k: 'qid', v: quoteIdent(source(t)) }];
      return [...item.slice(0, at), ...alias, ...item.slice(at)];
    }),
  );
}

/** Replaces the items of every SELECT list in `nodes` (split at top-level commas) with what `rewrite` makes of them. */
function mapSelectLists(nodes: Node[], rewrite: (items: Node[][], selectAt: number) => Node[][]): void {
  for (let i = 0; i < nodes.length; i++) {
    if (!isWord(nodes[i], 'SELECT')) continue;
    let start = next(nodes, i);
    if (isWord(nodes[start], 'DISTINCT', 'ALL')) start = next(nodes, start);
    if (start < 0) continue;
    let end = start;
    while (end < nodes.length && !(isWord(nodes[end], ...CLAUSE_END) || isPunct(nodes[end], ';'))) end++;
    const replaced = joinCommas(rewrite(splitCommas(nodes.slice(start, end)), i));
    nodes.splice(start, end - start, ...replaced);
    i = start + replaced.length - 1;
  }
}
const isNameTok = (n: Node | undefined): boolean => n?.k === 'qid' || (n?.k === 'word' && !KEYWORDS.has(n.v.toUpperCase()));
/** The SQL of nodes as written (parameters stay `?`). */
const source = (nodes: Node[]): string => nodes.map((n) => (n.k === 'group' ? `(${source(n.items)})` : n.v)).join('');

/** Select items that are comparisons/EXISTS (booleans in PostgreSQL) → `(...)::int`; bare `SELECT ?` typed. */
function rewriteSelectList(nodes: Node[]): void {
  mapSelectLists(nodes, (items, i) =>
    items.map((item) => {
      const asAt = item.findIndex((n) => isWord(n, 'AS'));
      const expr = asAt >= 0 ? item.slice(0, asAt) : item;
      const t = trimmed(expr);
      if (t.length === 1 && t[0]!.k === 'param' && !insideInsert(nodes, i)) castParam(t[0], 'text');
      if (!isBooleanExpr(expr)) return item;
      return [...asInt(trimmed(expr), true), raw(' '), ...(asAt >= 0 ? item.slice(asAt) : [])];
    }),
  );
}

/** Whether the SELECT at i is the source of an INSERT (its parameters are typed by the target columns). */
function insideInsert(nodes: Node[], i: number): boolean {
  for (let j = i - 1; j >= 0; j--) if (isWord(nodes[j], 'INSERT')) return true;
  return false;
}

/** Whether `expr` (significant nodes) names a NOT NULL column of a table of this level. */
function isNotNullColumn(level: Node[], expr: Node[]): boolean {
  const chain = expr.length === 1 || (expr.length === 3 && isOp(expr[1], '.'));
  const last = expr[expr.length - 1];
  if (!chain || !last || (last.k !== 'word' && last.k !== 'qid') || (expr.length === 3 && !isNameTok(expr[0]))) return false;
  const name = unquote(last);
  const tables = tablesOf(level);
  if (expr.length === 3) return tables.get(unquote(expr[0]!))?.notNull.has(name) ?? false;
  const owners = [...new Set(tables.values())].filter((t) => t.columns.has(name));
  return owners.length === 1 && owners[0]!.notNull.has(name);
}

/**
 * SQLite sorts NULLs first ascending and last descending; PostgreSQL the other way round: NULLS FIRST/LAST is added
 * unless the item is a NOT NULL column (createIndex does the same, so indexes still give the order).
 */
function rewriteOrderBy(nodes: Node[]): void {
  for (let i = 0; i < nodes.length; i++) {
    if (!isWord(nodes[i], 'ORDER') || !isWord(nodes[next(nodes, i)], 'BY')) continue;
    const start = next(nodes, i) + 1;
    let end = start;
    while (
      end < nodes.length &&
      !isWord(nodes[end], 'LIMIT', 'OFFSET', 'UNION', 'EXCEPT', 'INTERSECT', 'FETCH', 'RETURNING') &&
      !isPunct(nodes[end], ';')
    )
      end++;
    const items = splitCommas(nodes.slice(start, end)).map((item) => {
      const sig = item.filter(significant);
      if (sig.some((n) => isWord(n, 'NULLS'))) return item;
      const desc = isWord(sig[sig.length - 1], 'DESC');
      // a NOT NULL column keeps PostgreSQL's default, so its primary key / unique / plain index can give the order
      if (isNotNullColumn(nodes, isWord(sig[sig.length - 1], 'ASC', 'DESC') ? sig.slice(0, -1) : sig)) return item;
      const t = trimmed(item);
      const trailing = item.slice(item.lastIndexOf(t[t.length - 1]!) + 1);
      return [...item.slice(0, item.length - trailing.length), raw(desc ? ' NULLS LAST' : ' NULLS FIRST'), ...trailing];
    });
    const replaced = joinCommas(items);
    nodes.splice(start, end - start, ...replaced);
    i = start + replaced.length - 1;
  }
}

/**
 * `INSERT INTO t (cols) SELECT ?, value, ...`: PostgreSQL types a select item that is a parameter (or json_each's
 * text `value`) as text, which an integer column refuses; such items are cast to their column's type.
 */
function rewriteInsertSelect(nodes: Node[]): void {
  const ins = nodes.findIndex((n) => isWord(n, 'INSERT'));
  if (ins < 0) return;
  const into = nodes.findIndex((n, i) => i > ins && isWord(n, 'INTO'));
  const tableAt = next(nodes, into);
  const colsAt = next(nodes, tableAt);
  const cols = nodes[colsAt];
  const selAt = next(nodes, colsAt);
  const info = tableInfo(unquote(nodes[tableAt] ?? raw('')));
  if (!info || cols?.k !== 'group' || !isWord(nodes[selAt], 'SELECT')) return;
  const names = splitCommas(cols.items).map((c) => unquote(trimmed(c)[0]!));
  let end = selAt + 1;
  while (end < nodes.length && !isWord(nodes[end], ...CLAUSE_END)) end++;
  const items = splitCommas(nodes.slice(selAt + 1, end)).map((item, k) => {
    const type = info.columns.get(names[k] ?? '');
    const t = trimmed(item);
    if (!type) return item;
    if (t.length === 1 && t[0]!.k === 'param') {
      castParam(t[0], type);
      return item;
    }
    const last = t[t.length - 1];
    const isValue = t.length <= 3 && last?.k === 'word' && last.v.toLowerCase() === 'value';
    return isValue && type !== 'text' ? [raw(' '), { ...group(t), done: true }, raw(`::${type} `)] : item;
  });
  const replaced = joinCommas(items);
  nodes.splice(selAt + 1, end - selAt - 1, raw(' '), ...replaced);
}

/** Statement-level rewrites: INSERT OR IGNORE / OR REPLACE / REPLACE INTO. */
function rewriteStatement(nodes: Node[]): Node[] {
  const first = next(nodes, -1);
  const w = nodes[first];
  if (isWord(w, 'REPLACE') || (isWord(w, 'INSERT') && isWord(nodes[next(nodes, first)], 'OR'))) {
    const orAt = next(nodes, first);
    const mode = isWord(w, 'REPLACE') ? 'REPLACE' : (nodes[next(nodes, orAt)] as Tok).v.toUpperCase();
    const intoAt = isWord(w, 'REPLACE') ? orAt : next(nodes, next(nodes, orAt));
    nodes.splice(first, intoAt - first, raw('INSERT '));
    const table = unquote(nodes[next(nodes, next(nodes, first))]!);
    let clause: string;
    if (mode === 'IGNORE') clause = ' ON CONFLICT DO NOTHING';
    else if (mode === 'REPLACE') clause = replaceClause(table, nodes);
    else throw new Error(`INSERT OR ${mode} is not translated`);
    const ret = nodes.findIndex((n) => isWord(n, 'RETURNING'));
    let at = ret >= 0 ? ret : nodes.length;
    while (at > 0 && (!significant(nodes[at - 1]!) || isPunct(nodes[at - 1], ';'))) at--;
    nodes.splice(at, 0, raw(clause + (ret >= 0 ? ' ' : '')));
  }
  return nodes;
}

/** ON CONFLICT (pk) DO UPDATE SET every other inserted column (SQLite would delete and re-insert the row). */
function replaceClause(table: string, nodes: Node[]): string {
  const info = tableInfo(table);
  if (!info?.primaryKey.length) throw new Error(`INSERT OR REPLACE INTO ${table}: its primary key is not known (learnSchema)`);
  const cols = nodes.find((n): n is Group => n.k === 'group');
  const names = cols ? splitCommas(cols.items).map((c) => render(trimmed(c))) : [...info.columns.keys()];
  const set = names.filter((c) => !info.primaryKey.includes(c.replace(/"/g, '').toLowerCase()));
  const pk = info.primaryKey.join(', ');
  return set.length ? ` ON CONFLICT (${pk}) DO UPDATE SET ${set.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}` : ` ON CONFLICT (${pk}) DO NOTHING`;
}

// ---------------------------------------------------------------------------------------------------------------
// migration scripts

/**
 * The helper functions the translations call (created by every translated migration script; idempotent, and safe
 * to run again at startup so that a database migrated by an older Weft gets helpers added since).
 */
export const POSTGRES_HELPERS = `
CREATE OR REPLACE FUNCTION weft_json_typeof(v json) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE json_typeof(v)
    WHEN 'string' THEN 'text'
    WHEN 'number' THEN CASE WHEN v::text ~ '^-?[0-9]+$' THEN 'integer' ELSE 'real' END
    WHEN 'boolean' THEN v::text
    ELSE json_typeof(v) END
$$;
CREATE OR REPLACE FUNCTION weft_json_type(j text, path text[]) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT weft_json_typeof(j::json #> path)
$$;
CREATE OR REPLACE FUNCTION weft_json_number(j text, path text[]) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN json_typeof(j::json #> path) = 'number' THEN (j::json #>> path)::numeric END
$$;
CREATE OR REPLACE FUNCTION weft_json_elements(j json) RETURNS json LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN j IS NULL THEN NULL
    WHEN json_typeof(j) = 'array' THEN j
    WHEN json_typeof(j) = 'object' THEN (SELECT coalesce(json_agg(value), '[]'::json) FROM json_each(j))
    ELSE json_build_array(j) END
$$;
CREATE OR REPLACE FUNCTION weft_json_array_length(j text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN j IS NULL THEN NULL WHEN json_typeof(j::json) = 'array' THEN json_array_length(j::json) ELSE 0 END
$$;
CREATE OR REPLACE FUNCTION weft_json_valid(j text) RETURNS integer LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  IF j IS NULL THEN RETURN NULL; END IF;
  PERFORM j::json;
  RETURN 1;
EXCEPTION WHEN others THEN
  RETURN 0;
END
$$;
-- SQLite's GLOB pattern (*, ?, [...], case-sensitive) as an anchored regular expression
CREATE OR REPLACE FUNCTION weft_glob_regex(p text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT '^' || string_agg(CASE
      WHEN m[1] = '*' THEN '.*'
      WHEN m[1] = '?' THEN '.'
      WHEN left(m[1], 1) = '[' THEN '[' || CASE WHEN substr(m[1], 2, 1) = '^' THEN '^' || replace(substr(m[1], 3, length(m[1]) - 3), '\\', '\\\\') ELSE replace(substr(m[1], 2, length(m[1]) - 2), '\\', '\\\\') END || ']'
      ELSE regexp_replace(m[1], '([.+*?^$()[\\]{}|\\\\-])', '\\\\\\1', 'g') END, '' ORDER BY o) || '$'
  FROM regexp_matches(p, '(\\*|\\?|\\[\\^?\\]?[^]]*\\]|[^*?[]+|\\[)', 'g') WITH ORDINALITY AS r(m, o)
$$;
`;

/** A migration script in SQLite's dialect → one PostgreSQL script (helpers first). */
export function ddlToPostgres(script: string): string {
  learnSchema(script);
  const out: string[] = [POSTGRES_HELPERS.trim()];
  for (const stmt of splitStatements(parse(tokenize(script)))) {
    const s = trimmed(stmt.filter((n) => n.k !== 'comment'));
    if (!s.length) continue;
    out.push(ddlStatement(s) + ';');
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

function ddlStatement(s: Node[]): string {
  const sig = s.filter(significant);
  if (isWord(sig[0], 'CREATE')) {
    const what = sig.slice(1, 4).find((n) => isWord(n, 'TABLE', 'INDEX', 'TRIGGER', 'VIRTUAL', 'VIEW'));
    if (isWord(what, 'TABLE')) return createTable(s);
    if (isWord(what, 'INDEX')) return createIndex(s);
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

/** CREATE TABLE: column types mapped, WITHOUT ROWID / STRICT dropped, expressions translated. */
function createTable(s: Node[]): string {
  const gi = s.findIndex((n) => n.k === 'group');
  const body = s[gi] as Group;
  const defs = splitCommas(body.items).map((def) => {
    const t = trimmed(def);
    const first = t[0];
    if (isWord(first, 'PRIMARY', 'UNIQUE', 'CHECK', 'FOREIGN', 'CONSTRAINT')) return `\n  ${translateExpr(t)}`;
    return `\n  ${columnDef(t)}`;
  });
  return `${render(s.slice(0, gi))}(${defs.join(',')}\n)`;
}

/** One column definition: name, mapped type, then the constraints (DEFAULT/CHECK expressions translated). */
function columnDef(t: Node[]): string {
  const sig = t.filter(significant);
  const name = render([sig[0]!]);
  const typeTok = sig[1] as Tok | undefined;
  const hasType =
    typeTok?.k === 'word' &&
    !['PRIMARY', 'NOT', 'NULL', 'UNIQUE', 'CHECK', 'DEFAULT', 'REFERENCES', 'COLLATE', 'CONSTRAINT'].includes(typeTok.v.toUpperCase());
  const rest = trimmed(t.slice(t.indexOf(hasType ? typeTok : sig[0]!) + 1));
  const restSig = rest.filter(significant);
  const isPk = restSig.some((n, i) => isWord(n, 'PRIMARY') && isWord(restSig[i + 1], 'KEY'));
  const type = columnType(hasType ? typeTok : undefined);
  const autoincrement = restSig.some((n) => isWord(n, 'AUTOINCREMENT'));
  const restSql = translateExpr(rest.filter((n) => !isWord(n, 'AUTOINCREMENT'))).trim();
  // INTEGER PRIMARY KEY is SQLite's rowid: assigned when not given (a key that references another table's is not)
  if (type === 'bigint' && isPk && (autoincrement || !restSig.some((n) => isWord(n, 'REFERENCES')))) {
    return `${name} BIGINT GENERATED BY DEFAULT AS IDENTITY${restSql ? ' ' + restSql : ''}`;
  }
  const pgType = type === 'text' ? 'TEXT COLLATE "C"' : type.toUpperCase();
  return `${name} ${pgType}${restSql ? ' ' + restSql : ''}`;
}

/** An expression outside a statement (CHECK, DEFAULT, index columns, WHEN): the runtime rewrites. */
function translateExpr(nodes: Node[]): string {
  const copy = parse(tokenize(render(nodes)));
  rewriteLevel(copy, false);
  return render(copy);
}

/** CREATE INDEX: expressions translated, each nullable column's NULLs placed as the runtime ORDER BY places them. */
function createIndex(s: Node[]): string {
  const gi = s.findIndex((n) => n.k === 'group');
  const table = unquote(s[prev(s, gi)]!);
  const cols = splitCommas((s[gi] as Group).items).map((c) => {
    const t = trimmed(c);
    const sig = t.filter(significant);
    const desc = isWord(sig[sig.length - 1], 'DESC');
    const expr = isWord(sig[sig.length - 1], 'ASC', 'DESC') ? t.slice(0, t.lastIndexOf(sig[sig.length - 1]!)) : t;
    const e = trimmed(expr);
    const isCol = e.length === 1 && (e[0]!.k === 'word' || e[0]!.k === 'qid');
    const sql = translateExpr(e);
    const column = isCol || sql.startsWith('(') ? sql : `(${sql})`;
    if (isCol && tableInfo(table)?.notNull.has(unquote(e[0]!))) return `${column}${desc ? ' DESC' : ''}`;
    return `${column}${desc ? ' DESC NULLS LAST' : ' NULLS FIRST'}`;
  });
  const where = s.slice(gi + 1);
  return `${render(s.slice(0, gi))}(${cols.join(', ')})${where.length ? translateExpr(where) : ''}`;
}

/**
 * CREATE TRIGGER name {BEFORE|AFTER} {INSERT|UPDATE [OF cols]|DELETE} ON t [FOR EACH ROW] [WHEN cond] BEGIN ... END
 * → a plpgsql function name_fn() and a row trigger executing it.
 */
function createTrigger(s: Node[]): string {
  const sig = s.filter(significant);
  let k = 1;
  if (isWord(sig[k], 'TEMP', 'TEMPORARY')) throw new Error('TEMP triggers are not translated');
  k++; // TRIGGER
  const ifNotExists = isWord(sig[k], 'IF');
  if (ifNotExists) k += 3;
  const name = render([sig[k++]!]);
  const beginAt = s.findIndex((n) => isWord(n, 'BEGIN'));
  const endAt = s.length - 1 - [...s].reverse().findIndex((n) => isWord(n, 'END'));
  const head = s.slice(s.indexOf(sig[k]!), beginAt);
  const whenAt = head.findIndex((n) => isWord(n, 'WHEN'));
  const event = (whenAt >= 0 ? head.slice(0, whenAt) : head).filter((n) => !isWord(n, 'FOR', 'EACH', 'ROW'));
  const timing = (event.find(significant) as Tok).v.toUpperCase();
  if (timing === 'INSTEAD') throw new Error('INSTEAD OF triggers are not translated');
  const cond = whenAt >= 0 ? translateExpr(trimmed(head.slice(whenAt + 1))) : undefined;
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
    const kind = render(args[0]!).toUpperCase();
    if (kind === 'IGNORE') return 'RETURN NULL';
    return `RAISE EXCEPTION '%', ${render(args[1]!)}`;
  }
  const sql = toPostgres(render(st));
  return isWord(sig[0], 'SELECT') ? sql.replace(/^\s*SELECT\b/i, 'PERFORM') : sql;
}
