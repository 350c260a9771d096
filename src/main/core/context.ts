/** What every core operation receives (declared with the core, which makes contexts). */
export type { Ctx } from './core';
