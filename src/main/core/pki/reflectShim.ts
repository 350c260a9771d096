// @peculiar/x509 uses tsyringe internally, and tsyringe refuses to load unless a Reflect metadata API exists.
// No polyfill package is installed, and x509 never emits decorator metadata, so this minimal store (just the
// calls tsyringe makes) is enough. It is installed once and only if nothing else provided the API; a real
// polyfill loaded later simply replaces it.
type Store = WeakMap<object, Map<unknown, unknown>>;

const reflect = Reflect as typeof Reflect & { getMetadata?: unknown };
if (typeof reflect.getMetadata !== 'function') {
  const store: Store = new WeakMap();
  Object.assign(Reflect, {
    defineMetadata(key: unknown, value: unknown, target: object): void {
      let entries = store.get(target);
      if (!entries) store.set(target, (entries = new Map()));
      entries.set(key, value);
    },
    getOwnMetadata(key: unknown, target: object): unknown {
      return store.get(target)?.get(key);
    },
    getMetadata(key: unknown, target: object | null): unknown {
      for (let t = target; t; t = Object.getPrototypeOf(t) as object | null) {
        const value = store.get(t)?.get(key);
        if (value !== undefined) return value;
      }
      return undefined;
    },
  });
}

export {};
