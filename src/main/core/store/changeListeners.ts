import type { ChangeListener, ChangeOp } from './db';

const TABLE_NAME = /^[a-z_]+$/;

/**
 * The listeners of a store's `watch` and `watchTables`, by key ("table:op" and "touched:table"). Each store
 * installs what reports changes for a key (triggers) the first time the key is listened to, and calls `deliver`.
 */
export class ChangeListeners {
  private readonly byKey = new Map<string, Set<ChangeListener>>();
  private readonly gapListeners = new Set<() => void>();

  /** `install(key)` makes the store report the key's changes; it runs once per key. */
  constructor(private readonly install: (key: string, table: string, what: ChangeOp | 'touched') => void) {}

  private setOf(table: string, what: ChangeOp | 'touched'): Set<ChangeListener> {
    if (!TABLE_NAME.test(table)) throw new Error(`bad table name ${table}`);
    const key = what === 'touched' ? `touched:${table}` : `${table}:${what}`;
    let set = this.byKey.get(key);
    if (!set) {
      this.install(key, table, what);
      this.byKey.set(key, (set = new Set()));
    }
    return set;
  }

  watch(table: string, op: ChangeOp, listener: ChangeListener): () => void {
    const set = this.setOf(table, op);
    set.add(listener);
    return () => set.delete(listener);
  }

  /** One call per committed write, however many of `tables` it changed. */
  watchTables(tables: string[], listener: () => void): () => void {
    const sets = tables.map((table) => this.setOf(table, 'touched'));
    let pending = false;
    const once = () => {
      if (pending) return;
      pending = true;
      queueMicrotask(() => {
        pending = false;
        listener();
      });
    };
    for (const set of sets) set.add(once);
    return () => sets.forEach((set) => set.delete(once));
  }

  /** `listener` is called whenever changes may have gone unreported (see Store.watchGaps). */
  watchGaps(listener: () => void): () => void {
    this.gapListeners.add(listener);
    return () => this.gapListeners.delete(listener);
  }

  /** Changes may have gone unreported: every gap listener re-reads what it keeps. */
  gap(): void {
    for (const l of this.gapListeners) this.call('gap', l, []);
  }

  deliver(key: string, ids: string[]): void {
    for (const l of this.byKey.get(key) ?? []) this.call(key, l, ids);
  }

  private call(key: string, l: ChangeListener, ids: string[]): void {
    try {
      l(ids);
    } catch (e) {
      // a listener's failure must not fail the write that was committed
      process.emitWarning(`store change listener for ${key} failed: ${(e as Error).message}`);
    }
  }
}
