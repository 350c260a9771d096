import { describe, expect, it } from 'vitest';
import { AdaptiveConcurrencyLimiter, ClientRateLimiter, withDeadline } from '../../src/main/core/auth/rateLimit';
import { ManualClock } from '../support/clock';

describe('AdaptiveConcurrencyLimiter', () => {
  it('refuses beyond the window; shrinks by a quarter on slow work, widens by one on fast work, within min..max', () => {
    let t = 0;
    const l = new AdaptiveConcurrencyLimiter({ min: 2, max: 8, targetLatencyMs: 100, now: () => t });
    const slots = Array.from({ length: 8 }, () => l.tryAcquire());
    expect(slots.every(Boolean)).toBe(true);
    expect(l.tryAcquire()).toBeUndefined();
    t = 500; // slow
    slots[0]!();
    expect(l.limit).toBe(6);
    expect(l.active).toBe(7);
    expect(l.tryAcquire()).toBeUndefined();
    slots[0]!(); // releasing twice changes nothing
    expect(l.active).toBe(7);
    for (const s of slots.slice(1)) s!();
    expect(l.limit).toBe(2); // 6 → 4 → 3 → 2 → 2 ...
    const fast = l.tryAcquire()!;
    fast(); // t unchanged: fast
    expect(l.limit).toBe(3);
    for (let i = 0; i < 10; i++) l.tryAcquire()!();
    expect(l.limit).toBe(8);
  });
});

describe('ClientRateLimiter', () => {
  it('gives each client its own bucket of `burst` tokens refilled at the rate, by the clock', () => {
    const clock = new ManualClock();
    const l = new ClientRateLimiter({ ratePerSecond: 2, burst: 3, clock });
    expect([l.take('a'), l.take('a'), l.take('a')]).toEqual([0, 0, 0]);
    expect(l.take('a')).toBeCloseTo(0.5);
    expect(l.take('b')).toBe(0);
    clock.advance(500);
    expect(l.take('a')).toBe(0);
    expect(l.take('a')).toBeCloseTo(0.5);
    clock.advance(60_000);
    expect([l.take('a'), l.take('a'), l.take('a'), l.take('a') > 0]).toEqual([0, 0, 0, true]);
  });

  it('bounds its table: idle clients are forgotten first, then the oldest', () => {
    const clock = new ManualClock();
    const l = new ClientRateLimiter({ ratePerSecond: 1, burst: 1, clock, maxClients: 2 });
    l.take('a');
    l.take('b');
    clock.advance(5000);
    l.take('c'); // a and b have refilled: both dropped
    expect(l.clients).toBe(1);
    l.take('d');
    expect(l.take('c')).toBeGreaterThan(0);
    l.take('e'); // c and d are active: the oldest (c) goes
    expect(l.clients).toBe(2);
    expect(l.take('d')).toBeGreaterThan(0);
  });
});

describe('withDeadline', () => {
  it('passes results and errors through; a late result becomes 503', async () => {
    await expect(withDeadline(Promise.resolve(1), 1000)).resolves.toBe(1);
    await expect(withDeadline(Promise.reject(new Error('boom')), 1000)).rejects.toThrow('boom');
    const never = new Promise<number>(() => undefined);
    await expect(withDeadline(never, 10)).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
  });
});
