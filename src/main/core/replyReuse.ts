import type { Ctx } from './context';

/**
 * Whether what a request produced may be served again while the database is unchanged (the REST adapter's reply
 * cache, api/replyCache.ts). Presenters whose output depends on more than the database, the caller and the clock
 * within a second (e.g. posture checks counting down their timeouts) call `markVolatile(ctx)`.
 */
const TRACKER = Symbol('replyReuse');
type Tracked = Ctx & { [TRACKER]?: { volatile: boolean } };

/** The context with a tracker attached (contexts derived from it by spreading share the tracker). */
export function trackReuse(ctx: Ctx): Ctx {
  return { ...ctx, [TRACKER]: { volatile: false } } as Tracked;
}

export function markVolatile(ctx: Ctx): void {
  const t = (ctx as Tracked)[TRACKER];
  if (t) t.volatile = true;
}

export function isVolatile(ctx: Ctx): boolean {
  return !!(ctx as Tracked)[TRACKER]?.volatile;
}
