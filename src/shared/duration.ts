// Go-style duration strings ("300ms", "1h30m", "2h45m10s") <-> milliseconds.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

// Go's time.Duration tops out at ~292 years; anything larger is a typo.
const MAX_MS = 9_223_372_036_854.775;

const PART_SOURCE = '(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|μs|ms|s|m|h)';

export interface ParseDurationOptions {
  /** Accept "0" (and zero-valued durations such as "0s"). Default false. */
  allowZero?: boolean;
}

export function parseDuration(text: string, options: ParseDurationOptions = {}): number {
  if (typeof text !== 'string') throw new Error(`invalid duration: expected a string such as "30s" or "1h30m"`);
  const input = text.trim();
  const shown = JSON.stringify(text);
  if (input === '') throw new Error(`invalid duration ${shown}: empty (use a value such as "30s", "5m" or "1h30m")`);
  if (input.startsWith('-')) throw new Error(`invalid duration ${shown}: must not be negative`);
  if (input === '0' || input === '+0') {
    if (!options.allowZero) throw new Error(`invalid duration ${shown}: must be greater than zero`);
    return 0;
  }
  const rest = input.startsWith('+') ? input.slice(1) : input;
  if (/^(\d+(\.\d*)?|\.\d+)$/.test(rest)) {
    throw new Error(`invalid duration ${shown}: missing unit (for example "${rest}s" or "${rest}m"; units ns, us, ms, s, m, h)`);
  }
  let total = 0;
  let pos = 0;
  const part = new RegExp(PART_SOURCE, 'y'); // sticky regexes carry state, so one per call
  const seen = new Set<string>();
  while (pos < rest.length) {
    part.lastIndex = pos;
    const m = part.exec(rest);
    if (!m) {
      throw new Error(`invalid duration ${shown}: expected <number><unit> pairs with units ns, us, ms, s, m, h (for example "30s" or "1h30m")`);
    }
    const unit = m[2] === 'µs' || m[2] === 'μs' ? 'us' : m[2];
    if (seen.has(unit)) throw new Error(`invalid duration ${shown}: unit "${unit}" appears twice`);
    seen.add(unit);
    total += Number(m[1]) * UNIT_MS[m[2]];
    pos = part.lastIndex;
  }
  if (!Number.isFinite(total) || total > MAX_MS) throw new Error(`invalid duration ${shown}: too large`);
  if (total === 0 && !options.allowZero) throw new Error(`invalid duration ${shown}: must be greater than zero`);
  return total;
}

/** Compact Go-like rendering: 5400000 -> "1h30m", 1500 -> "1.5s", 300 -> "300ms", 0 -> "0s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) throw new Error(`cannot format duration ${ms}`);
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms === 0) return '0s';
  if (ms < 1000) {
    if (ms >= 1) return `${trimNumber(ms)}ms`;
    if (ms >= 1e-3) return `${trimNumber(ms * 1000)}us`;
    return `${trimNumber(ms * 1e6)}ns`;
  }
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  let out = '';
  if (hours) out += `${hours}h`;
  if (minutes) out += `${minutes}m`;
  if (seconds) out += `${trimNumber(seconds)}s`;
  return out;
}

function trimNumber(n: number): string {
  return String(Number(n.toFixed(9)));
}
