/** Reads a dotted path ("primary.updb.allowed") of a nested value. */
export function getPath(value: unknown, path: string): unknown {
  let v = value;
  for (const key of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** A copy of `value` with the dotted path set (undefined removes the key); arrays stay arrays. */
export function setPath<T>(value: T, path: string, next: unknown): T {
  const [key, ...rest] = path.split('.');
  const base: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...((value ?? {}) as Record<string, unknown>) };
  const child = rest.length ? setPath((base as Record<string, unknown>)[key!], rest.join('.'), next) : next;
  if (child === undefined && !Array.isArray(base)) delete (base as Record<string, unknown>)[key!];
  else (base as Record<string, unknown>)[key!] = child;
  return base as T;
}
