/** The facts of `policyAdvice` that the explanation needs. */
export interface AdviceFacts {
  identity: { name?: string };
  service: { name?: string };
  isDialAllowed: boolean;
  isBindAllowed: boolean;
  identityRouterCount: number;
  serviceRouterCount: number;
  commonRouters: Array<{ name?: string; isOnline: boolean }>;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const list = (names: string[]) => (names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`);

/** One plain sentence: why the identity can reach the service, or what is missing. */
export function adviceSentence(a: AdviceFacts): string {
  const who = `Identity "${a.identity.name ?? '?'}"`;
  const what = `service "${a.service.name ?? '?'}"`;
  if (!a.isDialAllowed && !a.isBindAllowed) {
    const grant = `${who} can neither dial nor bind ${what}: no service policy grants it.`;
    // a grant alone would fix half when the edge router link is missing too
    if (!a.commonRouters.length) {
      return `${grant} Nor do they have an edge router in common: add a Dial or Bind service policy matching both, and an edge router both may use (through an edge router policy for the identity and a service edge router policy for the service).`;
    }
    return `${grant} Add a Dial or Bind service policy whose identity roles match the identity and whose service roles match the service.`;
  }
  const access = a.isDialAllowed && a.isBindAllowed ? 'dial and bind' : a.isDialAllowed ? 'dial' : 'bind';
  const allowed = `${who} may ${access} ${what}`;
  const noIdentityRouters = a.identityRouterCount === 0;
  const noServiceRouters = a.serviceRouterCount === 0;
  if (noIdentityRouters && noServiceRouters) {
    return `${allowed}, but no edge router policy gives the identity an edge router and no service edge router policy lets the service use one. Add both, matching at least one common edge router.`;
  }
  if (noIdentityRouters)
    return `${allowed}, but no edge router policy gives the identity any edge router. Add an edge router policy whose identity roles match it.`;
  if (noServiceRouters) {
    return `${allowed}, but no service edge router policy lets the service use any edge router. Add a service edge router policy whose service roles match it.`;
  }
  const common = a.commonRouters;
  if (!common.length) {
    return `${allowed}, but the ${plural(a.identityRouterCount, 'edge router')} the identity may use and the ${plural(a.serviceRouterCount, 'edge router')} the service may use have none in common. Make one edge router match an edge router policy of the identity and a service edge router policy of the service.`;
  }
  const names = common.map((r) => r.name ?? '?');
  if (!common.some((r) => r.isOnline))
    return `${allowed} through ${plural(common.length, 'common edge router')} (${list(names)}), but none of them is online.`;
  const can = a.isDialAllowed && a.isBindAllowed ? 'dial and bind' : a.isDialAllowed ? 'dial' : 'bind';
  return `${who} can ${can} ${what} through ${list(common.map((r) => `${r.name ?? '?'} (${r.isOnline ? 'online' : 'offline'})`))}.`;
}
