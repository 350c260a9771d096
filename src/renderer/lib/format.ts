/** A timestamp as local date and time; empty for none. */
export function formatDate(value: unknown): string {
  if (typeof value !== 'string' || !value) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? value : d.toLocaleString();
}

/** "in 3 hours", "5 minutes ago" */
export function relative(value: unknown, now = Date.now()): string {
  if (typeof value !== 'string') return '';
  const diff = new Date(value).getTime() - now;
  const abs = Math.abs(diff);
  const units: Array<[Intl.RelativeTimeFormatUnit, number]> = [['day', 86_400_000], ['hour', 3_600_000], ['minute', 60_000], ['second', 1000]];
  const [unit, ms] = units.find(([, ms]) => abs >= ms) ?? ['second', 1000];
  return new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }).format(Math.round(diff / ms), unit);
}

export const yesNo = (v: unknown) => (v ? 'Yes' : 'No');

/** Offers text as a file download (enrollment JWTs). */
export function downloadText(filename: string, text: string, type = 'application/jwt'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A ZitiQL string literal. */
export const zitiString = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
