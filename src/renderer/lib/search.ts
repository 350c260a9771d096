import { zitiString } from '../../shared/console';

const LOOKS_LIKE_ZITIQL = /["'=<>!()[\]]|\b(contains|icontains|in|between|and|or|not|sort|skip|limit|true|false|null|isempty|anyof|allof|count)\b/i;

/**
 * What the filter box sends: ZitiQL as typed, or — for plain words such as `web` — a case-insensitive name search
 * (`name icontains "web"`), so the box works as a quick search too.
 */
export function toFilter(text: string, filterable: readonly string[] | undefined): string | undefined {
  const t = text.trim();
  if (!t) return undefined;
  if (LOOKS_LIKE_ZITIQL.test(t) || filterable?.includes(t)) return t;
  if (!filterable || filterable.includes('name')) return `name icontains ${zitiString(t)}`;
  return t;
}
