import { describe, expect, it, vi } from 'vitest';
import { prettyLine, processLogger } from '../../src/main/logFormat';

describe('readable log lines', () => {
  it('show time, level, message and the fields; errors by their message; odd values quoted', () => {
    const t = new Date(2030, 0, 2, 3, 4, 5).getTime();
    expect(prettyLine(JSON.stringify({ level: 40, time: t, pid: 1, hostname: 'h', msg: 'console: taking a free port', address: '127.0.0.1:1281' })))
      .toBe('03:04:05 WARN  console: taking a free port address=127.0.0.1:1281\n');
    expect(prettyLine(JSON.stringify({ level: 50, time: t, msg: 'failed', err: { type: 'Error', message: 'no such file', stack: 'x' }, n: 3 })))
      .toBe('03:04:05 ERROR failed err="no such file" n=3\n');
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
    expect(writes[0]).toMatch(/^\d\d:\d\d:\d\d INFO  weft started api=https:\/\/x\n$/);
    expect(writes[1]).toMatch(/WARN  careful/);
  });
});
