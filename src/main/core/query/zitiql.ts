/**
 * ZitiQL lexer and parser, following OpenZiti's grammar (openziti/storage zitiql/ZitiQl.g4) and the way its
 * generated ANTLR parser actually groups expressions:
 *
 *   query    := boolExpr? sortBy? skip? limit?            (in this order; at least one part unless blank)
 *   boolExpr := unary ((AND | OR) boolExpr)?             and/or share one precedence and nest to the RIGHT:
 *                                                         `a and b or c` is `a and (b or c)` in OpenZiti too
 *   unary    := NOT boolExpr                             `not` reaches to the end: `not a and b` = `not (a and b)`
 *             | '(' boolExpr ')' | true | false | isEmpty(ident) | operation | ident (a boolean field)
 *   operation:= lhs (= | !=) (string | number | datetime | bool | null)
 *             | lhs (< | <= | > | >=) (string | number | datetime)
 *             | lhs [not] (in) [strings] | [numbers] | [datetimes]       (non-empty, one kind)
 *             | lhs [not] between (number and number | datetime and datetime)
 *             | lhs [not] contains (string | number) | lhs [not] icontains string
 *   lhs      := ident | anyOf(ident) | allOf(ident) | count(ident)
 *   sortBy   := sort by ident [asc|desc] (, ident [asc|desc])*
 *   skip     := skip N            limit := limit (N | none)
 *
 * Keywords are case-insensitive. Identifiers are letters/`_` with dotted segments that may also hold `-`
 * (digits are accepted too, which OpenZiti's lexer does not allow), optionally 'single-quoted'.
 */

export class QueryError extends Error {
  constructor(
    message: string,
    /** 0-based character offset in the filter, when the error has a place */
    readonly position?: number,
  ) {
    super(position === undefined ? message : `${message} at position ${position}`);
    this.name = 'QueryError';
  }
}

export type Literal =
  | { kind: 'string'; value: string; pos: number }
  | { kind: 'number'; value: number; text: string; pos: number }
  | { kind: 'bool'; value: boolean; pos: number }
  /** value is normalised to UTC with milliseconds: 2026-01-02T03:04:05.000Z */
  | { kind: 'datetime'; value: string; pos: number }
  | { kind: 'null'; pos: number };

export type SetFunction = 'anyOf' | 'allOf' | 'count';
export type Operand = { kind: 'field'; name: string; pos: number } | { kind: 'setFn'; fn: SetFunction; field: string; pos: number };

export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=' | 'contains' | 'not contains' | 'icontains' | 'not icontains';

/** `not in` / `not between` parse as `not` around `in` / `between`, as OpenZiti does (this matters for set functions). */
export type BoolExpr =
  | { kind: 'and' | 'or'; left: BoolExpr; right: BoolExpr }
  | { kind: 'not'; expr: BoolExpr }
  | { kind: 'const'; value: boolean }
  | { kind: 'symbol'; name: string; pos: number }
  | { kind: 'isEmpty'; field: string; pos: number }
  | { kind: 'compare'; lhs: Operand; op: CompareOp; value: Literal }
  | { kind: 'in'; lhs: Operand; values: Literal[] }
  | { kind: 'between'; lhs: Operand; lower: Literal; upper: Literal };

export interface SortField {
  field: string;
  dir: 'ASC' | 'DESC';
  pos: number;
}

export interface ParsedQuery {
  filter?: BoolExpr;
  sort: SortField[];
  skip?: number;
  limit?: number | 'none';
}

// ---- lexer ----------------------------------------------------------------------------------------

type TokenKind = 'word' | 'ident' | 'string' | 'number' | 'datetime' | 'op' | 'punct' | 'eof';
interface Token {
  kind: TokenKind;
  /** source text; for 'word' lower-cased, for 'ident' without quotes, for 'string' the unescaped value */
  text: string;
  pos: number;
  /** whitespace precedes the token */
  spaced: boolean;
  datetime?: string;
}

const KEYWORDS = new Set([
  'and',
  'or',
  'not',
  'in',
  'between',
  'contains',
  'icontains',
  'true',
  'false',
  'null',
  'asc',
  'desc',
  'sort',
  'by',
  'skip',
  'limit',
  'none',
  'where',
  'from',
  'allof',
  'anyof',
  'count',
  'isempty',
]);
const IDENT_RE = /[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_-]*)*/y;
const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?(?:0|[1-9][0-9]*))?/y;
const DATETIME_RE = /\(\s*(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))\s*\)/y;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', f: '\f', n: '\n', r: '\r', t: '\t' };
const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

function sticky(re: RegExp, src: string, at: number): RegExpExecArray | null {
  re.lastIndex = at;
  return re.exec(src);
}

