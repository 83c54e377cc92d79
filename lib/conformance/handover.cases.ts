// The handover capability: lease meta, listElections, handover requests any replica reads back, and a
// release that reserves the freed lease for a named identity, for at most the store's longest lease.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type HandoverCapableStore, supportsHandover } from '../stores/lease-store.capabilities.js';
import type { HandoverRequest } from '../stores/lease-store.js';
import { conformanceMessages as messages } from './conformance.messages.js';
import type { ConformanceCase } from './conformance.types.js';
import {
  callSignal,
  defineCase,
  EXPIRY_SLACK_MS,
  electionName,
  FAST_TIMEOUT_MS,
  matches,
  rejectsWith,
  type Scope,
  same,
  sleep,
  type Target,
} from './conformance-kit.js';

export async function handoverStore(s: Scope): Promise<HandoverCapableStore> {
  const store = await s.newStore();
  assert.ok(supportsHandover(store), `${store.name} does not declare the handover methods`);
  return store;
}

export async function handoverStores(s: Scope, count: number): Promise<HandoverCapableStore[]> {
  return Promise.all(Array.from({ length: count }, () => handoverStore(s)));
}

export function handoverRequest(election: string, term: number, extra: Partial<HandoverRequest> = {}): HandoverRequest {
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

export function handoverDefine(t: Target) {
  const more = t.handover
    ? {}
    : { skipReason: messages.noCapability('handover (requestHandover/readHandover/clearHandover)') };
  return (name: string, body: (s: Scope) => Promise<void>) =>
    defineCase(t, `handover: ${name}`, FAST_TIMEOUT_MS, body, more);
}

export function handoverCases(t: Target): ConformanceCase[] {
  const define = handoverDefine(t);
  const durationMs = t.durationMs;
  const signal = () => callSignal();
  const request = handoverRequest;
  return [
    define(
      'meta is stored with the lease: read() and a refused acquire return the holder’s, a renew replaces it, the next holder’s replaces it',
      async (s) => {
        const election = electionName('meta');
        const [a, b] = (await handoverStores(s, 2)) as [HandoverCapableStore, HandoverCapableStore];
        const meta = { advertise: 'http://10.0.0.7:3000', leaderships: 2, future: { x: [1] } };
        const lease = await s.acquireOk(a, election, 'a', meta);
        same(await s.read(b, election), { held: true, holder: 'a', term: lease.term, meta });
        matches(await s.acquire(b, election, 'b'), { acquired: false, holder: 'a', term: lease.term, meta });
        await a.renew(lease, { leaseDurationMs: durationMs, signal: signal(), meta: { leaderships: 3, pinned: true } });
        same((await s.read(b, election)).meta, { leaderships: 3, pinned: true });
        // A renew without meta keeps it.
        await s.renew(a, lease);
        same((await s.read(b, election)).meta, { leaderships: 3, pinned: true });
        await s.release(a, lease);
        const next = await s.acquireOk(b, election, 'b');
        const info = await s.read(a, election);
        same(info, { held: true, holder: 'b', term: next.term });
        assert.equal(info.meta, undefined);
        await s.release(b, next);
      },
    ),

    define('listElections names every election with a lease record, sorted', async (s) => {
      const a = await handoverStore(s);
      const [e1, e2] = [electionName('list-b'), electionName('list-a')];
      const l1 = await s.acquireOk(a, e1, 'a');
      const l2 = await s.acquireOk(a, e2, 'a');
      await s.release(a, l1);
      const names = (await a.listElections?.({ signal: signal() })) ?? [];
      assert.ok(names.includes(e1) && names.includes(e2), `${JSON.stringify(names)} lacks ${e1} or ${e2}`);
      assert.deepEqual(names, [...names].sort());
      await s.release(a, l2);
    }),

    define('meta over the size limit is refused before anything is sent', async (s) => {
      const election = electionName('meta-size');
      const a = await handoverStore(s);
      const huge = { advertise: 'x'.repeat(4_096) };
      await rejectsWith(
        a.acquire({ election, identity: 'a', leaseDurationMs: durationMs, signal: signal(), meta: huge }),
        RangeError,
      );
      same(await s.read(a, election), { held: false, term: 0 });
    }),

    define(
      'a request is read back whole by any replica, a newer one replaces it, and clear removes only the named one',
      async (s) => {
        const election = electionName('request');
        const [a, b] = (await handoverStores(s, 2)) as [HandoverCapableStore, HandoverCapableStore];
        assert.equal(await b.readHandover(election, { signal: signal() }), undefined);
        const lease = await s.acquireOk(a, election, 'a');
        const first = request(election, lease.term, { to: 'b', requesterLeaderships: 0 });
        // A follower records it: the lease is untouched.
        await b.requestHandover(first, { signal: signal() });
        same(await a.readHandover(election, { signal: signal() }), first);
        same(await s.read(b, election), { held: true, holder: 'a', term: lease.term });
        await s.renew(a, lease);
        // (Not a spread request: that one would yield to the pending `first`, see the request slot cases.)
        const second = request(election, lease.term, { reason: 'maintenance' });
        await b.requestHandover(second, { signal: signal() });
        same(await a.readHandover(election, { signal: signal() }), second);
        // Clearing the older request (an honoured one, cleared late) keeps the newer.
        await a.clearHandover(election, first.id, { signal: signal() });
        same(await b.readHandover(election, { signal: signal() }), second);
        await a.clearHandover(election, second.id, { signal: signal() });
        assert.equal(await b.readHandover(election, { signal: signal() }), undefined);
        // Idempotent.
        await a.clearHandover(election, second.id, { signal: signal() });
        // A request survives the lease changing hands (the next leader sees it is stale by its term).
        await b.requestHandover(first, { signal: signal() });
        await s.release(a, lease);
        const next = await s.acquireOk(b, election, 'b');
        assert.ok(next.term > lease.term, `term ${next.term} after ${lease.term}`);
        same(await b.readHandover(election, { signal: signal() }), first);
        await b.clearHandover(election, first.id, { signal: signal() });
        await s.release(b, next);
      },
    ),

    define('a malformed or oversized request is refused before anything is sent', async (s) => {
      const election = electionName('request-bad');
      const a = await handoverStore(s);
      const good = request(election, 1);
      for (const bad of [
        { ...good, term: 1.5 },
        { ...good, id: '' },
        { ...good, to: '' },
        { ...good, requestedBy: undefined },
      ]) {
        await rejectsWith(a.requestHandover(bad as unknown as HandoverRequest, { signal: signal() }), TypeError);
      }
      await rejectsWith(a.requestHandover({ ...good, reason: 'x'.repeat(5_000) }, { signal: signal() }), RangeError);
      assert.equal(await a.readHandover(election, { signal: signal() }), undefined);
    }),

    define(
      'a release to a named identity reserves the lease for it: others are refused with the reservation, it acquires',
      async (s) => {
        const election = electionName('reserve');
        const [a, b, c] = (await handoverStores(s, 3)) as [
          HandoverCapableStore,
          HandoverCapableStore,
          HandoverCapableStore,
        ];
        const lease = await s.acquireOk(a, election, 'a', { leaderships: 1 });
        const reserveMs = Math.max(durationMs, 5_000);
        await a.release(lease, { signal: signal(), handoverTo: 'b', reserveMs });
        const refused = await s.acquire(c, election, 'c');
        matches(refused, { acquired: false, reservedFor: 'b' });
        if (refused.acquired) assert.fail('unreachable');
        assert.equal(refused.holder, undefined);
        const expiresInMs = refused.expiresInMs ?? Number.NaN;
        assert.ok(expiresInMs > 0 && expiresInMs <= reserveMs + EXPIRY_SLACK_MS, `expiresInMs ${expiresInMs}`);
        // The old holder is "another identity" too: it cannot take back what it handed over.
        assert.equal((await s.acquire(a, election, 'a')).acquired, false);
        matches(await s.read(c, election), { held: false, term: lease.term, reservedFor: 'b' });
        const taken = await s.acquireOk(b, election, 'b', { leaderships: 1 });
        assert.ok(taken.term > lease.term, `term ${taken.term} after ${lease.term}`);
        // Taken: the reservation is over, and the usual rules apply again.
        same(await s.read(c, election), { held: true, holder: 'b', term: taken.term, meta: { leaderships: 1 } });
        await s.release(b, taken);
        await s.release(c, await s.acquireOk(c, election, 'c'));
      },
    ),

    define('a reservation for an identity that never comes ends after reserveMs; then anyone acquires', async (s) => {
      const election = electionName('reserve-expiry');
      const [a, c] = (await handoverStores(s, 2)) as [HandoverCapableStore, HandoverCapableStore];
      const lease = await s.acquireOk(a, election, 'a');
      const reserveMs = 1_500;
      const releasedAt = performance.now();
      await a.release(lease, { signal: signal(), handoverTo: 'nobody', reserveMs });
      let result = await s.acquire(c, election, 'c');
      matches(result, { acquired: false, reservedFor: 'nobody' });
      while (!result.acquired && performance.now() - releasedAt < reserveMs + 1_000 + EXPIRY_SLACK_MS) {
        await sleep(100);
        result = await s.acquire(c, election, 'c');
      }
      assert.ok(result.acquired, 'the reservation outlived reserveMs');
      // Not before the reservation ended (stores counting whole seconds may end it up to 1 s early).
      assert.ok(performance.now() - releasedAt >= reserveMs - 1_000, 'the reservation ended early');
      await s.release(c, result.lease);
    }),

    define('a release with handoverTo of a lease that is no longer ours changes nothing', async (s) => {
      const election = electionName('reserve-stale');
      const [a, b, c] = (await handoverStores(s, 3)) as [
        HandoverCapableStore,
        HandoverCapableStore,
        HandoverCapableStore,
      ];
      const old = await s.acquireOk(a, election, 'a');
      await s.release(a, old);
      const current = await s.acquireOk(b, election, 'b');
      await a.release(old, { signal: signal(), handoverTo: 'c', reserveMs: 30_000 });
      same(await s.read(c, election), { held: true, holder: 'b', term: current.term });
      await s.release(b, current);
      // No reservation was left behind for c to need: another identity acquires at once.
      await s.release(a, await s.acquireOk(a, election, 'a2'));
    }),

    define('bad reservation options are refused before anything is sent, and the lease stays held', async (s) => {
      const election = electionName('reserve-bad');
      const a = await handoverStore(s);
      const lease = await s.acquireOk(a, election, 'a');
      for (const bad of [
        { handoverTo: 'b' },
        { handoverTo: '', reserveMs: 1_000 },
        { handoverTo: 'b', reserveMs: -1 },
        { reserveMs: 1_000 },
      ]) {
        await rejectsWith(a.release(lease, { signal: signal(), ...bad }), TypeError);
      }
      same(await s.read(a, election), { held: true, holder: 'a', term: lease.term });
      await s.release(a, lease);
    }),

    // Issue 24, defect 2: a reservation may last as long as the store's longest lease, not a fixed
    // hour; a longer one is refused before anything is sent.
    define(
      'reservation length follows the longest lease: one as long as the longest lease (at most 2 h here) is kept; a longer one is refused, the lease still held',
      async (s) => {
        const election = electionName('reserve-long');
        const [a, b] = (await handoverStores(s, 2)) as [HandoverCapableStore, HandoverCapableStore];
        const max = a.limits.maxLeaseDurationMs;
        const lease = await s.acquireOk(a, election, 'a');
        if (max < Number.MAX_SAFE_INTEGER) {
          await rejectsWith(a.release(lease, { signal: signal(), handoverTo: 'b', reserveMs: max + 1 }), TypeError);
          matches(await s.read(a, election), { held: true, holder: 'a' });
        }
        const reserveMs = Math.min(max, 2 * 3_600_000);
        await a.release(lease, { signal: signal(), handoverTo: 'b', reserveMs });
        const refused = await s.acquire(a, election, 'c');
        matches(refused, { acquired: false, reservedFor: 'b' });
        if (!refused.acquired && refused.expiresInMs !== undefined) {
          assert.ok(refused.expiresInMs > reserveMs / 2, `expiresInMs ${refused.expiresInMs} of ${reserveMs}`);
        }
        await s.release(b, await s.acquireOk(b, election, 'b'));
      },
    ),
  ];
}
