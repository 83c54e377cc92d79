// The system clock reads a captured `performance` object (the global is an accessor that costs as
// much as the read). It must still follow test fake timers, which replace the global `performance`
// and `Date` together: a user's unit test with the real module under jest.useFakeTimers() sees
// the elector keep time on both fake clocks, and on the real ones again after useRealTimers().
import { jest } from '@jest/globals';
import { systemClock } from '../../lib/shared/clock.js';

describe('systemClock', () => {
  afterEach(() => jest.useRealTimers());

  it('reads the real clocks when no fake timers are installed', () => {
    const before = performance.now();
    const mono = systemClock.now();
    expect(mono).toBeGreaterThanOrEqual(before);
    expect(mono).toBeLessThanOrEqual(performance.now());
    expect(Math.abs(systemClock.wallNow() - Date.now())).toBeLessThan(50);
  });

  it('follows fake timers on both clocks while installed, and the real clocks after', () => {
    systemClock.now(); // captured before the fakes go in, as in an app booted before a test installs them
    jest.useFakeTimers({ now: 1_000_000 });
    const mono = systemClock.now();
    const wall = systemClock.wallNow();
    expect(wall).toBe(1_000_000);
    jest.advanceTimersByTime(5_000);
    expect(systemClock.now() - mono).toBe(5_000);
    expect(systemClock.wallNow() - wall).toBe(5_000);

    let fired = false;
    systemClock.setTimeout(() => {
      fired = true;
    }, 100);
    jest.advanceTimersByTime(100);
    expect(fired).toBe(true);

    jest.useRealTimers();
    const before = performance.now();
    const real = systemClock.now();
    expect(real).toBeGreaterThanOrEqual(before);
    expect(real).toBeLessThanOrEqual(performance.now());
  });
});