function lex(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (true) {
    const start = i;
    while (i < src.length && isSpace(src[i])) i++;
    const spaced = i > start;
    const pos = i;
    if (i >= src.length) {
      tokens.push({ kind: 'eof', text: '', pos, spaced });
      return tokens;
    }
    const c = src[i];
    let m: RegExpExecArray | null;
    if (c === '"') {
      let value = '';
      i++;
      for (;;) {
        if (i >= src.length) throw new QueryError('unterminated string', pos);
        const ch = src[i];
        if (ch === '"') break;
        if (ch === '\\') {
          const e = ESCAPES[src[i + 1]];
          if (e === undefined) throw new QueryError(`invalid escape sequence in string (allowed: \\" \\\\ \\f \\n \\r \\t)`, i);
          value += e;
          i += 2;
        } else if (ch.charCodeAt(0) < 0x20) {
          throw new QueryError('control character in string (use \\n, \\t, ...)', i);
        } else {
          value += ch;
          i++;
        }
      }
      i++;
      tokens.push({ kind: 'string', text: value, pos, spaced });
    } else if (c === "'") {
      m = sticky(IDENT_RE, src, i + 1);
      if (!m || src[i + 1 + m[0].length] !== "'") throw new QueryError('malformed quoted identifier', pos);
      i += m[0].length + 2;
      tokens.push({ kind: 'ident', text: m[0], pos, spaced });
    } else if ((m = sticky(IDENT_RE, src, i))) {
      const word = m[0];
      i += word.length;
      if (word.toLowerCase() === 'datetime' && src[i] === '(') {
        const d = sticky(DATETIME_RE, src, i);
        if (!d) throw new QueryError('malformed datetime, expected datetime(<RFC3339 date-time>)', pos);
        i += d[0].length;
        tokens.push({ kind: 'datetime', text: src.slice(pos, i), pos, spaced, datetime: normaliseDatetime(d, pos) });
      } else if (KEYWORDS.has(word.toLowerCase())) {
        tokens.push({ kind: 'word', text: word.toLowerCase(), pos, spaced });
      } else {
        tokens.push({ kind: 'ident', text: word, pos, spaced });
      }
    } else if ((m = sticky(NUMBER_RE, src, i))) {
      i += m[0].length;
      tokens.push({ kind: 'number', text: m[0], pos, spaced });
    } else if (c === '<' || c === '>' || c === '=' || (c === '!' && src[i + 1] === '=')) {
      const op = c === '!' || src[i + 1] === '=' ? (c === '=' ? '=' : c + '=') : c;
      i += op.length;
      tokens.push({ kind: 'op', text: op, pos, spaced });
    } else if ('()[],'.includes(c)) {
      i++;
      tokens.push({ kind: 'punct', text: c, pos, spaced });
    } else {
      throw new QueryError(`unexpected character ${JSON.stringify(c)}`, pos);
    }
    // As in OpenZiti, words and values must be separated by whitespace from a preceding value or `)`/`]`:
    // `a = 1and b = 2` and `...)sort by x` are errors.
    const prev = tokens[tokens.length - 2];
    const cur = tokens[tokens.length - 1];
    if (prev && !cur.spaced && isValueLike(cur) && (isValueLike(prev) || prev.text === ')' || prev.text === ']')) {
      throw new QueryError(`missing whitespace before ${JSON.stringify(src.slice(cur.pos, i))}`, cur.pos);
    }
  }
}

const isValueLike = (t: Token) => t.kind !== 'op' && t.kind !== 'punct' && t.kind !== 'eof';

function normaliseDatetime(d: RegExpExecArray, pos: number): string {
  const [, y, mo, da, h, mi, s, frac, z, sign, oh, om] = d;
  const n = (x: string) => Number(x);
  const bad = () => new QueryError('invalid datetime value', pos);
  if (n(mo) < 1 || n(mo) > 12 || n(da) < 1 || n(h) > 23 || n(mi) > 59 || n(s) > 59) throw bad();
  if (!z && (n(oh) > 23 || n(om) > 59)) throw bad();
  const date = new Date(0);
  date.setUTCFullYear(n(y), n(mo) - 1, n(da));
  if (date.getUTCMonth() !== n(mo) - 1) throw bad(); // e.g. February 30th
  // Stored datetimes have millisecond precision, so finer fractions are truncated.
  const ms = frac ? n(frac.slice(0, 3).padEnd(3, '0')) : 0;
  const offsetMinutes = z ? 0 : (sign === '-' ? -1 : 1) * (n(oh) * 60 + n(om));
  date.setUTCHours(n(h), n(mi) - offsetMinutes, n(s), ms);
  const year = date.getUTCFullYear();
  if (year < 0 || year > 9999) throw bad();
  return date.toISOString();
}

