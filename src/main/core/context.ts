/** What every core operation receives, and the core that makes it (declared with the core, which makes contexts). */
export type { Core, Ctx } from './core';
