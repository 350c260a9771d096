import type { ShareOAuth } from './types';

// Path rules of a share: regular expressions of paths that skip the login (`skipPaths`) and of paths with a stricter
// rule (`pathRules`). Both match the whole path (they are anchored as ^(?:…)$), never the query.
//
// The backend may read a path differently from the frontend: decode %2F into "/", treat "\" as "/", collapse "//",
// resolve "..", strip ";params" (Tomcat), decode twice, ignore case or trailing dots (Windows). A rule is applied so
// that no such reading can turn it against the share:
// - a skip rule applies only to a path in canonical form — its percent-decoded text has no "\", ";", "%", control
//   character, empty, "." or ".." segment or segment ending in "." or " ", and it has no encoded "/" or "\" — and
//   only when its (case-sensitive) expression matches that decoded path. Any other path needs the login;
// - a stricter rule applies when its expression matches any reading of the path (decoded, with "\" and %2F/%5C as
//   "/", or with them kept; with and without ";params"; decoded twice; with trailing dots and spaces of segments
//   removed; "//" collapsed and dot segments resolved in each), case-insensitively, "." matching newlines too.
// Paths that are not valid percent-encoding (or hold NUL) are refused (400) on shares with path rules; paths over
// MAX_PATH characters get 414.

export const MAX_PATH = 2048;
const MAX_PATTERN = 1000;

/** Throws a human message when `source` cannot be a path rule. */
export function checkPathPattern(source: string): void {
  if (typeof source !== 'string' || source === '') throw new Error('the regular expression must not be empty');
  if (source.length > MAX_PATTERN) throw new Error(`the regular expression is longer than ${MAX_PATTERN} characters`);
  try {
    new RegExp(anchored(source), 's');
  } catch (err) {
    throw new Error(
      `"${source}" is not a valid regular expression: ${(err as Error).message.replace(/^Invalid regular expression: \/.*\/\w*: /, '')}`,
      {
        cause: err,
      },
    );
  }
  const nested = nestedQuantifier(source);
  if (nested) throw new Error(`"${source}" repeats a group that itself repeats (${nested}), which can take exponential time on a hostile path`);
}

const anchored = (source: string) => `^(?:${source})$`;

/**
 * The first group that is repeated without bound while it contains an unbounded repetition (`(a+)+`, `(\w+-?)*`),
 * the shape of catastrophic backtracking; undefined when there is none.
 */
function nestedQuantifier(source: string): string | undefined {
  const stack: Array<{ start: number; inner: boolean }> = [{ start: 0, inner: false }];
  let i = 0;
  const unboundedAt = (j: number): number => {
    // length of an unbounded quantifier at j (0: none, -1: bounded)
    const c = source[j];
    if (c === '*' || c === '+') return 1;
    if (c === '?') return -1;
    if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(j));
      if (!m) return 0;
      return m[2] !== undefined && (m[3] === '' || Number(m[3]) > 1) ? m[0].length : -1;
    }
    return 0;
  };
  while (i < source.length) {
    const c = source[i];
    if (c === '\\') {
      i += 2;
    } else if (c === '[') {
      i++;
      if (source[i] === '^') i++;
      while (i < source.length && source[i] !== ']') i += source[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '(') {
      stack.push({ start: i, inner: false });
      i++;
      continue;
    } else if (c === ')') {
      const group = stack.length > 1 ? stack.pop()! : { start: 0, inner: false };
      i++;
      const q = unboundedAt(i);
      if (q > 0 && group.inner) return source.slice(group.start, i + q);
      if (group.inner || q > 0) stack[stack.length - 1]!.inner = true;
      continue;
    } else {
      i++;
    }
    // a quantifier after an atom
    if (unboundedAt(i) > 0) stack[stack.length - 1]!.inner = true;
  }
  return undefined;
}

export interface CompiledPathRules {
  skip: RegExp[];
  strict: RegExp[];
}

const compiled = new WeakMap<ShareOAuth, CompiledPathRules>();
const byText = new Map<string, CompiledPathRules>();

