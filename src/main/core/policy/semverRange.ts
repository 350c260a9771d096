/**
 * Semantic-version ranges as OpenZiti's OS posture checks write them (blang/semver): comparators `<`, `<=`, `>`,
 * `>=`, `=`, `==`, `!`, `!=` before a version; space means AND, `||` means OR. Missing minor/patch count as 0;
 * pre-release and build suffixes are ignored.
 */
type Version = [number, number, number];

export function parseVersion(v: string): Version | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+].*)?$/.exec(v.trim());
  return m ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] : undefined;
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

const COMPARATOR = /^(<=|>=|==|!=|<|>|=|!)?\s*(.+)$/;

/** Whether `version` satisfies `range`; an unparsable range or version never matches. */
export function satisfies(version: string, range: string): boolean {
  const v = parseVersion(version);
  if (!v) return false;
  return range.split('||').some((alternative) => {
    const terms = alternative.trim().split(/\s+/).filter(Boolean);
    if (!terms.length) return false;
    return terms.every((term) => {
      const m = COMPARATOR.exec(term);
      const bound = m && parseVersion(m[2]!);
      if (!bound) return false;
      const c = compare(v, bound);
      switch (m[1]) {
        case '<':
          return c < 0;
        case '<=':
          return c <= 0;
        case '>':
          return c > 0;
        case '>=':
          return c >= 0;
        case '!':
        case '!=':
          return c !== 0;
        default:
          return c === 0;
      }
    });
  });
}
