import { zitiString } from '../../shared/console';

const LOOKS_LIKE_ZITIQL = /["'=<>!()[\]]|\b(contains|icontains|in|between|and|or|not|sort|skip|limit|true|false|null|isempty|anyof|allof|count)\b/i;
const ATTRIBUTES = /^#[^\s#"\\]+(\s+#[^\s#"\\]+)*$/;

/**
 * What the filter box sends: ZitiQL as typed; `#attr` (or `#a #b`) for the rows holding those role attributes, where the
 * type has them; or — for plain words such as `web` — a case-insensitive name search (`name icontains "web"`), which
 * also finds rows with the role attribute `web` where the type has them, so the box works as a quick search too.
 */
export function toFilter(text: string, filterable: readonly string[] | undefined): string | undefined {
  const t = text.trim();
  if (!t) return undefined;
  const attributes = !!filterable?.includes('roleAttributes');
  const hasAttribute = (a: string) => `anyOf(roleAttributes) = ${zitiString(a)}`;
  if (attributes && ATTRIBUTES.test(t)) {
    return t
      .split(/\s+/)
      .map((w) => hasAttribute(w.slice(1)))
      .join(' and ');
  }
  if (LOOKS_LIKE_ZITIQL.test(t) || filterable?.includes(t)) return t;
  if (!filterable || filterable.includes('name')) {
    const byName = `name icontains ${zitiString(t)}`;
    return attributes ? `(${byName} or ${hasAttribute(t)})` : byName;
  }
  return t;
}
