// Followers of a store that pushes (watch) poll only as a safety net, and contend again right when
// the holder's lease can have expired (the store's `expiresInMs` hint), since no store's watch
// reports an expiry. Failover bounds stay: crash ≤ lease + retry, graceful at once (the watch).
import type { AcquireRequest, AcquireResult, LeaseStore } from '../../lib/stores/lease-store.js';
import { timings, useElectorFixture } from './elector-fixture.js';

type Hint = 'store' | 'none' | 'zero';

/** The store itself, counting acquires; `watch` only when asked for; the expiry hint passed on, dropped, or a lie (0). */
function pollCounting(inner: LeaseStore, now: () => number, { watch, hint }: { watch: boolean; hint: Hint }) {
  const acquires: number[] = [];
  async function acquire(request: AcquireRequest): Promise<AcquireResult> {
    acquires.push(now());
    const result = await inner.acquire(request);
    if (result.acquired || hint === 'store') return result;
    const { expiresInMs: _dropped, ...rest } = result;
    return hint === 'zero' ? { ...rest, expiresInMs: 0 } : rest;
  }
  const store = new Proxy(inner, {
    get(target, property) {
      if (property === 'acquire') return acquire;
      if (property === 'watch' && !watch) return undefined;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store, acquires };
}

describe('Elector: safety-net polling on push stores', () => {
  const fx = useElectorFixture();
  const { leaseDurationMs, retryIntervalMs } = timings;
  const WINDOW = 60_000;

  let elections = 0;
  async function followerPolls(options: { watch: boolean; hint: Hint }) {
    const election = `polls-${++elections}`;
    const leader = fx.elector('a', fx.memory, { election });
    await leader.start();
    const { store, acquires } = pollCounting(fx.memory, () => fx.clock.now(), options);
    const follower = fx.elector('b', store, { election });
    await follower.start();
    acquires.length = 0;
    await fx.clock.advance(WINDOW);
    expect(leader.isLeader()).toBe(true);
    expect(follower.isLeader()).toBe(false);
    return acquires.length;
  }

  it('a follower with a watch and the hint polls about once per lease, not once per retry', async () => {
    const polls = await followerPolls({ watch: true, hint: 'store' });
    // The leader renews every 0.5 s, so the hinted expiry is always ~lease ahead: one try per lease
    // at the soonest (the safety net's −15 % jitter), against WINDOW / retry ≈ 150 without a watch.
    expect(polls).toBeLessThanOrEqual(Math.ceil(WINDOW / (leaseDurationMs * 0.85)) + 1);
    expect(polls).toBeGreaterThanOrEqual(Math.floor(WINDOW / (leaseDurationMs * 1.15 + retryIntervalMs * 0.3)) - 1);
  });

  it('without a watch, or without the hint, a follower polls every retry interval as before', async () => {
    const expected = WINDOW / retryIntervalMs;
    for (const options of [
      { watch: false, hint: 'store' as const },
      { watch: true, hint: 'none' as const },
    ]) {
      const polls = await followerPolls(options);
      expect(polls).toBeGreaterThanOrEqual(Math.floor(expected / 1.15) - 1);
      expect(polls).toBeLessThanOrEqual(Math.ceil(expected / 0.85) + 1);
    }
  });

  it('a store that answers "expires in 0 ms" forever does not make a hot loop', async () => {
    const polls = await followerPolls({ watch: true, hint: 'zero' });
    // At least 0.15 retry intervals apart.
    expect(polls).toBeLessThanOrEqual(Math.ceil(WINDOW / (retryIntervalMs * 0.15)) + 1);
  });

  it('crash failover stays within lease + retry of the last renewal (the watch does not report an expiry)', async () => {
    for (let trial = 0; trial < 10; trial++) {
      const election = `crash-${trial}`;
      const leader = fx.elector('a', fx.memory, { election });
      await leader.start();
      const { store } = pollCounting(fx.memory, () => fx.clock.now(), { watch: true, hint: 'store' });
      const follower = fx.elector('b', store, { election });
      await follower.start();
      let lastRenewSent = fx.clock.now();
      // The memory store answers at once: a renewal's reply comes at the instant it was sent.
      leader.events$.subscribe((event) => {
        if (event.type === 'renewed') lastRenewSent = fx.clock.now();
      });
      // Let the follower settle on a hint read at some phase of the leader's renewals.
      await fx.clock.advance(1_000 + trial * 137);
      expect(leader.isLeader()).toBe(true);
      // A crash: no release, so no notification; the lease runs out in the store.
      await leader.stop({ release: false });
      const crashedAt = fx.clock.now();
      while (!follower.isLeader() && fx.clock.now() - crashedAt < 3 * leaseDurationMs) await fx.clock.advance(10);
      expect(follower.isLeader()).toBe(true);
      // The store's expiry is at most one lease after the last renewal sent; the follower tries within
      // 0.3 retry intervals after it (and a retry interval is the bound's allowance).
      expect(fx.clock.now() - lastRenewSent).toBeLessThanOrEqual(leaseDurationMs + retryIntervalMs + 10);
      // And not before the lease expired: the store judged the acquire.
      expect(fx.clock.now() - lastRenewSent).toBeGreaterThanOrEqual(leaseDurationMs);
      await follower.stop();
    }
  });

  it('graceful handover is still immediate: the watch wakes the follower, whatever its next poll', async () => {
    const leader = fx.elector('a');
    await leader.start();
    const { store } = pollCounting(fx.memory, () => fx.clock.now(), { watch: true, hint: 'store' });
    const follower = fx.elector('b', store);
    await follower.start();
    await fx.clock.advance(1_234);
    await leader.stop();
    await fx.clock.advance(0);
    expect(follower.isLeader()).toBe(true);
  });
});
