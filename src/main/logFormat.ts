import pino, { type Logger } from 'pino';

export type LogFormat = 'auto' | 'pretty' | 'json';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const SKIP = new Set(['level', 'time', 'pid', 'hostname', 'msg']);

/** One JSON log line as a readable one: `12:34:56 WARN message key=value …` (errors with their message). */
export function prettyLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = new Date(typeof o.time === 'number' ? o.time : Date.now()).toTimeString().slice(0, 8);
  const fields = Object.entries(o)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => {
      if (v && typeof v === 'object' && 'message' in v) v = (v as { message: unknown }).message;
      const text = typeof v === 'string' ? v : JSON.stringify(v);
      return `${k}=${/[\s"]/.test(text) ? JSON.stringify(text) : text}`;
    });
  return [time, (LEVELS[o.level as number] ?? String(o.level)).padEnd(5), String(o.msg ?? ''), ...fields].join(' ').trimEnd() + '\n';
}

/**
 * The process logger on stderr: readable lines when the output is a terminal (or `pretty`), JSON lines otherwise
 * (or `json`: for log collectors).
 */
export function processLogger(level: string, format: LogFormat, isTty = !!process.stdout.isTTY): Logger {
  const pretty = format === 'pretty' || (format === 'auto' && isTty);
  if (!pretty) return pino({ level }, pino.destination(2));
  return pino({ level }, { write: (line: string) => void process.stderr.write(prettyLine(line)) });
}