// ---- parser ---------------------------------------------------------------------------------------

/**
 * How deeply a filter may nest (parentheses, `not`, and changes between `and` and `or` in a chain). Long chains of
 * one operator are fine (`a or b or ...` with thousands of terms); the limit keeps parsing, compiling and SQLite's
 * expression depth bounded for hostile filters.
 */
export const MAX_NESTING = 100;

/** Parses a ZitiQL query. A blank string yields an empty query. Throws QueryError. */
export function parseZitiQl(src: string): ParsedQuery {
  return new Parser(lex(src)).query();
}

class Parser {
  private i = 0;
  private depth = 0;
  /** nesting height of the and/or/not nodes built so far (a chain of one operator counts once) */
  private readonly heights = new WeakMap<BoolExpr, number>();
  constructor(private readonly tokens: Token[]) {}

  private get tok(): Token {
    return this.tokens[this.i];
  }
  private next(): Token {
    return this.tokens[this.i++];
  }
  private isWord(...words: string[]): boolean {
    return this.tok.kind === 'word' && words.includes(this.tok.text);
  }
  private atEnd(): boolean {
    return this.tok.kind === 'eof';
  }
  private isPunct(p: string): boolean {
    return this.tok.kind === 'punct' && this.tok.text === p;
  }
  private fail(expected: string, t: Token = this.tok): never {
    const found = t.kind === 'eof' ? 'end of filter' : t.kind === 'string' ? 'string' : JSON.stringify(t.text);
    throw new QueryError(`expected ${expected} but found ${found}`, t.pos);
  }
  private expectWord(w: string): void {
    if (!this.isWord(w)) this.fail(`"${w}"`);
    this.i++;
  }
  private expectPunct(p: string): void {
    if (!this.isPunct(p)) this.fail(`"${p}"`);
    this.i++;
  }
  private ident(what = 'a field name'): Token {
    if (this.tok.kind !== 'ident') this.fail(what);
    return this.next();
  }

  query(): ParsedQuery {
    const q: ParsedQuery = { sort: [] };
    if (this.atEnd()) return q;
    if (!this.isWord('sort', 'skip', 'limit')) q.filter = this.boolExpr();
    if (this.isWord('sort')) {
      this.next();
      this.expectWord('by');
      do {
        const f = this.ident('a field name to sort by');
        let dir: 'ASC' | 'DESC' = 'ASC';
        if (this.isWord('asc', 'desc')) dir = this.next().text === 'desc' ? 'DESC' : 'ASC';
        q.sort.push({ field: f.text, dir, pos: f.pos });
      } while (this.isPunct(',') && this.next());
    }
    if (this.isWord('skip')) {
      this.next();
      q.skip = this.count('skip');
    }
    if (this.isWord('limit')) {
      this.next();
      if (this.isWord('none')) {
        this.next();
        q.limit = 'none';
      } else if (this.tok.kind === 'number' && this.tok.text === '-1') {
        this.next();
        q.limit = 'none'; // OpenZiti's own encoding of `limit none`
      } else {
        q.limit = this.count('limit');
      }
    }
    if (!this.atEnd()) {
      this.fail(q.filter || q.sort.length || q.skip !== undefined || q.limit !== undefined ? 'end of filter' : 'a condition');
    }
    return q;
  }

  private count(what: string): number {
    const t = this.tok;
    if (t.kind !== 'number') this.fail(`a number after ${what}`);
    const n = Number(t.text);
    if (!Number.isSafeInteger(n) || n < 0) throw new QueryError(`${what} must be a non-negative integer`, t.pos);
    this.next();
    return n;
  }

  /** A chain of unary terms joined by and/or, nested to the right (built in a loop: chains may be long). */
  private boolExpr(): BoolExpr {
    const terms = [this.unary()];
    const ops: Array<{ kind: 'and' | 'or'; pos: number }> = [];
    while (this.isWord('and', 'or')) {
      const t = this.next();
      ops.push({ kind: t.text as 'and' | 'or', pos: t.pos });
      terms.push(this.unary());
    }
    let e = terms[terms.length - 1]!;
    for (let k = ops.length - 1; k >= 0; k--) {
      const { kind, pos } = ops[k]!;
      const right = e;
      e = { kind, left: terms[k]!, right };
      this.measure(e, Math.max(this.height(terms[k]!) + 1, this.height(right) + (right.kind === kind ? 0 : 1)), pos);
    }
    return e;
  }

  private height(e: BoolExpr): number {
    return this.heights.get(e) ?? 1;
  }

  private measure(e: BoolExpr, height: number, pos: number): BoolExpr {
    if (height > MAX_NESTING) throw new QueryError(`the filter nests more than ${MAX_NESTING} levels deep`, pos);
    this.heights.set(e, height);
    return e;
  }

