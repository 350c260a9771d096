import type { Caller } from './auth/permissions';
import type { Core } from './core';

/** What every core operation receives: the core services and who is calling. */
export interface Ctx {
  core: Core;
  caller: Caller;
}
