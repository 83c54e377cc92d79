// The behaviour every LeaseStore must show, run unchanged against each backend:
//   describeLeaseStoreConformance('PostgresLeaseStore', () => ({ leaseDurationMs: 1000, createStore: … }));
// Every test uses its own election name, so all of them run concurrently (`test.concurrent`): the
// slow expiry cases (Azure's minimum lease is 15 s) then cost one lease duration in all, not one each.
import { randomBytes, randomUUID } from 'node:crypto';
import { MIN_MARGIN_FRACTION, MIN_MARGIN_MS } from '../../lib/election/elector-options.js';
import { LeaseLostError, type LeaseStoreErrorKind, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import type { AcquireResult, Lease, LeaseStore } from '../../lib/stores/lease-store.js';
import { describeHandoverConformance } from './handover.conformance.js';
import { describeLeaderStateConformance } from './state.conformance.js';

export interface ConformanceTarget {
  /** The lease duration the tests request; must be within the store's `limits`. */
  leaseDurationMs: number;
  /**
   * How long past its expiry the server may still hold a lease (ms, default 0): it counts or
   * revokes leases in whole seconds (etcd, Azure). The expiry cases allow this much and no more.
   */
  expiryGranularityMs?: number;
  /** a new store instance (own client/connection) over the same backend */
  createStore(): Promise<LeaseStore> | LeaseStore;
  /** optional: a store whose namespace (container/table/prefix) does not exist yet */
  createStoreInFreshNamespace?(): Promise<LeaseStore> | LeaseStore;
  /**
   * A store over the same backend whose link to the server can lose the reply to an acquire after
   * the server applied it (a TCP/HTTP proxy in front of the real server, or a fault wrapper).
   */
  createReplyLosingStore(): Promise<ReplyLosingStore> | ReplyLosingStore;
  /** The store declares the leader-state capability: the state cases run (state.conformance.ts). */
  leaderState?: boolean;
  /** The store declares the handover capability: the handover cases run (handover.conformance.ts). */
  handover?: boolean;
  /** The store implements `watch` (push): the push variants of the handover cases run. */
  push?: boolean;
  teardown?(): Promise<void>;
}

export type ReplyLoss = 'reset' | 'silence';

export interface ReplyLosingStore {
  store: LeaseStore;
  /**
   * Lose the reply to the next acquire by `identity`, after the server applied it: then reset the
   * connection (`reset`: the call fails), or keep silent (`silence`: the caller's signal ends it).
   */
  loseNextAcquireReply(identity: string, how: ReplyLoss): void;
  /**
   * Lose the reply to the next request carrying `marker` (a leader-state write whose value holds
   * it), after the server applied it. Required when the target declares `leaderState`.
   */
  loseNextReplyContaining?(marker: string, how: ReplyLoss): void;
  /** Replies lost so far: proves the fault fired. */
  readonly repliesLost: number;
  close?(): Promise<void>;
}

/** Bound of a single store call: generous, the test machine is small and busy. */
const CALL_TIMEOUT_MS = 10_000;
/** An already-aborted call must settle at least this fast. */
const PROMPT_MS = 2_000;
const FAST_TEST_TIMEOUT_MS = 60_000;
/** The timeout of the acquire whose reply gets lost, and the follower's retry interval after it. */
const LOST_CALL_TIMEOUT_MS = 2_000;
const RETRY_MS = 250;
/** Client clock skew of the skew case: minutes, yet under Azure's 15-minute request-date limit. */
const SKEW_MS = 10 * 60_000;
/** Call latency and timer lag on a loaded 2-core machine, on top of an expiry's own bound. */
const EXPIRY_SLACK_MS = 1_500;

export function describeLeaseStoreConformance(name: string, target: () => ConformanceTarget): void {
  describe(`LeaseStore conformance: ${name}`, () => {
    // Evaluated while collecting tests: whether the fresh-namespace case exists decides its registration.
    const t = target();
    const durationMs = t.leaseDurationMs;
    const pollMs = Math.max(50, Math.min(1_000, durationMs / 10));
    const granularityMs = t.expiryGranularityMs ?? 0;
    /** Long enough for any store's clock to agree the lease has expired. */
    const expiryWaitMs = durationMs + Math.max(1_000, durationMs / 5);
    /**
     * An expired lease is free by then: the lease, the store's expiry granularity, one poll, and
     * call latency on a loaded machine. The tight rule is the refusal check of the expiry case: an
     * acquire *sent* later than lease + granularity after the renewal's answer must not be refused
     * (load delays that send, it cannot make it early), so a store keeping an expired lease for a
     * second lease fails there whatever the load.
     */
    const takeoverBoundMs = durationMs + granularityMs + pollMs + EXPIRY_SLACK_MS;
    /**
     * The earliest the lease may be taken, counted from the renewal's send: an elector may act
     * until lease − the minimum margin it enforces (elector-options.ts) after that send.
     */
    const earliestTakeoverMs = durationMs - Math.max(MIN_MARGIN_MS, durationMs * MIN_MARGIN_FRACTION);
    const slowTestTimeoutMs = 3 * durationMs + 60_000;
    const opened = new Set<LeaseStore>();

    afterAll(async () => {
      await Promise.allSettled([...opened].map((store) => store.close?.()));
      await t.teardown?.();
    });

    async function newStore(): Promise<LeaseStore> {
      const store = await t.createStore();
      opened.add(store);
      return store;
    }

    async function newStores(count: number): Promise<LeaseStore[]> {
      return Promise.all(Array.from({ length: count }, () => newStore()));
    }

    function acquire(store: LeaseStore, election: string, identity: string): Promise<AcquireResult> {
      return store.acquire({ election, identity, leaseDurationMs: durationMs, signal: callSignal() });
    }

    async function acquireOk(store: LeaseStore, election: string, identity: string): Promise<Lease> {
      const result = await acquire(store, election, identity);
      if (!result.acquired)
        throw new Error(`expected ${identity} to acquire "${election}", got ${JSON.stringify(result)}`);
      expect(result.lease).toMatchObject({ election, holder: identity });
      expect(typeof result.lease.leaseId).toBe('string');
      expect(Number.isSafeInteger(result.lease.term) && result.lease.term > 0).toBe(true);
      return result.lease;
    }

    const renew = (store: LeaseStore, lease: Lease) =>
      store.renew(lease, { leaseDurationMs: durationMs, signal: callSignal() });
    const release = (store: LeaseStore, lease: Lease) => store.release(lease, { signal: callSignal() });
    const read = (store: LeaseStore, election: string) => store.read(election, { signal: callSignal() });

    test.concurrent(
      'read of a never-used election is { held: false, term: 0 }',
      async () => {
        const store = await newStore();
        expect(await read(store, electionName('never'))).toEqual({ held: false, term: 0 });
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'exactly one of 20 concurrent acquirers wins, and again after a release',
      async () => {
        const election = electionName('race');
        const stores = await newStores(20);
        let previousTerm = 0;
        for (const round of [1, 2]) {
          const results = await Promise.all(stores.map((store, i) => acquire(store, election, `racer-${round}-${i}`)));
          const winners = results.flatMap((result) => (result.acquired ? [result.lease] : []));
          expect(winners).toHaveLength(1);
          const [lease] = winners as [Lease];
          expect(lease.term).toBeGreaterThan(previousTerm);
          previousTerm = lease.term;
          const winnerStore = stores[results.findIndex((result) => result.acquired)] as LeaseStore;
          expect(await read(stores[0] as LeaseStore, election)).toEqual({
            held: true,
            holder: lease.holder,
            term: lease.term,
          });
          await release(winnerStore, lease);
        }
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'only the holder renews and releases: a stranger gets LeaseLostError on renew and no effect on release',
      async () => {
        const election = electionName('stranger');
        const [holderStore, strangerStore] = (await newStores(2)) as [LeaseStore, LeaseStore];
        // Long enough that a loaded machine cannot let the holder's lease expire by itself meanwhile
        // (then a stranger's release would seem to have freed it).
        const call = () => ({ leaseDurationMs: leaseFor(holderStore, 10_000), signal: callSignal() });
        const result = await holderStore.acquire({ election, identity: 'holder', ...call() });
        if (!result.acquired) throw new Error(`expected holder to acquire: ${JSON.stringify(result)}`);
        const { lease } = result;
        // Renew is idempotent while the lease is ours.
        await holderStore.renew(lease, call());
        await holderStore.renew(lease, call());

        const stranger: Lease = { ...lease, holder: 'stranger', leaseId: randomUUID() };
        await expectRejection(strangerStore.renew(stranger, call()), 'lost');
        await strangerStore.release(stranger, { signal: callSignal() });

        expect(await read(strangerStore, election)).toEqual({ held: true, holder: 'holder', term: lease.term });
        expect((await strangerStore.acquire({ election, identity: 'stranger', ...call() })).acquired).toBe(false);
        await holderStore.renew(lease, call());
        await release(holderStore, lease);
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      "a stranger holding a live lease of its own cannot renew or release another's lease with that lease id",
      async () => {
        const election = electionName('stranger-live');
        const [holderStore, strangerStore] = (await newStores(2)) as [LeaseStore, LeaseStore];
        // Long enough that a loaded machine cannot let the holder's lease expire by itself meanwhile.
        const leaseMs = leaseFor(holderStore, 10_000);
        const call = () => ({ leaseDurationMs: leaseMs, signal: callSignal() });
        const acquired = async (store: LeaseStore, name: string, identity: string): Promise<Lease> => {
          const result = await store.acquire({ election: name, identity, ...call() });
          if (!result.acquired) throw new Error(`expected ${identity} to acquire: ${JSON.stringify(result)}`);
          return result.lease;
        };
        const lease = await acquired(holderStore, election, 'holder');
        // A real lease id of this store, alive on the server (a made-up one fails any format check).
        const own = await acquired(strangerStore, electionName('stranger-own'), 'stranger');
        const stranger: Lease = { ...lease, holder: 'stranger', leaseId: own.leaseId };

        await expectRejection(strangerStore.renew(stranger, call()), 'lost');
        if (t.handover) {
          await strangerStore.release(stranger, { signal: callSignal(), handoverTo: 'stranger', reserveMs: leaseMs });
        }
        await strangerStore.release(stranger, { signal: callSignal() });

        expect(await read(strangerStore, election)).toEqual({ held: true, holder: 'holder', term: lease.term });
        expect((await strangerStore.acquire({ election, identity: 'stranger', ...call() })).acquired).toBe(false);
        await holderStore.renew(lease, call());
        await release(holderStore, lease);
        await release(strangerStore, own);
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'a second release is harmless, also once someone else holds the lease',
      async () => {
        const election = electionName('release-twice');
        const [storeA, storeB] = (await newStores(2)) as [LeaseStore, LeaseStore];
        const first = await acquireOk(storeA, election, 'a');
        await release(storeA, first);
        await release(storeA, first);

        const second = await acquireOk(storeB, election, 'b');
        await release(storeA, first);
        expect(await read(storeA, election)).toEqual({ held: true, holder: 'b', term: second.term });
        await renew(storeB, second);
        await release(storeB, second);
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'release frees the lease for another acquirer at once',
      async () => {
        const election = electionName('handover');
        const [storeA, storeB] = (await newStores(2)) as [LeaseStore, LeaseStore];
        const first = await acquireOk(storeA, election, 'a');
        expect((await acquire(storeB, election, 'b')).acquired).toBe(false);
        await release(storeA, first);
        const second = await acquireOk(storeB, election, 'b');
        expect(second.term).toBeGreaterThan(first.term);
        expect(second.leaseId).not.toBe(first.leaseId);
        await release(storeB, second);
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'the term strictly increases across holders, including the same identity again',
      async () => {
        const election = electionName('terms');
        const stores = await newStores(3);
        const holders = ['a', 'b', 'c', 'a', 'a', 'b'];
        let previous: Lease | undefined;
        for (const [i, identity] of holders.entries()) {
          const store = stores[i % stores.length] as LeaseStore;
          const lease = await acquireOk(store, election, identity);
          if (previous) {
            expect(lease.term).toBeGreaterThan(previous.term);
            expect(lease.leaseId).not.toBe(previous.leaseId);
          }
          expect((await read(store, election)).term).toBe(lease.term);
          await release(store, lease);
          previous = lease;
        }
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'the holder identity is readable by the others, through read() and acquire()',
      async () => {
        const election = electionName('identity');
        const [storeA, storeB] = (await newStores(2)) as [LeaseStore, LeaseStore];
        // Identities are arbitrary strings (the elector allows up to 256 characters of anything).
        const identity = 'node-a ü/1';
        const lease = await acquireOk(storeA, election, identity);

        expect(await read(storeB, election)).toEqual({ held: true, holder: identity, term: lease.term });
        const refused = await acquire(storeB, election, 'node-b');
        expect(refused).toMatchObject({ acquired: false, holder: identity });
        if (!refused.acquired && refused.term !== undefined) expect(refused.term).toBe(lease.term);
        // A held lease is refused to everyone, a new acquisition by the holder's identity included.
        expect((await acquire(storeA, election, identity)).acquired).toBe(false);

        await release(storeA, lease);
        expect(await read(storeB, election)).toEqual({ held: false, term: lease.term });
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'an aborted signal rejects promptly with TransientLeaseStoreError and changes nothing',
      async () => {
        const election = electionName('abort');
        const [storeA, storeB] = (await newStores(2)) as [LeaseStore, LeaseStore];
        const aborted = () => AbortSignal.abort(new Error('test abort'));

        await expectPromptTransient(
          storeB.acquire({ election, identity: 'b', leaseDurationMs: durationMs, signal: aborted() }),
        );
        // The aborted acquire took nothing: another instance gets the lease at once.
        const lease = await acquireOk(storeA, election, 'a');

        await expectPromptTransient(storeA.renew(lease, { leaseDurationMs: durationMs, signal: aborted() }));
        await expectPromptTransient(storeA.release(lease, { signal: aborted() }));
        await expectPromptTransient(storeB.read(election, { signal: aborted() }));

        expect(await read(storeB, election)).toEqual({ held: true, holder: 'a', term: lease.term });
        await renew(storeA, lease);
        await release(storeA, lease);
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'an expired lease is taken over with a greater term, and its old holder can no longer renew it',
      async () => {
        const election = electionName('expiry');
        const [storeA, storeB] = (await newStores(2)) as [LeaseStore, LeaseStore];
        const old = await acquireOk(storeA, election, 'a');
        const renewSentAt = performance.now();
        await renew(storeA, old);
        // The server set the new expiry between these two instants.
        const renewedAt = performance.now();

        // Poll as a follower would until the lease expires; nobody renews it any more.
        let taken: Lease | undefined;
        let refusals = 0;
        while (!taken) {
          const sentAfter = performance.now() - renewedAt;
          const result = await acquire(storeB, election, 'b');
          if (result.acquired) taken = result.lease;
          else {
            refusals++;
            expect(result.holder === undefined || result.holder === 'a').toBe(true);
            // Sent this late, the request reached the server after expiry + granularity for sure.
            if (sentAfter > durationMs + granularityMs)
              throw new Error(
                `the expired lease was still held: an acquire sent ${Math.round(sentAfter)} ms after the renewal's answer was refused (lease ${durationMs} ms, granularity ${granularityMs} ms)`,
              );
            if (performance.now() - renewedAt > takeoverBoundMs)
              throw new Error(`the expired lease was still held ${takeoverBoundMs} ms after its last renewal`);
            await sleep(pollMs);
          }
        }
        // The winning acquire was applied before its answer came: not before an elector's deadline.
        expect(performance.now() - renewSentAt).toBeGreaterThanOrEqual(earliestTakeoverMs);
        expect(performance.now() - renewedAt).toBeLessThanOrEqual(takeoverBoundMs);
        expect(refusals).toBeGreaterThan(0);
        expect(taken.term).toBeGreaterThan(old.term);

        await expectRejection(renew(storeA, old), 'lost');
        await release(storeA, old); // no effect on the new holder
        expect(await read(storeA, election)).toEqual({ held: true, holder: 'b', term: taken.term });
        await renew(storeB, taken);
        await release(storeB, taken);
      },
      slowTestTimeoutMs,
    );

    test.concurrent(
      'a stranger cannot renew an expired lease; neither can its holder once it was taken and released',
      async () => {
        const election = electionName('expired-stranger');
        const [storeA, storeB] = (await newStores(2)) as [LeaseStore, LeaseStore];
        const old = await acquireOk(storeA, election, 'a');
        await sleep(expiryWaitMs);

        const stranger: Lease = { ...old, holder: 'stranger', leaseId: randomUUID() };
        await expectRejection(renew(storeB, stranger), 'lost');
        await storeB.release(stranger, { signal: callSignal() });

        // Its holder may give an expired lease back (some stores let it renew one nobody took since).
        await release(storeA, old);
        const taken = await acquireOk(storeB, election, 'b');
        expect(taken.term).toBeGreaterThan(old.term);
        await release(storeB, taken);

        await expectRejection(renew(storeA, old), 'lost');
        expect(await read(storeA, election)).toEqual({ held: false, term: taken.term });
      },
      slowTestTimeoutMs,
    );

    test.concurrent.each(['reset', 'silence'] as const)(
      'an acquire whose reply is lost after the server applied it (then: %s) leaves no orphan: another instance leads within the call timeout + one retry + 1 s',
      async (how) => {
        const election = electionName('reply-lost');
        const lossy = await t.createReplyLosingStore();
        const other = await newStore();
        // Long enough that an orphaned lease cannot pass for a prompt failover.
        const leaseMs = leaseFor(other, 10_000);
        const identity = `lossy-${randomBytes(4).toString('hex')}`;
        try {
          // Warm up: namespace (table, container, blob), server-side script cache and the lossy
          // store's connection exist, so the lost reply is that of an acquire the server applied.
          await release(other, await acquireOk(other, election, 'warm-up'));
          expect(await read(lossy.store, election)).toMatchObject({ held: false });
          lossy.loseNextAcquireReply(identity, how);
          const startedAt = performance.now();
          const outcome = await lossy.store
            .acquire({
              election,
              identity,
              leaseDurationMs: leaseMs,
              signal: AbortSignal.timeout(LOST_CALL_TIMEOUT_MS),
            })
            .catch((error: unknown) => error);
          expect(lossy.repliesLost).toBe(1);
          if (!(outcome instanceof Error)) {
            // A client that resends an unanswered command after reconnecting (ioredis) gets a clear
            // answer after all: it must be the lease it took, not "held by someone" (ourselves).
            expect(outcome).toMatchObject({ acquired: true, lease: { election, holder: identity } });
            const { lease } = outcome as { lease: Lease };
            expect(await read(other, election)).toEqual({ held: true, holder: identity, term: lease.term });
            await lossy.store.renew(lease, { leaseDurationMs: leaseMs, signal: callSignal() });
            await lossy.store.release(lease, { signal: callSignal() });
          } else {
            expect(outcome).toMatchObject({ kind: 'transient' });
          }
          // A follower polling every RETRY_MS leads within the bound, never a whole lease later.
          const boundMs = LOST_CALL_TIMEOUT_MS + RETRY_MS + 1_000;
          let taken: Lease | undefined;
          while (!taken) {
            const result = await other.acquire({
              election,
              identity: 'other',
              leaseDurationMs: leaseMs,
              signal: callSignal(),
            });
            if (result.acquired) taken = result.lease;
            else if (performance.now() - startedAt > leaseMs + 5_000) break;
            else await sleep(RETRY_MS);
          }
          const ledAfterMs = performance.now() - startedAt;
          expect({ led: taken !== undefined, ledAfterMs: Math.round(ledAfterMs) }).toEqual({
            led: true,
            ledAfterMs: expect.any(Number),
          });
          expect(ledAfterMs).toBeLessThan(boundMs);
          console.info(
            `${name}: acquire reply lost, then ${how} (${outcome instanceof Error ? 'call failed' : 'resent, answered acquired'}) → another instance led after ${Math.round(ledAfterMs)} ms (bound ${boundMs} ms, lease ${leaseMs} ms)`,
          );
          await release(other, taken as Lease);
          // Once the lossy store's clean-ups have settled (close waits for them), nothing is left
          // behind, and the second release (after the abandoned call ended) touched nobody else's.
          await lossy.store.close?.();
          expect(await read(other, election)).toMatchObject({ held: false });
        } finally {
          await lossy.close?.();
        }
      },
      slowTestTimeoutMs,
    );

    test.concurrent(
      'renew extends the lease: renewed halfway, it is still held past its original expiry',
      async () => {
        const election = electionName('renew-extends');
        const [storeA, storeB] = (await newStores(2)) as [LeaseStore, LeaseStore];
        const leaseMs = leaseFor(storeA, 3_000);
        const result = await storeA.acquire({
          election,
          identity: 'a',
          leaseDurationMs: leaseMs,
          signal: callSignal(),
        });
        // The server's expiry was set before the answer arrived: counted from here, it is passed
        // for sure at 1.35 × the lease.
        const acquiredAt = performance.now();
        if (!result.acquired) throw new Error(`expected a to acquire: ${JSON.stringify(result)}`);
        await sleep(0.5 * leaseMs - (performance.now() - acquiredAt));
        const renewSentAt = performance.now();
        await storeA.renew(result.lease, { leaseDurationMs: leaseMs, signal: callSignal() });
        await sleep(1.35 * leaseMs - (performance.now() - acquiredAt));
        // The renewed expiry (at least renewSentAt + lease) is still ahead.
        expect(performance.now() - renewSentAt).toBeLessThan(0.95 * leaseMs);
        const refused = await storeB.acquire({
          election,
          identity: 'b',
          leaseDurationMs: leaseMs,
          signal: callSignal(),
        });
        expect(refused).toMatchObject({ acquired: false, holder: 'a' });
        expect(await read(storeB, election)).toEqual({ held: true, holder: 'a', term: result.lease.term });
        await storeA.release(result.lease, { signal: callSignal() });
      },
      slowTestTimeoutMs,
    );

    // Not concurrent: the skew is process-wide (a whole process whose clock is off), so it stays on
    // only around the calls that need it.
    test(
      "a client clock minutes off neither takes a held lease nor loses its own (expiry is the store's to judge)",
      async () => {
        const [storeA, storeB] = (await newStores(2)) as [LeaseStore, LeaseStore];
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
            if (!result.acquired) throw new Error(`expected a to acquire: ${JSON.stringify(result)}`);
            const restore = acquiredSkewed ? () => undefined : skewClock(skewMs);
            try {
              // Whoever's clock is off: the lease is held, by its holder, and its holder keeps it.
              expect(await storeB.acquire({ election, identity: 'b', ...call() })).toMatchObject({ acquired: false });
              expect(await read(storeB, election)).toEqual({ held: true, holder: 'a', term: result.lease.term });
              await storeA.renew(result.lease, call());
              expect(await read(storeA, election)).toEqual({ held: true, holder: 'a', term: result.lease.term });
            } finally {
              restore();
            }
            expect(await storeB.acquire({ election, identity: 'b', ...call() })).toMatchObject({ acquired: false });
            await storeA.renew(result.lease, call());
            await release(storeA, result.lease);
          }
        }
      },
      FAST_TEST_TIMEOUT_MS,
    );

    if (t.createStoreInFreshNamespace) {
      const createFresh = t.createStoreInFreshNamespace.bind(t);
      test.concurrent(
        'a missing namespace is created on first acquire, race-safe',
        async () => {
          const store = await createFresh();
          opened.add(store);
          const election = electionName('fresh');
          expect(await read(store, election)).toEqual({ held: false, term: 0 });

          // Concurrent first acquires all find the namespace missing: one wins, none fails.
          const results = await Promise.all(
            Array.from({ length: 5 }, (_, i) => acquire(store, election, `first-${i}`)),
          );
          const winners = results.flatMap((result) => (result.acquired ? [result.lease] : []));
          expect(winners).toHaveLength(1);
          const [lease] = winners as [Lease];
          expect(await read(store, election)).toEqual({ held: true, holder: lease.holder, term: lease.term });
          await release(store, lease);
        },
        FAST_TEST_TIMEOUT_MS,
      );
    }

    describeLeaderStateConformance(name, t);
    describeHandoverConformance(name, t);
  });
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

/** `atLeastMs`, or the nearest duration the store accepts above it. */
function leaseFor(store: LeaseStore, atLeastMs: number): number {
  const { minLeaseDurationMs, maxLeaseDurationMs, leaseDurationStepMs = 1 } = store.limits;
  const wanted = Math.max(minLeaseDurationMs, atLeastMs);
  return Math.min(maxLeaseDurationMs, Math.ceil(wanted / leaseDurationStepMs) * leaseDurationStepMs);
}

function electionName(tag: string): string {
  return `conformance-${tag}-${randomBytes(4).toString('hex')}`;
}

function callSignal(): AbortSignal {
  return AbortSignal.timeout(CALL_TIMEOUT_MS);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function expectRejection(promise: Promise<unknown>, kind: LeaseStoreErrorKind): Promise<unknown> {
  const error = await promise.then(
    () => {
      throw new Error(`expected a rejection of kind "${kind}", but the call succeeded`);
    },
    (reason: unknown) => reason,
  );
  expect(error).toMatchObject({ kind });
  if (kind === 'lost') expect(error).toBeInstanceOf(LeaseLostError);
  if (kind === 'transient') expect(error).toBeInstanceOf(TransientLeaseStoreError);
  return error;
}

async function expectPromptTransient(promise: Promise<unknown>): Promise<void> {
  const startedAt = performance.now();
  await expectRejection(promise, 'transient');
  expect(performance.now() - startedAt).toBeLessThan(PROMPT_MS);
}

/**
 * A malformed connection string fails at construction — a TypeError naming `option`, never echoing
 * the string (its password) — rather than on first use as a "transient" failure retried forever.
 */
export function expectMalformedConnectionRefused(make: () => unknown, option: string, secret: string): void {
  let error: unknown;
  try {
    make();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(TypeError);
  const { message, cause } = error as TypeError;
  expect(message).toContain(`${option} is not a valid connection string`);
  expect(message).not.toContain(secret);
  expect(cause).toBeUndefined();
}
