// The lease contract every store keeps: one holder at a time, renew and release only by the holder's
// lease id, a term that strictly increases, the holder readable by all, and calls that honour their
// signal. Each case uses its own elections.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Lease, LeaseStore } from '../stores/lease-store.js';
import type { ConformanceCase } from './conformance.types.js';
import {
  acquired,
  callSignal,
  defineCase,
  electionName,
  FAST_TIMEOUT_MS,
  leaseFor,
  matches,
  rejectsPromptly,
  rejectsWithKind,
  same,
  type Target,
} from './conformance-kit.js';

export function leaseCases(t: Target): ConformanceCase[] {
  const fast = (name: string, body: Parameters<typeof defineCase>[3]) =>
    defineCase(t, `lease: ${name}`, FAST_TIMEOUT_MS, body);
  return [
    fast('read of a never-used election is { held: false, term: 0 }', async (s) => {
      same(await s.read(await s.newStore(), electionName('never')), { held: false, term: 0 });
    }),

    fast('exactly one of 20 concurrent acquirers wins, and again after a release', async (s) => {
      const election = electionName('race');
      const stores = await s.newStores(20);
      let previousTerm = 0;
      for (const round of [1, 2]) {
        const results = await Promise.all(stores.map((store, i) => s.acquire(store, election, `racer-${round}-${i}`)));
        const winners = results.flatMap((result) => (result.acquired ? [result.lease] : []));
        assert.equal(winners.length, 1, `round ${round}: ${winners.length} acquirers won`);
        const [lease] = winners as [Lease];
        assert.ok(lease.term > previousTerm, `term ${lease.term} after ${previousTerm}`);
        previousTerm = lease.term;
        const winnerStore = stores[results.findIndex((result) => result.acquired)] as LeaseStore;
        same(await s.read(stores[0] as LeaseStore, election), { held: true, holder: lease.holder, term: lease.term });
        await s.release(winnerStore, lease);
      }
    }),

    fast(
      'only the holder renews and releases: a stranger gets LeaseLostError on renew and no effect on release',
      async (s) => {
        const election = electionName('stranger');
        const [holderStore, strangerStore] = (await s.newStores(2)) as [LeaseStore, LeaseStore];
        // Long enough that a loaded machine cannot let the holder's lease expire by itself meanwhile
        // (then a stranger's release would seem to have freed it).
        const call = () => ({ leaseDurationMs: leaseFor(holderStore, 10_000), signal: callSignal() });
        const lease = acquired(
          await holderStore.acquire({ election, identity: 'holder', ...call() }),
          'holder',
          election,
        );
        // Renew is idempotent while the lease is ours.
        await holderStore.renew(lease, call());
        await holderStore.renew(lease, call());

        const stranger: Lease = { ...lease, holder: 'stranger', leaseId: randomUUID() };
        await rejectsWithKind(strangerStore.renew(stranger, call()), 'lost');
        await strangerStore.release(stranger, { signal: callSignal() });

        same(await s.read(strangerStore, election), { held: true, holder: 'holder', term: lease.term });
        assert.equal((await strangerStore.acquire({ election, identity: 'stranger', ...call() })).acquired, false);
        await holderStore.renew(lease, call());
        await s.release(holderStore, lease);
      },
    ),

    fast(
      "a stranger holding a live lease of its own cannot renew or release another's lease with that lease id",
      async (s) => {
        const election = electionName('stranger-live');
        const [holderStore, strangerStore] = (await s.newStores(2)) as [LeaseStore, LeaseStore];
        // Long enough that a loaded machine cannot let the holder's lease expire by itself meanwhile.
        const leaseMs = leaseFor(holderStore, 10_000);
        const call = () => ({ leaseDurationMs: leaseMs, signal: callSignal() });
        const take = async (store: LeaseStore, name: string, identity: string) =>
          acquired(await store.acquire({ election: name, identity, ...call() }), identity, name);
        const lease = await take(holderStore, election, 'holder');
        // A real lease id of this store, alive on the server (a made-up one fails any format check).
        const own = await take(strangerStore, electionName('stranger-own'), 'stranger');
        const stranger: Lease = { ...lease, holder: 'stranger', leaseId: own.leaseId };

        await rejectsWithKind(strangerStore.renew(stranger, call()), 'lost');
        if (t.handover) {
          await strangerStore.release(stranger, { signal: callSignal(), handoverTo: 'stranger', reserveMs: leaseMs });
        }
        await strangerStore.release(stranger, { signal: callSignal() });

        same(await s.read(strangerStore, election), { held: true, holder: 'holder', term: lease.term });
        assert.equal((await strangerStore.acquire({ election, identity: 'stranger', ...call() })).acquired, false);
        await holderStore.renew(lease, call());
        await s.release(holderStore, lease);
        await s.release(strangerStore, own);
      },
    ),

    fast('a second release is harmless, also once someone else holds the lease', async (s) => {
      const election = electionName('release-twice');
      const [storeA, storeB] = (await s.newStores(2)) as [LeaseStore, LeaseStore];
      const first = await s.acquireOk(storeA, election, 'a');
      await s.release(storeA, first);
      await s.release(storeA, first);

      const second = await s.acquireOk(storeB, election, 'b');
      await s.release(storeA, first);
      same(await s.read(storeA, election), { held: true, holder: 'b', term: second.term });
      await s.renew(storeB, second);
      await s.release(storeB, second);
    }),

    fast('release frees the lease for another acquirer at once', async (s) => {
      const election = electionName('handover');
      const [storeA, storeB] = (await s.newStores(2)) as [LeaseStore, LeaseStore];
      const first = await s.acquireOk(storeA, election, 'a');
      assert.equal((await s.acquire(storeB, election, 'b')).acquired, false);
      await s.release(storeA, first);
      const second = await s.acquireOk(storeB, election, 'b');
      assert.ok(second.term > first.term, `term ${second.term} after ${first.term}`);
      assert.notEqual(second.leaseId, first.leaseId);
      await s.release(storeB, second);
    }),

    fast('the term strictly increases across holders, including the same identity again', async (s) => {
      const election = electionName('terms');
      const stores = await s.newStores(3);
      const holders = ['a', 'b', 'c', 'a', 'a', 'b'];
      let previous: Lease | undefined;
      for (const [i, identity] of holders.entries()) {
        const store = stores[i % stores.length] as LeaseStore;
        const lease = await s.acquireOk(store, election, identity);
        if (previous) {
          assert.ok(lease.term > previous.term, `term ${lease.term} after ${previous.term}`);
          assert.notEqual(lease.leaseId, previous.leaseId);
        }
        assert.equal((await s.read(store, election)).term, lease.term);
        await s.release(store, lease);
        previous = lease;
      }
    }),

    fast('the holder identity is readable by the others, through read() and acquire()', async (s) => {
      const election = electionName('identity');
      const [storeA, storeB] = (await s.newStores(2)) as [LeaseStore, LeaseStore];
      // Identities are arbitrary strings (the elector allows up to 256 characters of anything).
      const identity = 'node-a ü/1';
      const lease = await s.acquireOk(storeA, election, identity);

      same(await s.read(storeB, election), { held: true, holder: identity, term: lease.term });
      const refused = await s.acquire(storeB, election, 'node-b');
      matches(refused, { acquired: false, holder: identity });
      if (!refused.acquired && refused.term !== undefined) assert.equal(refused.term, lease.term);
      // A held lease is refused to everyone, a new acquisition by the holder's identity included.
      assert.equal((await s.acquire(storeA, election, identity)).acquired, false);

      await s.release(storeA, lease);
      same(await s.read(storeB, election), { held: false, term: lease.term });
    }),

    fast('an aborted signal rejects promptly with TransientLeaseStoreError and changes nothing', async (s) => {
      const election = electionName('abort');
      const [storeA, storeB] = (await s.newStores(2)) as [LeaseStore, LeaseStore];
      const aborted = () => AbortSignal.abort(new Error('test abort'));
      const durationMs = s.durationMs;

      await rejectsPromptly(
        storeB.acquire({ election, identity: 'b', leaseDurationMs: durationMs, signal: aborted() }),
      );
      // The aborted acquire took nothing: another instance gets the lease at once.
      const lease = await s.acquireOk(storeA, election, 'a');

      await rejectsPromptly(storeA.renew(lease, { leaseDurationMs: durationMs, signal: aborted() }));
      await rejectsPromptly(storeA.release(lease, { signal: aborted() }));
      await rejectsPromptly(storeB.read(election, { signal: aborted() }));

      same(await s.read(storeB, election), { held: true, holder: 'a', term: lease.term });
      await s.renew(storeA, lease);
      await s.release(storeA, lease);
    }),
  ];
}
