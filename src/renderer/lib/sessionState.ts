import { useCallback, useState } from 'react';

/**
 * State that survives leaving the page and coming back (and a reload) in this browser tab: kept in sessionStorage
 * under `weft.<key>`, as JSON. Storage that is full or unavailable only loses the copy, never the state itself.
 */
export function useSessionState<T>(key: string, initial: T): [T, (next: T) => void] {
  const storageKey = `weft.${key}`;
  const [value, setValue] = useState<T>(() => {
    try {
      const stored = sessionStorage.getItem(storageKey);
      return stored === null ? initial : (JSON.parse(stored) as T);
    } catch {
      return initial;
    }
  });
  const set = useCallback(
    (next: T) => {
      setValue(next);
      try {
        if (next === undefined) sessionStorage.removeItem(storageKey);
        else sessionStorage.setItem(storageKey, JSON.stringify(next));
      } catch {
        /* the in-page state still holds it */
      }
    },
    [storageKey],
  );
  return [value, set];
}

/** Forgets every page's kept state (at sign-out: the next admin in this tab starts clean). */
export function clearSessionState(): void {
  try {
    for (const k of Object.keys(sessionStorage)) if (k.startsWith('weft.')) sessionStorage.removeItem(k);
  } catch {
    /* nothing kept */
  }
}
