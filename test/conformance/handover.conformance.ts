// The handover capability (requestHandover/readHandover/clearHandover, lease meta, and a release that
// reserves the freed lease for a named identity), run by describeLeaseStoreConformance for every store
// whose target says `handover: true`; a store that says nothing must declare none of the three methods.
// Every case uses its own election, so they run concurrently like the lease cases.
import { randomBytes, randomUUID } from 'node:crypto';
import {
  type HandoverCapableStore,
  type HandoverRequest,
  type Lease,
  type LeaseStore,
  supportsHandover,
} from '../../lib/stores/lease-store.js';
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
        const second = request(election, lease.term, { reason: 'spread' });
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
  });
}

function electionName(prefix: string): string {
  return `ho-${prefix}-${randomBytes(4).toString('hex')}`;
}
