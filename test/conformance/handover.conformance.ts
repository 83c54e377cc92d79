// The handover capability (requestHandover/readHandover/clearHandover, lease meta, and a release that
// reserves the freed lease for a named identity), run by describeLeaseStoreConformance for every store
// whose target says `handover: true`; a store that says nothing must declare none of the three methods.
// Every case uses its own election, so they run concurrently like the lease cases.
import { randomBytes, randomUUID } from 'node:crypto';
import { type HandoverCapableStore, supportsHandover } from '../../lib/stores/lease-store.capabilities.js';
import type { HandoverRequest, Lease, LeaseStore } from '../../lib/stores/lease-store.js';
import type { ConformanceTarget } from './lease-store.conformance.js';

const CALL_TIMEOUT_MS = 10_000;
const FAST_TEST_TIMEOUT_MS = 60_000;
/** Call latency on a loaded 2-core machine, on top of a reservation's own length. */
const SLACK_MS = 1_500;

export function describeHandoverConformance(name: string, t: ConformanceTarget): void {
  describe(`Handover conformance: ${name}`, () => {
    const durationMs = t.leaseDurationMs;
    const opened = new Set<LeaseStore>();

    afterAll(async () => {
      await Promise.allSettled([...opened].map((store) => store.close?.()));
    });

    if (!t.handover) {
      test('a store that does not declare handover requests implements none of the methods', async () => {
        const store = await t.createStore();
        opened.add(store);
        expect(store.requestHandover).toBeUndefined();
        expect(store.readHandover).toBeUndefined();
        expect(store.clearHandover).toBeUndefined();
      });
      return;
    }

    async function newStore(): Promise<HandoverCapableStore> {
      const store = await t.createStore();
      opened.add(store);
      if (!supportsHandover(store)) throw new Error(`${store.name} does not declare the handover methods`);
      return store;
    }

    const signal = () => AbortSignal.timeout(CALL_TIMEOUT_MS);

    async function acquireOk(store: LeaseStore, election: string, identity: string, meta?: object): Promise<Lease> {
      const result = await store.acquire({ election, identity, leaseDurationMs: durationMs, signal: signal(), meta });
      if (!result.acquired) throw new Error(`expected ${identity} to acquire "${election}": ${JSON.stringify(result)}`);
      return result.lease;
    }

    function request(election: string, term: number, extra: Partial<HandoverRequest> = {}): HandoverRequest {
      return {
        election,
        id: randomUUID(),
        term,
        requestedBy: 'conformance',
        reason: 'operator',
        requestedAt: Date.now(),
        ...extra,
      };
    }

    test.concurrent(
      'meta is stored with the lease: read() and a refused acquire return the holder’s, a renew replaces it, the next holder’s replaces it',
      async () => {
        const election = electionName('meta');
        const [a, b] = [await newStore(), await newStore()];
        const meta = { advertise: 'http://10.0.0.7:3000', leaderships: 2, future: { x: [1] } };
        const lease = await acquireOk(a, election, 'a', meta);
        expect(await b.read(election, { signal: signal() })).toEqual({
          held: true,
          holder: 'a',
          term: lease.term,
          meta,
        });
        const refused = await b.acquire({ election, identity: 'b', leaseDurationMs: durationMs, signal: signal() });
        expect(refused).toMatchObject({ acquired: false, holder: 'a', term: lease.term, meta });
        await a.renew(lease, { leaseDurationMs: durationMs, signal: signal(), meta: { leaderships: 3, pinned: true } });
        expect((await b.read(election, { signal: signal() })).meta).toEqual({ leaderships: 3, pinned: true });
        // A renew without meta keeps it.
        await a.renew(lease, { leaseDurationMs: durationMs, signal: signal() });
        expect((await b.read(election, { signal: signal() })).meta).toEqual({ leaderships: 3, pinned: true });
        await a.release(lease, { signal: signal() });
        const next = await acquireOk(b, election, 'b');
        const info = await a.read(election, { signal: signal() });
        expect(info).toEqual({ held: true, holder: 'b', term: next.term });
        expect(info.meta).toBeUndefined();
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'listElections names every election with a lease record, sorted',
      async () => {
        const a = await newStore();
        const [e1, e2] = [electionName('list-b'), electionName('list-a')];
        const l1 = await acquireOk(a, e1, 'a');
        await acquireOk(a, e2, 'a');
        await a.release(l1, { signal: signal() });
        const names = await a.listElections?.({ signal: signal() });
        expect(names).toEqual(expect.arrayContaining([e1, e2]));
        expect(names).toEqual([...(names ?? [])].sort());
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'meta over the size limit is refused before anything is sent',
      async () => {
        const election = electionName('meta-size');
        const a = await newStore();
        const huge = { advertise: 'x'.repeat(4_096) };
        await expect(
          a.acquire({ election, identity: 'a', leaseDurationMs: durationMs, signal: signal(), meta: huge }),
        ).rejects.toBeInstanceOf(RangeError);
        expect(await a.read(election, { signal: signal() })).toEqual({ held: false, term: 0 });
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'a request is read back whole by any replica, a newer one replaces it, and clear removes only the named one',
      async () => {
        const election = electionName('request');
        const [a, b] = [await newStore(), await newStore()];
        expect(await b.readHandover(election, { signal: signal() })).toBeUndefined();
        const lease = await acquireOk(a, election, 'a');
        const first = request(election, lease.term, { to: 'b', requesterLeaderships: 0 });
        // A follower records it: the lease is untouched.
        await b.requestHandover(first, { signal: signal() });
        expect(await a.readHandover(election, { signal: signal() })).toEqual(first);
        expect(await b.read(election, { signal: signal() })).toEqual({ held: true, holder: 'a', term: lease.term });
        await a.renew(lease, { leaseDurationMs: durationMs, signal: signal() });
        // (Not a spread request: that one would yield to the pending `first`, see the request slot cases.)
        const second = request(election, lease.term, { reason: 'maintenance' });
        await b.requestHandover(second, { signal: signal() });
        expect(await a.readHandover(election, { signal: signal() })).toEqual(second);
        // Clearing the older request (an honoured one, cleared late) keeps the newer.
        await a.clearHandover(election, first.id, { signal: signal() });
        expect(await b.readHandover(election, { signal: signal() })).toEqual(second);
        await a.clearHandover(election, second.id, { signal: signal() });
        expect(await b.readHandover(election, { signal: signal() })).toBeUndefined();
        // Idempotent.
        await a.clearHandover(election, second.id, { signal: signal() });
        // A request survives the lease changing hands (the next leader sees it is stale by its term).
        await b.requestHandover(first, { signal: signal() });
        await a.release(lease, { signal: signal() });
        const next = await acquireOk(b, election, 'b');
        expect(next.term).toBeGreaterThan(lease.term);
        expect(await b.readHandover(election, { signal: signal() })).toEqual(first);
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'a malformed or oversized request is refused before anything is sent',
      async () => {
        const election = electionName('request-bad');
        const a = await newStore();
        const good = request(election, 1);
        for (const bad of [
          { ...good, term: 1.5 },
          { ...good, id: '' },
          { ...good, to: '' },
          { ...good, requestedBy: undefined },
        ]) {
          await expect(
            a.requestHandover(bad as unknown as HandoverRequest, { signal: signal() }),
          ).rejects.toBeInstanceOf(TypeError);
        }
        await expect(
          a.requestHandover({ ...good, reason: 'x'.repeat(5_000) }, { signal: signal() }),
        ).rejects.toBeInstanceOf(RangeError);
        expect(await a.readHandover(election, { signal: signal() })).toBeUndefined();
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'a release to a named identity reserves the lease for it: others are refused with the reservation, it acquires',
      async () => {
        const election = electionName('reserve');
        const [a, b, c] = [await newStore(), await newStore(), await newStore()];
        const lease = await acquireOk(a, election, 'a', { leaderships: 1 });
        const reserveMs = Math.max(durationMs, 5_000);
        await a.release(lease, { signal: signal(), handoverTo: 'b', reserveMs });
        const refused = await c.acquire({ election, identity: 'c', leaseDurationMs: durationMs, signal: signal() });
        expect(refused).toMatchObject({ acquired: false, reservedFor: 'b' });
        if (refused.acquired) throw new Error('unreachable');
        expect(refused.holder).toBeUndefined();
        expect(refused.expiresInMs).toBeGreaterThan(0);
        expect(refused.expiresInMs).toBeLessThanOrEqual(reserveMs + SLACK_MS);
        // The old holder is "another identity" too: it cannot take back what it handed over.
        const back = await a.acquire({ election, identity: 'a', leaseDurationMs: durationMs, signal: signal() });
        expect(back.acquired).toBe(false);
        const read = await c.read(election, { signal: signal() });
        expect(read).toMatchObject({ held: false, term: lease.term, reservedFor: 'b' });
        const taken = await acquireOk(b, election, 'b', { leaderships: 1 });
        expect(taken.term).toBeGreaterThan(lease.term);
        // Taken: the reservation is over, and the usual rules apply again.
        expect(await c.read(election, { signal: signal() })).toEqual({
          held: true,
          holder: 'b',
          term: taken.term,
          meta: { leaderships: 1 },
        });
        await b.release(taken, { signal: signal() });
        await acquireOk(c, election, 'c');
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'a reservation for an identity that never comes ends after reserveMs; then anyone acquires',
      async () => {
        const election = electionName('reserve-expiry');
        const [a, c] = [await newStore(), await newStore()];
        const lease = await acquireOk(a, election, 'a');
        const reserveMs = 1_500;
        const releasedAt = performance.now();
        await a.release(lease, { signal: signal(), handoverTo: 'nobody', reserveMs });
        let result = await c.acquire({ election, identity: 'c', leaseDurationMs: durationMs, signal: signal() });
        expect(result).toMatchObject({ acquired: false, reservedFor: 'nobody' });
        while (!result.acquired && performance.now() - releasedAt < reserveMs + 1_000 + SLACK_MS) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          result = await c.acquire({ election, identity: 'c', leaseDurationMs: durationMs, signal: signal() });
        }
        expect(result.acquired).toBe(true);
        // Not before the reservation ended (stores counting whole seconds may end it up to 1 s early).
        expect(performance.now() - releasedAt).toBeGreaterThanOrEqual(reserveMs - 1_000);
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'a release with handoverTo of a lease that is no longer ours changes nothing',
      async () => {
        const election = electionName('reserve-stale');
        const [a, b, c] = [await newStore(), await newStore(), await newStore()];
        const old = await acquireOk(a, election, 'a');
        await a.release(old, { signal: signal() });
        const current = await acquireOk(b, election, 'b');
        await a.release(old, { signal: signal(), handoverTo: 'c', reserveMs: 30_000 });
        expect(await c.read(election, { signal: signal() })).toEqual({ held: true, holder: 'b', term: current.term });
        await b.release(current, { signal: signal() });
        // No reservation was left behind for c to need: another identity acquires at once.
        await acquireOk(a, election, 'a2');
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'bad reservation options are refused before anything is sent, and the lease stays held',
      async () => {
        const election = electionName('reserve-bad');
        const a = await newStore();
        const lease = await acquireOk(a, election, 'a');
        for (const bad of [
          { handoverTo: 'b' },
          { handoverTo: '', reserveMs: 1_000 },
          { handoverTo: 'b', reserveMs: -1 },
          { reserveMs: 1_000 },
        ]) {
          await expect(a.release(lease, { signal: signal(), ...bad })).rejects.toBeInstanceOf(TypeError);
        }
        expect(await a.read(election, { signal: signal() })).toEqual({ held: true, holder: 'a', term: lease.term });
      },
      FAST_TEST_TIMEOUT_MS,
    );

    if (t.push) {
      test.concurrent(
        'a release with handoverTo notifies watchers, so the named follower contends at once',
        async () => {
          const election = electionName('reserve-push');
          const [a, b] = [await newStore(), await newStore()];
          // Long enough to outlast the watch's settling time.
          const taken = await a.acquire({
            election,
            identity: 'a',
            leaseDurationMs: Math.max(durationMs, 5_000),
            signal: signal(),
          });
          if (!taken.acquired) throw new Error('not acquired');
          const { lease } = taken;
          let notified = 0;
          const watch = b.watch?.(election, () => {
            notified += 1;
          });
          try {
            await new Promise((resolve) => setTimeout(resolve, 1_000));
            await a.release(lease, { signal: signal(), handoverTo: 'b', reserveMs: 10_000 });
            const deadline = performance.now() + 5_000;
            while (notified === 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
            expect(notified).toBeGreaterThan(0);
          } finally {
            await watch?.close();
          }
        },
        FAST_TEST_TIMEOUT_MS,
      );
    }

    // Issue #24, defect 3: one request slot per election, and a replica balancing (spread) must never
    // overwrite an operator's pending request — decided by the store, in one atomic step.
    describe('the request slot: a spread request yields to a pending request of another kind', () => {
      const spread = (election: string, term: number, to = 'c') =>
        request(election, term, { to, reason: 'spread', requestedBy: to, requesterLeaderships: 0 });
      const pending = async (store: HandoverCapableStore, election: string) =>
        (await store.readHandover(election, { signal: signal() }))?.id;

      test('the store declares that it applies the rule (conditionalSpreadRequests)', async () => {
        expect((await newStore()).conditionalSpreadRequests).toBe(true);
      });

      test.concurrent(
        'an operator request pending for the term: a spread request is refused (false) and the operator’s stays',
        async () => {
          const election = electionName('slot-op');
          const [a, b, c] = [await newStore(), await newStore(), await newStore()];
          const lease = await acquireOk(a, election, 'a');
          const operator = request(election, lease.term, { to: 'b' });
          expect(await b.requestHandover(operator, { signal: signal() })).not.toBe(false);
          expect(await c.requestHandover(spread(election, lease.term), { signal: signal() })).toBe(false);
          expect(await a.readHandover(election, { signal: signal() })).toEqual(operator);
          // A spread requester that read an older term is stale too: still refused.
          expect(await c.requestHandover(spread(election, lease.term - 1), { signal: signal() })).toBe(false);
          // An undirected operator request (any reason but spread) is just as protected.
          const undirected = request(election, lease.term, { reason: 'maintenance' });
          expect(await b.requestHandover(undirected, { signal: signal() })).not.toBe(false);
          expect(await c.requestHandover(spread(election, lease.term), { signal: signal() })).toBe(false);
          expect(await pending(a, election)).toBe(undirected.id);
        },
        FAST_TEST_TIMEOUT_MS,
      );

      test.concurrent(
        'a spread request pending: an operator request replaces it; so does a later spread request',
        async () => {
          const election = electionName('slot-spread');
          const [a, b, c] = [await newStore(), await newStore(), await newStore()];
          const lease = await acquireOk(a, election, 'a');
          const first = spread(election, lease.term);
          expect(await c.requestHandover(first, { signal: signal() })).not.toBe(false);
          const second = spread(election, lease.term, 'd');
          expect(await c.requestHandover(second, { signal: signal() })).not.toBe(false);
          expect(await pending(a, election)).toBe(second.id);
          const operator = request(election, lease.term, { to: 'b' });
          expect(await b.requestHandover(operator, { signal: signal() })).not.toBe(false);
          expect(await a.readHandover(election, { signal: signal() })).toEqual(operator);
        },
        FAST_TEST_TIMEOUT_MS,
      );

      test.concurrent(
        'operator over operator: the last one is pending, and the earlier caller sees another id on a re-read',
        async () => {
          const election = electionName('slot-ops');
          const [a, b] = [await newStore(), await newStore()];
          const lease = await acquireOk(a, election, 'a');
          const first = request(election, lease.term, { to: 'b' });
          const second = request(election, lease.term, { to: 'c' });
          expect(await a.requestHandover(first, { signal: signal() })).not.toBe(false);
          expect(await b.requestHandover(second, { signal: signal() })).not.toBe(false);
          expect(await pending(a, election)).toBe(second.id);
        },
        FAST_TEST_TIMEOUT_MS,
      );

      test.concurrent(
        'an operator request for an older term is stale: a spread request for the current term replaces it',
        async () => {
          const election = electionName('slot-stale');
          const [a, b, c] = [await newStore(), await newStore(), await newStore()];
          const old = await acquireOk(a, election, 'a');
          expect(await b.requestHandover(request(election, old.term, { to: 'b' }), { signal: signal() })).not.toBe(
            false,
          );
          await a.release(old, { signal: signal() });
          const current = await acquireOk(b, election, 'b');
          expect(current.term).toBeGreaterThan(old.term);
          const fresh = spread(election, current.term);
          expect(await c.requestHandover(fresh, { signal: signal() })).not.toBe(false);
          expect(await a.readHandover(election, { signal: signal() })).toEqual(fresh);
          // The slot of an election never won (no lease row yet) takes a spread request too.
          const never = electionName('slot-never');
          const first = spread(never, 0);
          expect(await c.requestHandover(first, { signal: signal() })).not.toBe(false);
          expect(await pending(a, never)).toBe(first.id);
        },
        FAST_TEST_TIMEOUT_MS,
      );

      test.concurrent(
        'racing spread requests never displace an operator request, whichever lands first',
        async () => {
          const election = electionName('slot-race');
          const [a, b, c] = [await newStore(), await newStore(), await newStore()];
          const lease = await acquireOk(a, election, 'a');
          for (let round = 0; round < 3; round += 1) {
            const operator = request(election, lease.term, { to: 'b' });
            const calls = Array.from({ length: 8 }, (_, i) =>
              [a, b, c][i % 3]?.requestHandover(spread(election, lease.term, `s${i}`), { signal: signal() }),
            );
            calls.splice(4, 0, b.requestHandover(operator, { signal: signal() }));
            await Promise.all(calls);
            // Spread first: the operator's replaced it; operator first: every later spread was refused.
            expect(await pending(c, election)).toBe(operator.id);
            await a.clearHandover(election, operator.id, { signal: signal() });
          }
        },
        FAST_TEST_TIMEOUT_MS,
      );
    });

    // Issue 24, defect 2: a reservation may last as long as the store's longest lease (24 h on the
    // SQL stores, Redis and etcd; the elector derives it from the lease), not a fixed hour; a longer
    // one is refused before anything is sent.
    describe('reservation length follows the longest lease', () => {
      test.concurrent(
        'a reservation as long as the longest lease (at most 2 h here) is kept; a longer one is refused, the lease still held',
        async () => {
          const election = electionName('reserve-long');
          const [a, b] = [await newStore(), await newStore()];
          const max = a.limits.maxLeaseDurationMs;
          const lease = await acquireOk(a, election, 'a');
          if (max < Number.MAX_SAFE_INTEGER) {
            await expect(
              a.release(lease, { signal: signal(), handoverTo: 'b', reserveMs: max + 1 }),
            ).rejects.toBeInstanceOf(TypeError);
            expect(await a.read(election, { signal: signal() })).toMatchObject({ held: true, holder: 'a' });
          }
          const reserveMs = Math.min(max, 2 * 3_600_000);
          await a.release(lease, { signal: signal(), handoverTo: 'b', reserveMs });
          const refused = await a.acquire({ election, identity: 'c', leaseDurationMs: durationMs, signal: signal() });
          expect(refused).toMatchObject({ acquired: false, reservedFor: 'b' });
          if (!refused.acquired && refused.expiresInMs !== undefined) {
            expect(refused.expiresInMs).toBeGreaterThan(reserveMs / 2);
          }
          await acquireOk(b, election, 'b');
        },
        FAST_TEST_TIMEOUT_MS,
      );
    });
  });
}

function electionName(prefix: string): string {
  return `ho-${prefix}-${randomBytes(4).toString('hex')}`;
}
