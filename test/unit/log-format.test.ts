import fs from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { prettyLine, processLogger, type LogFormat } from '../../src/main/logFormat';

describe('readable log lines', () => {
  it('show time, level, message and the fields; errors by their message; odd values quoted', () => {
    const t = new Date(2030, 0, 2, 3, 4, 5).getTime();
    expect(
      prettyLine(JSON.stringify({ level: 40, time: t, pid: 1, hostname: 'h', msg: 'console: taking a free port', address: '127.0.0.1:1281' })),
    ).toBe('03:04:05 WARN  console: taking a free port address=127.0.0.1:1281\n');
    expect(prettyLine(JSON.stringify({ level: 50, time: t, msg: 'failed', err: { type: 'Error', message: 'no such file', stack: 'x' }, n: 3 }))).toBe(
      '03:04:05 ERROR failed err="no such file" n=3\n',
    );
    expect(prettyLine('not json')).toBe('not json');
  });
});

describe('the process logger', () => {
  it('is readable on a terminal (auto) and with pretty', () => {
    const writes: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => (writes.push(String(chunk)), true));
    try {
      processLogger('info', 'auto', true).info({ api: 'https://x' }, 'weft started');
      processLogger('info', 'pretty', false).warn('careful');
    } finally {
      spy.mockRestore();
    }
    expect(writes[0]).toMatch(/^\d\d:\d\d:\d\d INFO {2}weft started api=https:\/\/x\n$/);
    expect(writes[1]).toMatch(/WARN {2}careful/);
  });
});

describe('the log format chosen from (format option, isTTY)', () => {
  /**
   * Runs one log call and returns what reached stderr, split by route: the readable writer goes through
   * process.stderr.write, JSON lines go to fd 2 through pino's destination (fs.write, or fs.writeSync when sync).
   */
  function capture(format: LogFormat, isTty: boolean, msg: string): { pretty: string[]; fd2: string[] } {
    const pretty: string[] = [];
    const fd2: string[] = [];
    const realWrite = fs.write;
    const realWriteSync = fs.writeSync;
    const stderrSpy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => (pretty.push(String(chunk)), true));
    const fsSpy = vi.spyOn(fs, 'write').mockImplementation(((fd: number, data: string | Uint8Array, ...rest: unknown[]) => {
      const cb = rest[rest.length - 1] as (err: NodeJS.ErrnoException | null, written: number) => void;
      if (fd !== 2) return (realWrite as (...a: unknown[]) => void)(fd, data, ...rest);
      fd2.push(Buffer.from(data).toString('utf8'));
      process.nextTick(cb, null, Buffer.byteLength(data));
    }) as typeof fs.write);
    const fsSyncSpy = vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, data: string | Uint8Array, ...rest: unknown[]) => {
      if (fd !== 2) return (realWriteSync as (...a: unknown[]) => number)(fd, data, ...rest);
      fd2.push(Buffer.from(data).toString('utf8'));
      return Buffer.byteLength(data);
    }) as typeof fs.writeSync);
    try {
      processLogger('info', format, isTty).info({ api: 'https://x' }, msg);
    } finally {
      fsSyncSpy.mockRestore();
      fsSpy.mockRestore();
      stderrSpy.mockRestore();
    }
    return { pretty, fd2: fd2.filter((l) => l.includes(msg)) };
  }

  it('json on a terminal writes JSON lines, not readable ones (--log-format json overrides the TTY)', () => {
    const out = capture('json', true, 'json-on-a-tty');
    expect(out.pretty).toEqual([]);
    expect(out.fd2).toHaveLength(1);
    expect(out.fd2[0]!.endsWith('\n')).toBe(true);
    expect(JSON.parse(out.fd2[0]!)).toMatchObject({ level: 30, msg: 'json-on-a-tty', api: 'https://x' });
  });

  for (const [format, isTty] of [
    ['json', false],
    ['auto', false],
  ] as const) {
    it(`${format} without a terminal writes JSON lines`, () => {
      const msg = `${format}-no-tty`;
      const out = capture(format, isTty, msg);
      expect(out.pretty).toEqual([]);
      expect(out.fd2).toHaveLength(1);
      expect(JSON.parse(out.fd2[0]!)).toMatchObject({ level: 30, msg });
    });
  }

  for (const [format, isTty] of [
    ['auto', true],
    ['pretty', true],
    ['pretty', false],
  ] as const) {
    it(`${format} ${isTty ? 'on' : 'without'} a terminal writes readable lines, no JSON`, () => {
      const msg = `${format}-${isTty}-readable`;
      const out = capture(format, isTty, msg);
      expect(out.fd2).toEqual([]);
      expect(out.pretty).toHaveLength(1);
      expect(out.pretty[0]).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d INFO  ${msg} api=https://x\\n$`));
    });
  }
});