  /** Parses a nested part (after `not` or `(`) one level deeper. */
  private nested(pos: number): BoolExpr {
    if (++this.depth > MAX_NESTING) throw new QueryError(`the filter nests more than ${MAX_NESTING} levels deep`, pos);
    const e = this.boolExpr();
    this.depth--;
    return e;
  }

  private unary(): BoolExpr {
    const t = this.tok;
    if (this.isWord('not')) {
      this.next();
      const expr = this.nested(t.pos);
      return this.measure({ kind: 'not', expr }, this.height(expr) + 1, t.pos);
    }
    if (this.isPunct('(')) {
      this.next();
      const e = this.nested(t.pos);
      this.expectPunct(')');
      return e;
    }
    if (this.isWord('true', 'false')) {
      this.next();
      return { kind: 'const', value: t.text === 'true' };
    }
    if (this.isWord('isempty')) {
      this.next();
      return { kind: 'isEmpty', field: this.setArg(), pos: t.pos };
    }
    let lhs: Operand;
    if (this.isWord('anyof', 'allof', 'count')) {
      this.next();
      const fn = ({ anyof: 'anyOf', allof: 'allOf', count: 'count' } as const)[t.text as 'anyof' | 'allof' | 'count'];
      lhs = { kind: 'setFn', fn, field: this.setArg(), pos: t.pos };
    } else if (t.kind === 'ident') {
      this.next();
      lhs = { kind: 'field', name: t.text, pos: t.pos };
      if (!this.startsOperator()) return { kind: 'symbol', name: t.text, pos: t.pos };
    } else {
      this.fail('a condition');
    }
    return this.operation(lhs);
  }

  private setArg(): string {
    this.expectPunct('(');
    if (this.isWord('from')) throw new QueryError('sub-queries (from ... where ...) are not supported', this.tok.pos);
    const f = this.ident('a set field name');
    this.expectPunct(')');
    return f.text;
  }

  private startsOperator(): boolean {
    return this.tok.kind === 'op' || this.isWord('in', 'between', 'contains', 'icontains', 'not');
  }

  private operation(lhs: Operand): BoolExpr {
    const t = this.tok;
    if (t.kind === 'op') {
      this.next();
      const op = t.text as CompareOp;
      const allowed = op === '=' || op === '!=' ? ['string', 'number', 'datetime', 'bool', 'null'] : ['string', 'number', 'datetime'];
      return { kind: 'compare', lhs, op, value: this.literal(allowed, `a value after ${op}`) };
    }
    let negated = false;
    if (this.isWord('not')) {
      this.next();
      negated = true;
      if (!this.isWord('in', 'between', 'contains', 'icontains')) this.fail('in, between, contains or icontains after not');
    }
    const word = this.next().text;
    if (word === 'contains' || word === 'icontains') {
      const value = this.literal(word === 'contains' ? ['string', 'number'] : ['string'], `a value after ${word}`);
      return { kind: 'compare', lhs, op: ((negated ? 'not ' : '') + word) as CompareOp, value };
    }
    let e: BoolExpr;
    if (word === 'in') {
      this.expectPunct('[');
      const first = this.literal(['string', 'number', 'datetime'], 'a string, number or datetime in the list');
      const values = [first];
      while (this.isPunct(',')) {
        this.next();
        values.push(this.literal([first.kind], `another ${first.kind} in the list (lists hold one kind of value)`));
      }
      this.expectPunct(']');
      e = { kind: 'in', lhs, values };
    } else if (word === 'between') {
      const lower = this.literal(['number', 'datetime'], 'a number or datetime after between');
      this.expectWord('and');
      const upper = this.literal([lower.kind], `a ${lower.kind} as upper bound of between`);
      e = { kind: 'between', lhs, lower, upper };
    } else {
      this.fail('an operator', t);
    }
    return negated ? { kind: 'not', expr: e } : e;
  }

  private literal(kinds: string[], expected: string): Literal {
    const t = this.tok;
    let lit: Literal | undefined;
    if (t.kind === 'string') lit = { kind: 'string', value: t.text, pos: t.pos };
    else if (t.kind === 'number') {
      lit = { kind: 'number', value: Number(t.text), text: t.text, pos: t.pos };
      if (!Number.isFinite(lit.value)) throw new QueryError('number out of range', t.pos);
    } else if (t.kind === 'datetime') lit = { kind: 'datetime', value: t.datetime!, pos: t.pos };
    else if (this.isWord('true', 'false')) lit = { kind: 'bool', value: t.text === 'true', pos: t.pos };
    else if (this.isWord('null')) lit = { kind: 'null', pos: t.pos };
    if (!lit || !kinds.includes(lit.kind)) this.fail(expected);
    this.next();
    return lit;
  }
}
