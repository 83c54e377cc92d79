// Stop and close on a black-holed connection, for every networked store: bytes stop in both
// directions while every socket stays open (a partition, or a proxy that keeps the connection), so
// no call ever gets an answer or an error. An elector leading with its watch active, and one
// following, must still stop, and the store must still close, each within its stated bound. The
// store alone (close() with watches open) is a case of the exported suite (lib/conformance/faults.cases.ts).
import { randomBytes } from 'node:crypto';
import { Elector } from '../../lib/election/elector.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { STORE_CLOSE_BOUND_MS } from '../../lib/stores/store-support.js';

export interface BlackHoleTarget {
  leaseDurationMs: number;
  /** A store whose every connection goes through a proxy that `blackHole()` silences. */
  createBlackHoledStore(): Promise<{ store: LeaseStore; blackHole(): void; close(): Promise<void> }>;
}

/** A loaded 2-core machine's slack over each stated bound. */
const SLACK_MS = 3_000;
/** Time for the watch to be subscribed (LISTEN, SUBSCRIBE, etcd watch) before the black hole. */
const WATCH_SETTLE_MS = 1_000;

export function describeBlackHoleStopConformance(name: string, target: () => BlackHoleTarget): void {
  describe(`${name}: stop and close on a black-holed connection`, () => {
    it('elector.stop({ release: true }) and store.close() settle within their bounds', async () => {
      const { leaseDurationMs, createBlackHoledStore } = target();
      const harness = await createBlackHoledStore();
      const election = `blackhole-${randomBytes(4).toString('hex')}`;
      const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
      const [leader, follower] = ['leader', 'follower'].map(
        (identity) => new Elector({ store: harness.store, election, identity, leaseDurationMs, logger: quiet }),
      ) as [Elector, Elector];
      try {
        await leader.start();
        expect(leader.isLeader()).toBe(true);
        await follower.start();
        expect(follower.isLeader()).toBe(false);
        await new Promise((resolve) => setTimeout(resolve, WATCH_SETTLE_MS));

        harness.blackHole();
        // The elector's call timeout (renewDeadline − renewInterval with the defaults the lease
        // implies): stop() waits one for the release and at most one for late answers.
        const { renewDeadlineMs, renewIntervalMs } = leader.timings;
        const stopBoundMs = 2 * (renewDeadlineMs - renewIntervalMs);
        const stoppedMs = await timed(
          Promise.all([leader.stop({ release: true }), follower.stop({ release: true })]),
          stopBoundMs + 2 * SLACK_MS,
        );
        const closedMs = await timed(Promise.resolve(harness.store.close?.()), STORE_CLOSE_BOUND_MS + 2 * SLACK_MS);

        expect(stoppedMs).toBeLessThan(stopBoundMs + SLACK_MS);
        expect(closedMs).toBeLessThan(STORE_CLOSE_BOUND_MS + SLACK_MS);
      } finally {
        // Healed first, so nothing left over waits on the silence.
        await harness.close();
      }
    }, 60_000);
  });
}

/** How long `work` took to settle, or Infinity if it had not after `capMs` (the test goes on). */
async function timed(work: Promise<unknown>, capMs: number): Promise<number> {
  const startedAt = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<number>((resolve) => {
    timer = setTimeout(() => resolve(Number.POSITIVE_INFINITY), capMs);
  });
  const settled = work.then(
    () => performance.now() - startedAt,
    () => performance.now() - startedAt,
  );
  try {
    return await Promise.race([settled, cap]);
  } finally {
    clearTimeout(timer);
  }
}
