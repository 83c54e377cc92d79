// Issue 11 audit, gap 6a: the public Clock gained `wallNow()`. A custom clock written against 0.1.0
// (monotonic `now` and timers only) must still compile against the public type and run, with
// Date.now() standing in for the wall clock.
import { Elector, type LeadershipEvent } from '../../lib/election/elector.js';
import type { Clock } from '../../lib/index.js';
import { FakeClock } from '../../lib/shared/fake-clock.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { FaultInjectingStore } from '../support/fault-injecting.store.js';
import { quiet, timings } from './elector-fixture.js';

describe('Elector with a 0.1.0 custom clock (no wallNow)', () => {
  it('compiles against the public Clock type, leads, renews and steps down at the monotonic deadline', async () => {
    const fake = new FakeClock();
    // Exactly the 0.1.0 shape: no wallNow. (Typed with the public `Clock`, so tsc checks it still fits.)
    const legacy: Clock = {
      now: () => fake.now(),
      setTimeout: (callback, ms) => fake.setTimeout(callback, ms),
      clearTimeout: (timer) => fake.clearTimeout(timer),
    };
    const store = new FaultInjectingStore(new InMemoryLeaseStore({ clock: legacy }));
    const elector = new Elector({
      store,
      election: 'legacy-clock',
      identity: 'a',
      clock: legacy,
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
