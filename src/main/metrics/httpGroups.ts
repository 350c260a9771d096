import { API_BASES, type ApiName, type RouteDef } from '../api/registry';

export interface HttpGroup {
  api: ApiName | 'root';
  group: string;
}

/**
 * The label a request's path is counted under: its API and the first segment of the route (`/edge/management/v1/
 * identities/x/policy-advice` → management, identities; `/oidc/token` → root, oidc). Only segments some route has
 * become labels (everything else is `other`), so no request can grow the number of series.
 */
export function httpGroups(routes: readonly RouteDef[], rootPaths: readonly string[]): (url: string) => HttpGroup {
  const known = new Map<string, Set<string>>();
  const add = (api: string, path: string) => {
    let set = known.get(api);
    if (!set) known.set(api, (set = new Set()));
    set.add(firstSegment(path));
  };
  for (const r of routes) for (const api of r.apis) add(api, r.path);
  for (const p of rootPaths) add('root', p);
  const bases = Object.entries(API_BASES) as Array<[ApiName, string]>;
  const cache = new Map<string, HttpGroup>();
  return (url) => {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    let api: HttpGroup['api'] = 'root';
    let rest = path;
    for (const [name, base] of bases) {
      if (path === base || path.startsWith(base + '/')) {
        api = name;
        rest = path.slice(base.length);
        break;
      }
    }
    const segment = firstSegment(rest);
    const key = `${api} ${segment}`;
    let hit = cache.get(key);
    if (!hit) {
      hit = { api, group: known.get(api)?.has(segment) ? segment || '/' : 'other' };
      if (cache.size < 1000) cache.set(key, hit);
    }
    return hit;
  };
}

function firstSegment(path: string): string {
  const s = path.startsWith('/') ? path.slice(1) : path;
  const i = s.indexOf('/');
  return i < 0 ? s : s.slice(0, i);
}
