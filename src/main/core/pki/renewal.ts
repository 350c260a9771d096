const DAY_MS = 86_400_000;

/** Days before expiry at which a certificate is reported (log once each, console badge, inventory state). */
export const WARNING_DAYS = [30, 7, 1] as const;

/**
 * Weft's renewal policy: a certificate it renews itself (its API/control server certificate, the built-in router's) or
 * asks an identity to extend is due at two thirds of its lifetime or 30 days before it expires, whichever comes first
 * (never before half its lifetime, so a short-lived certificate is not renewed over and over).
 */
export function renewsAt(notBefore: Date, notAfter: Date): Date {
  const start = notBefore.getTime();
  const life = notAfter.getTime() - start;
  const due = Math.min(start + (life * 2) / 3, notAfter.getTime() - 30 * DAY_MS);
  return new Date(Math.max(start + life / 2, due));
}

/** Whole days left until `notAfter` (negative once expired). */
export function daysLeft(notAfter: Date, now: Date): number {
  return Math.floor((notAfter.getTime() - now.getTime()) / DAY_MS);
}

/** The smallest warning threshold `daysLeft` has reached (30, 7 or 1), or undefined while none is. */
export function warningLevel(days: number): (typeof WARNING_DAYS)[number] | undefined {
  let level: (typeof WARNING_DAYS)[number] | undefined;
  for (const d of WARNING_DAYS) if (days <= d) level = d;
  return level;
}
