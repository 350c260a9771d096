import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/shared/duration';

describe('Go-style durations', () => {
  it('parses units and combinations', () => {
    expect(parseDuration('300ms')).toBe(300);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('6h')).toBe(21_600_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('2h45m10s')).toBe(9_910_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('1500us')).toBe(1.5);
    expect(parseDuration(' 24h ')).toBe(86_400_000);
  });

  it('refuses bad input with a clear message', () => {
    expect(() => parseDuration('')).toThrow(/empty/);
    expect(() => parseDuration('10')).toThrow(/missing unit/);
    expect(() => parseDuration('1d')).toThrow(/units ns, us, ms, s, m, h/);
    expect(() => parseDuration('-5m')).toThrow(/must not be negative/);
    expect(() => parseDuration('5m5m')).toThrow(/appears twice/);
    expect(() => parseDuration('h')).toThrow(/invalid duration "h"/);
    expect(() => parseDuration('9999999999h')).toThrow(/too large/);
  });

  it('allows zero only when asked', () => {
    expect(() => parseDuration('0')).toThrow(/greater than zero/);
    expect(() => parseDuration('0s')).toThrow(/greater than zero/);
    expect(parseDuration('0', { allowZero: true })).toBe(0);
    expect(parseDuration('0m', { allowZero: true })).toBe(0);
  });

  it('formats compactly and round-trips', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(300)).toBe('300ms');
    expect(formatDuration(1500)).toBe('1.5s');
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(9_910_000)).toBe('2h45m10s');
    expect(formatDuration(10_800_000)).toBe('3h');
    for (const ms of [1, 999, 1000, 61_000, 3_600_001, 86_400_000]) expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});
