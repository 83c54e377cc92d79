// The push capability (`watch`): a watcher is called back within a round trip of every release (a
// plain one and one reserved for a named follower), and never again once its watch is closed.
import assert from 'node:assert/strict';
import type { LeaseStore, LeaseWatch } from '../stores/lease-store.js';
import { conformanceMessages as messages } from './conformance.messages.js';
import type { ConformanceCase } from './conformance.types.js';
import {
  callSignal,
  defineCase,
  electionName,
  FAST_TIMEOUT_MS,
  type Scope,
  sleep,
  type Target,
} from './conformance-kit.js';

/** Generous for a loaded 2-core machine; the built-in stores call back within a few milliseconds. */
export const PUSH_BOUND_MS = 200;
/** Time for a watch to be subscribed (LISTEN, SUBSCRIBE, an etcd watch) before the release. */
const WATCH_SETTLE_MS = 1_000;

export function pushCases(t: Target): ConformanceCase[] {
  const more = t.push ? {} : { skipReason: messages.noCapability('push (watch)') };
  const reservation = t.push && !t.handover ? { skipReason: messages.noCapability('handover') } : more;
  const watchOf = (store: LeaseStore, election: string, onRelease: () => void): LeaseWatch => {
    assert.equal(typeof store.watch, 'function', `${store.name} does not implement watch`);
    return (store.watch as NonNullable<LeaseStore['watch']>).call(store, election, onRelease);
  };
  /** Resolves at the next callback, or after `ms` (then the caller's count tells). */
  const calledWithin = (counter: { calls: number; woken: () => void }, ms: number) =>
    Promise.race([new Promise<void>((resolve) => (counter.woken = resolve)), sleep(ms)]);

  return [
    defineCase(
      t,
      `push: store.watch() calls back within ${PUSH_BOUND_MS} ms of each release, until closed`,
      FAST_TIMEOUT_MS,
      async (s: Scope) => {
        const election = electionName('push');
        const [holder, watcher] = (await s.newStores(2)) as [LeaseStore, LeaseStore];
        const counter: { calls: number; woken: () => void } = { calls: 0, woken: () => undefined };
        const watch = watchOf(watcher, election, () => {
          counter.calls += 1;
          counter.woken();
        });
        try {
          await sleep(WATCH_SETTLE_MS);
          for (let round = 1; round <= 3; round++) {
            const lease = await s.acquireOk(holder, election, 'holder');
            const callsBefore = counter.calls;
            const called = calledWithin(counter, 5 * PUSH_BOUND_MS);
            await s.release(holder, lease);
            const releasedAt = performance.now();
            await called;
            const tookMs = performance.now() - releasedAt;
            assert.ok(counter.calls > callsBefore, `round ${round}: no callback after the release`);
            assert.ok(tookMs < PUSH_BOUND_MS, `round ${round}: called back ${Math.round(tookMs)} ms after the release`);
          }
        } finally {
          await watch.close();
        }
        const callsAfterClose = counter.calls;
        await s.release(holder, await s.acquireOk(holder, election, 'holder'));
        await sleep(PUSH_BOUND_MS);
        assert.equal(counter.calls, callsAfterClose, 'a closed watch was called back');
      },
      more,
    ),

    defineCase(
      t,
      'push: a release with handoverTo notifies watchers, so the named follower contends at once',
      FAST_TIMEOUT_MS,
      async (s: Scope) => {
        const election = electionName('reserve-push');
        const [a, b] = (await s.newStores(2)) as [LeaseStore, LeaseStore];
        // Long enough to outlast the watch's settling time.
        const lease = await a.acquire({
          election,
          identity: 'a',
          leaseDurationMs: Math.max(t.durationMs, 5_000),
          signal: callSignal(),
        });
        assert.ok(lease.acquired, 'the free lease was not acquired');
        let notified = 0;
        const watch = watchOf(b, election, () => {
          notified += 1;
        });
        try {
          await sleep(WATCH_SETTLE_MS);
          await a.release(lease.lease, { signal: callSignal(), handoverTo: 'b', reserveMs: 10_000 });
          const deadline = performance.now() + 5_000;
          while (notified === 0 && performance.now() < deadline) await sleep(20);
          assert.ok(notified > 0, 'no callback after a release with handoverTo');
        } finally {
          await watch.close();
        }
        await s.release(b, await s.acquireOk(b, election, 'b'));
      },
      reservation,
    ),
  ];
}
