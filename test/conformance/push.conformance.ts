// Push handover through the elector, for stores that implement `watch`: when the leader releases, a
// watching follower must lead within one round trip or so, not at its next poll. The followers here
// poll once a minute, so only a push can explain a handover within the bound. The store's own side
// (a watch called back on each release) is a case of the exported suite (lib/conformance/push.cases.ts);
// these drive our Elector, so they stay here.
import { randomBytes } from 'node:crypto';
import { Elector } from '../../lib/election/elector.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';

/** Same shape as the lease-store conformance target, so one object can serve both suites. */
export interface PushTarget {
  leaseDurationMs: number;
  /** Each call: a store on the same namespace (a separate client, as another replica would have). */
  createStore(): Promise<LeaseStore> | LeaseStore;
  teardown?(): Promise<void>;
}

/** Generous for a loaded 2-core machine; the stores typically hand over in a few milliseconds. */
export const PUSH_HANDOVER_BOUND_MS = 200;
/** Long enough that polling cannot explain a handover within the bound. */
const POLL_INTERVAL_MS = 60_000;
/** Time for a follower's watch to be subscribed (LISTEN, SUBSCRIBE, etcd watch) before the release. */
const WATCH_SETTLE_MS = 1_000;

export function describePushHandoverConformance(name: string, target: () => PushTarget): void {
  describe(`${name}: push handover`, () => {
    const electors: Elector[] = [];
    const stores: LeaseStore[] = [];

    afterEach(async () => {
      await Promise.all(electors.splice(0).map((elector) => elector.stop({ release: true })));
      await Promise.all([...new Set(stores.splice(0))].map((store) => store.close?.()));
    });

    afterAll(async () => {
      await target().teardown?.();
    });

    async function elector(identity: string, election: string, onRelease?: () => void): Promise<Elector> {
      const { leaseDurationMs, createStore } = target();
      const store = await createStore();
      stores.push(store);
      const created = new Elector({
        store: onRelease ? recordReleases(store, onRelease) : store,
        election,
        identity,
        leaseDurationMs,
        retryIntervalMs: POLL_INTERVAL_MS,
        logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
      });
      electors.push(created);
      return created;
    }

    it(`a watching follower leads within ${PUSH_HANDOVER_BOUND_MS} ms of the leader's release`, async () => {
      const election = `push-${randomBytes(4).toString('hex')}`;
      let releasedAt = Number.NaN;
      const leader = await elector('leader', election, () => {
        releasedAt = performance.now();
      });
      await leader.start();
      expect(leader.isLeader()).toBe(true);

      const follower = await elector('follower', election);
      expect(follower.store.watch).toBeInstanceOf(Function);
      let electedAt = Number.NaN;
      const elected = new Promise<void>((resolve) => {
        follower.events$.subscribe((event) => {
          if (event.type !== 'elected') return;
          electedAt = performance.now();
          resolve();
        });
      });
      await follower.start();
      expect(follower.isLeader()).toBe(false);
      await sleep(WATCH_SETTLE_MS);

      await leader.stop({ release: true });
      expect(Number.isNaN(releasedAt)).toBe(false);
      await Promise.race([elected, sleep(5 * PUSH_HANDOVER_BOUND_MS, true)]);

      expect(follower.isLeader()).toBe(true);
      expect(electedAt - releasedAt).toBeLessThan(PUSH_HANDOVER_BOUND_MS);
    });

    it('a watching follower (polling once a minute) takes over a crashed leader once its lease expires', async () => {
      // No release, so no notification (PostgreSQL and Redis do not report an expiry; etcd does):
      // the follower must contend when the holder's lease can have expired, as the store told it
      // (AcquireResult.expiresInMs), not at its next poll a minute later.
      const { leaseDurationMs } = target();
      const election = `push-crash-${randomBytes(4).toString('hex')}`;
      const leader = await elector('leader', election);
      await leader.start();
      expect(leader.isLeader()).toBe(true);
      const follower = await elector('follower', election);
      const elected = new Promise<void>((resolve) => {
        follower.events$.subscribe((event) => {
          if (event.type === 'elected') resolve();
        });
      });
      await follower.start();
      expect(follower.isLeader()).toBe(false);
      await sleep(WATCH_SETTLE_MS);

      await leader.stop({ release: false });
      const crashedAt = performance.now();
      // The lease runs out at most one lease after the last renewal; then 0.15–0.3 lease of spread,
      // a round trip, and slack for a loaded machine (etcd: its expiry loop, up to 0.5 s).
      const bound = 2 * leaseDurationMs + 500;
      await Promise.race([elected, sleep(bound + 1_000, true)]);
      expect(follower.isLeader()).toBe(true);
      expect(performance.now() - crashedAt).toBeLessThan(bound);
    });
  });
}

/** The store itself, except that `onRelease` runs the moment a release resolves. */
function recordReleases(store: LeaseStore, onRelease: () => void): LeaseStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'release') {
        return async (...args: Parameters<LeaseStore['release']>) => {
          await target.release(...args);
          onRelease();
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** `unref`: a timer that only bounds a race must not keep the test process alive. */
function sleep(ms: number, unref = false): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (unref) timer.unref();
  });
}
