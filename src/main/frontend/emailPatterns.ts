import picomatch from 'picomatch';

const GLOB_OPTIONS = { nocase: true, dot: true } as const;

/** Throws a human message when a pattern cannot sensibly match email addresses. */
export function checkEmailPattern(pattern: string): void {
  if (typeof pattern !== 'string' || pattern.trim() === '') throw new Error('email address pattern must not be empty');
  if (pattern.length > 320) throw new Error(`email address pattern "${pattern.slice(0, 40)}…" is too long`);
  if (/[\s\u0000-\u001f\u007f]/.test(pattern)) throw new Error(`email address pattern "${pattern}" must not contain spaces or control characters`);
  if (!pattern.includes('@')) {
    throw new Error(`email address pattern "${pattern}" has no "@"; patterns match whole addresses (did you mean "*@${pattern}"?)`);
  }
  try {
    picomatch.makeRe(pattern, GLOB_OPTIONS);
  } catch (err) {
    throw new Error(`email address pattern "${pattern}" is not a valid glob: ${(err as Error).message}`, { cause: err });
  }
}

export type EmailMatcher = (email: string) => boolean;

/** Case-insensitive glob matching; an empty pattern list accepts any (verified) address. */
export function compileEmailMatcher(patterns: readonly string[]): EmailMatcher {
  if (patterns.length === 0) return () => true;
  const matchers = patterns.map((p) => picomatch(p, GLOB_OPTIONS));
  return (email) => matchers.some((m) => m(email));
}

/** Per-frontend cache so hot requests do not recompile globs. */
export class EmailMatcherCache {
  private readonly cache = new Map<string, EmailMatcher>();
  // Shares usually arrive as the same objects request after request: skip even building the key.
  private readonly byList = new WeakMap<readonly string[], EmailMatcher>();

  matches(patterns: readonly string[], email: string): boolean {
    let matcher = this.byList.get(patterns);
    if (!matcher) {
      const key = JSON.stringify(patterns);
      matcher = this.cache.get(key);
      if (!matcher) {
        if (this.cache.size > 1000) this.cache.clear();
        matcher = compileEmailMatcher(patterns);
        this.cache.set(key, matcher);
      }
      this.byList.set(patterns, matcher);
    }
    return matcher(email);
  }
}
