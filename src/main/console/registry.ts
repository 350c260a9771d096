import { REGISTRY, type RegistryEntry } from '../core/registry';
import type { ConsoleResource } from './resources';

type Registry = typeof REGISTRY;
/** The registered types the console's generic table and form reach: all but those marked `console: false`. */
export type ConsoleResourceName = { [K in keyof Registry]: Registry[K] extends { console: false } ? never : K }[keyof Registry];

/** The console's view of the core registry (core/registry.ts): a new type appears here with its entry there. */
export const CONSOLE_RESOURCES = Object.fromEntries(
  (Object.entries(REGISTRY) as Array<[string, RegistryEntry]>).flatMap(([name, entry]) =>
    entry.console === false
      ? []
      : [
          [
            name,
            {
              def: entry.def,
              roleKind: entry.def.roleKind,
              ops: entry.console?.ops,
              redact: entry.console?.redact,
              initial: entry.console?.initial,
            } satisfies ConsoleResource,
          ],
        ],
  ),
) as Record<ConsoleResourceName, ConsoleResource>;
