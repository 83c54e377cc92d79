// A custom clock (`new Elector({ clock })`) has both clocks: the monotonic `now()` and the wall clock
// `wallNow()`, which bounds a term as well (issue 11). Since #25 the elector no longer fills in a
// missing `wallNow` with Date.now() for a clock written for 0.1.0: it refuses such a clock at
// construction, naming what to add.
import { Elector, type LeadershipEvent } from '../../lib/election/elector.js';
import type { Clock } from '../../lib/index.js';
import { FakeClock } from '../../lib/shared/fake-clock.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { FaultInjectingStore } from '../support/fault-injecting.store.js';
import { quiet, timings } from './elector-fixture.js';

describe('Elector with a custom clock', () => {
  it('refuses a clock without wallNow (the 0.1.0 shape) at construction, naming the fix', () => {
    const fake = new FakeClock();
    // @ts-expect-error the public Clock requires wallNow
    const legacy: Clock = {
      now: () => fake.now(),
      setTimeout: (callback: () => void, ms: number) => fake.setTimeout(callback, ms),
      clearTimeout: (timer: unknown) => fake.clearTimeout(timer),
    };
    const store = new InMemoryLeaseStore({ clock: fake });
    expect(() => new Elector({ store, election: 'legacy-clock', clock: legacy, logger: quiet, ...timings })).toThrow(
      new TypeError(
        'clock must have wallNow() (wall-clock epoch ms) besides now() and its timers: the elector bounds a term by both clocks; for a clock written for 0.1.0, add wallNow: () => Date.now()',
      ),
    );
  });

  it('leads, renews and steps down at the monotonic deadline when its wall clock is real time', async () => {
    const fake = new FakeClock();
    // Timers and the monotonic clock by hand, the wall clock real: a custom clock as an app may write one.
    const custom: Clock = {
      now: () => fake.now(),
      wallNow: () => Date.now(),
      setTimeout: (callback, ms) => fake.setTimeout(callback, ms),
      clearTimeout: (timer) => fake.clearTimeout(timer),
    };
    const store = new FaultInjectingStore(new InMemoryLeaseStore({ clock: custom }));
    const elector = new Elector({
      store,
      election: 'custom-clock',
      identity: 'a',
      clock: custom,
      logger: quiet,
      ...timings,
    });
    const events: LeadershipEvent[] = [];
    elector.events$.subscribe((event) => events.push(event));

    const before = Date.now();
    await elector.start();
    expect(elector.isLeader()).toBe(true);
    // The wall clock is Date.now(): validUntil and lastRenewAt are real epoch times.
    const elected = events.find((e) => e.type === 'elected');
    expect(elected?.validUntil).toBeGreaterThanOrEqual(before + timings.renewDeadlineMs);
    expect(elected?.validUntil).toBeLessThanOrEqual(Date.now() + timings.renewDeadlineMs);
    expect(Date.parse(elector.status().lastRenewAt ?? '')).toBeGreaterThanOrEqual(before);

    await fake.advance(timings.renewIntervalMs); // one renewal, on the fake timers
    expect(store.calls.renew).toBe(1);
    expect(elector.isLeader()).toBe(true);

    // Renewals fail from now on: the term ends at the monotonic deadline (counted from the last
    // renew's send), because real wall time hardly moved.
    const signal = elector.signal;
    store.set('transient', 'renew');
    await fake.advance(timings.renewDeadlineMs - 1);
    expect(signal.aborted).toBe(false);
    await fake.advance(1);
    expect(signal.aborted).toBe(true);
    expect(events.filter((e) => e.type === 'revoked')).toHaveLength(1);

    await elector.stop();
    expect(fake.pendingTimers).toBe(0);
  });
});