/** The share's expressions, compiled once (invalid ones, which validation keeps out, never match). */
export function compilePathRules(oauth: ShareOAuth): CompiledPathRules {
  let rules = compiled.get(oauth);
  if (rules) return rules;
  const key = JSON.stringify([oauth.skipPaths ?? [], (oauth.pathRules ?? []).map((r) => r.path)]);
  rules = byText.get(key);
  if (!rules) {
    const compile = (source: string, flags: string) => {
      try {
        return new RegExp(anchored(source), flags);
      } catch {
        return /(?!)/;
      }
    };
    rules = { skip: (oauth.skipPaths ?? []).map((s) => compile(s, '')), strict: (oauth.pathRules ?? []).map((r) => compile(r.path, 'is')) };
    if (byText.size > 1000) byText.clear();
    byText.set(key, rules);
  }
  compiled.set(oauth, rules);
  return rules;
}

export type PathReading = { ok: false; status: 400 | 414 } | { ok: true; canonical?: string; views: string[] };

/** The readings of a request path (no query) that rules are matched against; see the top of this file. */
export function readPath(path: string): PathReading {
  if (path.length > MAX_PATH) return { ok: false, status: 414 };
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return { ok: false, status: 400 };
  }
  if (decoded.includes('\0')) return { ok: false, status: 400 };
  const views = new Set<string>();
  const add = (p: string) => {
    const n = normalise(p.replace(/\\/g, '/'));
    views.add(n);
    views.add(normalise(trimSegmentEnds(n)));
  };
  add(decoded);
  add(stripParams(decoded));
  const keptSlashes = decodeURIComponent(path.replace(/%2f/gi, '\u0001').replace(/%5c/gi, '\u0002'))
    .replace(/\u0001/g, '%2F')
    .replace(/\u0002/g, '%5C');
  add(keptSlashes);
  add(stripParams(keptSlashes));
  if (/%[0-9a-f]{2}/i.test(decoded)) {
    try {
      const twice = decodeURIComponent(decoded);
      add(twice);
      add(stripParams(twice));
    } catch {
      // not decodable twice: no such reading
    }
  }
  const canonical =
    !/[\\;%\u0000-\u001f\u007f]/.test(decoded) && !/%2f|%5c/i.test(path) && decoded.startsWith('/') && isNormal(decoded) ? decoded : undefined;
  return { ok: true, canonical, views: [...views] };
}

/** Whether a skip rule lets this path through without a login. */
export function isSkipped(rules: CompiledPathRules, reading: PathReading & { ok: true }): boolean {
  return reading.canonical !== undefined && rules.skip.some((re) => re.test(reading.canonical!));
}

/** Indices of the stricter rules that apply to this path. */
export function strictRulesFor(rules: CompiledPathRules, reading: PathReading & { ok: true }): number[] {
  const out: number[] = [];
  rules.strict.forEach((re, i) => {
    if (reading.views.some((v) => re.test(v))) out.push(i);
  });
  return out;
}

/** "//" collapsed, "." and ".." resolved (never above the root); a trailing "/" kept. */
export function normalise(path: string): string {
  const parts = path.split('/');
  const out: string[] = [];
  let trailing = false;
  for (let i = 0; i < parts.length; i++) {
    const seg = parts[i]!;
    const last = i === parts.length - 1;
    if (seg === '' || seg === '.') {
      if (last && i > 0) trailing = true;
      continue;
    }
    if (seg === '..') {
      out.pop();
      if (last) trailing = true;
      continue;
    }
    out.push(seg);
  }
  return `/${out.join('/')}${trailing && out.length ? '/' : ''}`;
}

function isNormal(decoded: string): boolean {
  const segments = decoded.slice(1).split('/');
  return segments.every((s, i) => (s === '' ? i === segments.length - 1 : s !== '.' && s !== '..' && !/[. ]$/.test(s)));
}

const stripParams = (p: string) => p.replace(/;[^/\\]*/g, '');
const trimSegmentEnds = (p: string) =>
  p
    .split('/')
    .map((s) => (s === '.' || s === '..' ? s : s.replace(/[. ]+$/, '')))
    .join('/');
