// The lease contract over time: an expired lease is free (judged by the store's clock, within its
// stated granularity), not earlier than an elector may still act on it, a renew extends it, a client
// clock minutes off changes nothing, and a missing namespace is created on first use.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AcquireResult, Lease, LeaseStore } from '../stores/lease-store.js';
import { conformanceMessages as messages } from './conformance.messages.js';
import type { ConformanceCase } from './conformance.types.js';
import {
  acquired,
  callSignal,
  defineCase,
  EXPIRY_SLACK_MS,
  electionName,
  FAST_TIMEOUT_MS,
  leaseFor,
  matches,
  rejectsWithKind,
  same,
  sleep,
  type Target,
} from './conformance-kit.js';

/**
 * The elector's least margin between its deadline and the lease's end: max(100 ms, lease / 5)
 * (MIN_MARGIN_MS and MIN_MARGIN_FRACTION of election/elector-options.ts, written out here because a
 * store is judged against the contract, not against the elector's code; a unit test keeps them equal).
 */
export const ELECTOR_MIN_MARGIN = { ms: 100, fraction: 1 / 5 } as const;
/** Client clock skew of the skew case: minutes, yet under Azure's 15-minute request-date limit. */
const SKEW_MS = 10 * 60_000;

export function leaseExpiryCases(t: Target): ConformanceCase[] {
  const { durationMs, granularityMs, expiryWaitMs, slowTimeoutMs } = t;
  const pollMs = Math.max(50, Math.min(1_000, durationMs / 10));
  /**
   * An expired lease is free by then: the lease, the store's expiry granularity, one poll, and call
   * latency on a loaded machine. The tight rule is the refusal check of the expiry case: an acquire
   * *sent* later than lease + granularity after the renewal's answer must not be refused (load delays
   * that send, it cannot make it early), so a store keeping an expired lease for a second lease
   * fails there whatever the load.
   */
  const takeoverBoundMs = durationMs + granularityMs + pollMs + EXPIRY_SLACK_MS;
  /** The earliest the lease may be taken, counted from the renewal's send. */
  const earliestTakeoverMs = durationMs - Math.max(ELECTOR_MIN_MARGIN.ms, durationMs * ELECTOR_MIN_MARGIN.fraction);
  const name = (text: string) => `lease: ${text}`;

  const fresh = t.createStoreInFreshNamespace;
  return [
    defineCase(
      t,
      name('an expired lease is taken over with a greater term, and its old holder can no longer renew it'),
      slowTimeoutMs,
      async (s) => {
        const election = electionName('expiry');
        const [storeA, storeB] = (await s.newStores(2)) as [LeaseStore, LeaseStore];
        const old = await s.acquireOk(storeA, election, 'a');
        const renewSentAt = performance.now();
        await s.renew(storeA, old);
        // The server set the new expiry between these two instants.
        const renewedAt = performance.now();

        // Poll as a follower would until the lease expires; nobody renews it any more.
        let taken: Lease | undefined;
        let refusals = 0;
        while (!taken) {
          const sentAfter = performance.now() - renewedAt;
          const result = await s.acquire(storeB, election, 'b');
          if (result.acquired) taken = result.lease;
          else {
            refusals++;
            assert.ok(result.holder === undefined || result.holder === 'a', `refused for ${result.holder}`);
            // Sent this late, the request reached the server after expiry + granularity for sure.
            if (sentAfter > durationMs + granularityMs)
              assert.fail(
                `the expired lease was still held: an acquire sent ${Math.round(sentAfter)} ms after the renewal's answer was refused (lease ${durationMs} ms, granularity ${granularityMs} ms)`,
              );
            if (performance.now() - renewedAt > takeoverBoundMs)
              assert.fail(`the expired lease was still held ${takeoverBoundMs} ms after its last renewal`);
            await sleep(pollMs);
          }
        }
        // The winning acquire was applied before its answer came: not before an elector's deadline.
        const sinceSend = performance.now() - renewSentAt;
        assert.ok(sinceSend >= earliestTakeoverMs, `taken ${Math.round(sinceSend)} ms after the renewal was sent`);
        assert.ok(performance.now() - renewedAt <= takeoverBoundMs, `taken later than ${takeoverBoundMs} ms`);
        assert.ok(refusals > 0, 'the live lease was never refused');
        assert.ok(taken.term > old.term, `term ${taken.term} after ${old.term}`);

        await rejectsWithKind(s.renew(storeA, old), 'lost');
        await s.release(storeA, old); // no effect on the new holder
        same(await s.read(storeA, election), { held: true, holder: 'b', term: taken.term });
        await s.renew(storeB, taken);
        await s.release(storeB, taken);
      },
    ),

    defineCase(
      t,
      name('a stranger cannot renew an expired lease; neither can its holder once it was taken and released'),
      slowTimeoutMs,
      async (s) => {
        const election = electionName('expired-stranger');
        const [storeA, storeB] = (await s.newStores(2)) as [LeaseStore, LeaseStore];
        const old = await s.acquireOk(storeA, election, 'a');
        await sleep(expiryWaitMs);

        const stranger: Lease = { ...old, holder: 'stranger', leaseId: randomUUID() };
        await rejectsWithKind(s.renew(storeB, stranger), 'lost');
        await storeB.release(stranger, { signal: callSignal() });

        // Its holder may give an expired lease back (some stores let it renew one nobody took since).
        await s.release(storeA, old);
        const taken = await s.acquireOk(storeB, election, 'b');
        assert.ok(taken.term > old.term, `term ${taken.term} after ${old.term}`);
        await s.release(storeB, taken);

        await rejectsWithKind(s.renew(storeA, old), 'lost');
        same(await s.read(storeA, election), { held: false, term: taken.term });
      },
    ),

    defineCase(
      t,
      name('renew extends the lease: renewed halfway, it is still held past its original expiry'),
      slowTimeoutMs,
      async (s) => {
        const election = electionName('renew-extends');
        const [storeA, storeB] = (await s.newStores(2)) as [LeaseStore, LeaseStore];
        const leaseMs = leaseFor(storeA, 3_000);
        const result = await s.acquire(storeA, election, 'a', leaseMs);
        // The server's expiry was set before the answer arrived: counted from here, it is passed for
        // sure at 1.35 × the lease.
        const acquiredAt = performance.now();
        const lease = acquired(result, 'a', election);
        await sleep(0.5 * leaseMs - (performance.now() - acquiredAt));
        const renewSentAt = performance.now();
        await storeA.renew(lease, { leaseDurationMs: leaseMs, signal: callSignal() });
        await sleep(1.35 * leaseMs - (performance.now() - acquiredAt));
        // The renewed expiry (at least renewSentAt + lease) is still ahead.
        const sinceRenew = performance.now() - renewSentAt;
        assert.ok(sinceRenew < 0.95 * leaseMs, `the machine was too slow to judge (${Math.round(sinceRenew)} ms)`);
        matches(await s.acquire(storeB, election, 'b', leaseMs), { acquired: false, holder: 'a' });
        same(await s.read(storeB, election), { held: true, holder: 'a', term: lease.term });
        await s.release(storeA, lease);
      },
    ),

    defineCase(
      t,
      name("a client clock minutes off neither takes a held lease nor loses its own (expiry is the store's to judge)"),
      FAST_TIMEOUT_MS,
      async (s) => {
        const [storeA, storeB] = (await s.newStores(2)) as [LeaseStore, LeaseStore];
        const leaseMs = leaseFor(storeA, 3_000);
        const call = () => ({ leaseDurationMs: leaseMs, signal: callSignal() });
        for (const skewMs of [SKEW_MS, -SKEW_MS]) {
          // Acquired with a true clock, judged by a skewed one; then the other way round.
          for (const acquiredSkewed of [false, true]) {
            const election = electionName(
              `skew-${skewMs > 0 ? 'ahead' : 'behind'}-${acquiredSkewed ? 'own' : 'other'}`,
            );
            const skewedAcquire = acquiredSkewed ? skewClock(skewMs) : () => undefined;
            let result: AcquireResult;
            try {
              result = await storeA.acquire({ election, identity: 'a', ...call() });
            } finally {
              skewedAcquire();
            }
            const lease = acquired(result, 'a', election);
            const restore = acquiredSkewed ? () => undefined : skewClock(skewMs);
            try {
              // Whoever's clock is off: the lease is held, by its holder, and its holder keeps it.
              matches(await storeB.acquire({ election, identity: 'b', ...call() }), { acquired: false });
              same(await s.read(storeB, election), { held: true, holder: 'a', term: lease.term });
              await storeA.renew(lease, call());
              same(await s.read(storeA, election), { held: true, holder: 'a', term: lease.term });
            } finally {
              restore();
            }
            matches(await storeB.acquire({ election, identity: 'b', ...call() }), { acquired: false });
            await storeA.renew(lease, call());
            await s.release(storeA, lease);
          }
        }
      },
      // The skew is process-wide (a whole process whose clock is off): nothing may run beside it.
      { concurrent: false },
    ),

    defineCase(
      t,
      name('a missing namespace is created on first acquire, race-safe'),
      FAST_TIMEOUT_MS,
      async (s) => {
        const store = s.adopt(await (fresh as () => LeaseStore | Promise<LeaseStore>).call(t));
        const election = electionName('fresh');
        same(await s.read(store, election), { held: false, term: 0 });
        // Concurrent first acquires all find the namespace missing: one wins, none fails.
        const results = await Promise.all(
          Array.from({ length: 5 }, (_, i) => s.acquire(store, election, `first-${i}`)),
        );
        const winners = results.flatMap((result) => (result.acquired ? [result.lease] : []));
        assert.equal(winners.length, 1, `${winners.length} first acquirers won`);
        const [lease] = winners as [Lease];
        same(await s.read(store, election), { held: true, holder: lease.holder, term: lease.term });
        await s.release(store, lease);
      },
      fresh ? {} : { skipReason: messages.noFixture('createStoreInFreshNamespace') },
    ),
  ];
}

/**
 * Makes the whole process's wall clock `offsetMs` off (`Date.now()` and `new Date()` alike, as on a
 * machine whose clock is wrong) until the returned function restores it.
 */
function skewClock(offsetMs: number): () => void {
  const RealDate = globalThis.Date;
  class SkewedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + offsetMs);
      else super(...(args as [number]));
    }
    static override now(): number {
      return RealDate.now() + offsetMs;
    }
  }
  globalThis.Date = SkewedDate as DateConstructor;
  return () => {
    globalThis.Date = RealDate;
  };
}
