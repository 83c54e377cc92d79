// Issue #24, defect 3: one handover request slot per election, and a replica balancing (spread) or
// preferring itself (priority, #28) never overwrites an operator's pending request — decided by the
// store, in one atomic step.
import assert from 'node:assert/strict';
import type { HandoverCapableStore } from '../stores/lease-store.capabilities.js';
import type { ConformanceCase } from './conformance.types.js';
import { callSignal, electionName, same, type Target } from './conformance-kit.js';
import { handoverDefine, handoverStore, handoverStores, handoverRequest as request } from './handover.cases.js';

type Three = [HandoverCapableStore, HandoverCapableStore, HandoverCapableStore];

export function handoverSlotCases(t: Target): ConformanceCase[] {
  const base = handoverDefine(t);
  const define = (name: string, body: Parameters<typeof base>[1]) =>
    base(`the request slot (a spread request yields to a pending request of another kind): ${name}`, body);
  const signal = () => callSignal();
  const spread = (election: string, term: number, to = 'c') =>
    request(election, term, { to, reason: 'spread', requestedBy: to, requesterLeaderships: 0 });
  const pending = async (store: HandoverCapableStore, election: string) =>
    (await store.readHandover(election, { signal: signal() }))?.id;
  const accepted = async (answer: ReturnType<HandoverCapableStore['requestHandover']>) =>
    assert.notEqual(await answer, false, 'the request was refused');
  const refused = async (answer: ReturnType<HandoverCapableStore['requestHandover']>) =>
    assert.equal(await answer, false, 'the spread request was not refused');

  return [
    define('the store declares that it applies the rule (conditionalSpreadRequests)', async (s) => {
      assert.equal((await handoverStore(s)).conditionalSpreadRequests, true);
    }),

    define(
      'an operator request pending for the term: a spread request is refused (false) and the operator’s stays',
      async (s) => {
        const election = electionName('slot-op');
        const [a, b, c] = (await handoverStores(s, 3)) as Three;
        const lease = await s.acquireOk(a, election, 'a');
        const operator = request(election, lease.term, { to: 'b' });
        await accepted(b.requestHandover(operator, { signal: signal() }));
        await refused(c.requestHandover(spread(election, lease.term), { signal: signal() }));
        same(await a.readHandover(election, { signal: signal() }), operator);
        // A spread requester that read an older term is stale too: still refused.
        await refused(c.requestHandover(spread(election, lease.term - 1), { signal: signal() }));
        // An undirected operator request (any reason but spread) is just as protected.
        const undirected = request(election, lease.term, { reason: 'maintenance' });
        await accepted(b.requestHandover(undirected, { signal: signal() }));
        await refused(c.requestHandover(spread(election, lease.term), { signal: signal() }));
        assert.equal(await pending(a, election), undirected.id);
        await a.clearHandover(election, undirected.id, { signal: signal() });
        await s.release(a, lease);
      },
    ),

    define('a spread request pending: an operator request replaces it; so does a later spread request', async (s) => {
      const election = electionName('slot-spread');
      const [a, b, c] = (await handoverStores(s, 3)) as Three;
      const lease = await s.acquireOk(a, election, 'a');
      await accepted(c.requestHandover(spread(election, lease.term), { signal: signal() }));
      const second = spread(election, lease.term, 'd');
      await accepted(c.requestHandover(second, { signal: signal() }));
      assert.equal(await pending(a, election), second.id);
      const operator = request(election, lease.term, { to: 'b' });
      await accepted(b.requestHandover(operator, { signal: signal() }));
      same(await a.readHandover(election, { signal: signal() }), operator);
      await a.clearHandover(election, operator.id, { signal: signal() });
      await s.release(a, lease);
    }),

    define(
      'operator over operator: the last one is pending, and the earlier caller sees another id on a re-read',
      async (s) => {
        const election = electionName('slot-ops');
        const [a, b] = (await handoverStores(s, 2)) as [HandoverCapableStore, HandoverCapableStore];
        const lease = await s.acquireOk(a, election, 'a');
        const first = request(election, lease.term, { to: 'b' });
        const second = request(election, lease.term, { to: 'c' });
        await accepted(a.requestHandover(first, { signal: signal() }));
        await accepted(b.requestHandover(second, { signal: signal() }));
        assert.equal(await pending(a, election), second.id);
        await a.clearHandover(election, second.id, { signal: signal() });
        await s.release(a, lease);
      },
    ),

    define(
      'an operator request for an older term is stale: a spread request for the current term replaces it',
      async (s) => {
        const election = electionName('slot-stale');
        const [a, b, c] = (await handoverStores(s, 3)) as Three;
        const old = await s.acquireOk(a, election, 'a');
        await accepted(b.requestHandover(request(election, old.term, { to: 'b' }), { signal: signal() }));
        await s.release(a, old);
        const current = await s.acquireOk(b, election, 'b');
        assert.ok(current.term > old.term, `term ${current.term} after ${old.term}`);
        const fresh = spread(election, current.term);
        await accepted(c.requestHandover(fresh, { signal: signal() }));
        same(await a.readHandover(election, { signal: signal() }), fresh);
        // The slot of an election never won (no lease row yet) takes a spread request too.
        const never = electionName('slot-never');
        const first = spread(never, 0);
        await accepted(c.requestHandover(first, { signal: signal() }));
        assert.equal(await pending(a, never), first.id);
        await a.clearHandover(election, fresh.id, { signal: signal() });
        await a.clearHandover(never, first.id, { signal: signal() });
        await s.release(b, current);
      },
    ),

    define(
      'a priority request (a replica preferring itself) yields like a spread request; it and a spread request replace each other',
      async (s) => {
        const election = electionName('slot-priority');
        const [a, b, c] = (await handoverStores(s, 3)) as Three;
        const lease = await s.acquireOk(a, election, 'a');
        const priority = (to = 'c') =>
          request(election, lease.term, { to, reason: 'priority', requestedBy: to, requesterPriority: 10 });
        const operator = request(election, lease.term, { to: 'b' });
        await accepted(b.requestHandover(operator, { signal: signal() }));
        await refused(c.requestHandover(priority(), { signal: signal() }));
        same(await a.readHandover(election, { signal: signal() }), operator);
        await a.clearHandover(election, operator.id, { signal: signal() });
        const first = priority();
        await accepted(c.requestHandover(first, { signal: signal() }));
        same(await a.readHandover(election, { signal: signal() }), first);
        const balancing = spread(election, lease.term, 'd');
        await accepted(c.requestHandover(balancing, { signal: signal() }));
        assert.equal(await pending(a, election), balancing.id);
        const again = priority('e');
        await accepted(c.requestHandover(again, { signal: signal() }));
        assert.equal(await pending(a, election), again.id);
        const replacing = request(election, lease.term, { to: 'b' });
        await accepted(b.requestHandover(replacing, { signal: signal() }));
        assert.equal(await pending(a, election), replacing.id);
        await a.clearHandover(election, replacing.id, { signal: signal() });
        await s.release(a, lease);
      },
    ),

    define('racing spread requests never displace an operator request, whichever lands first', async (s) => {
      const election = electionName('slot-race');
      const [a, b, c] = (await handoverStores(s, 3)) as Three;
      const lease = await s.acquireOk(a, election, 'a');
      for (let round = 0; round < 3; round += 1) {
        const operator = request(election, lease.term, { to: 'b' });
        const calls = Array.from({ length: 8 }, (_, i) =>
          [a, b, c][i % 3]?.requestHandover(spread(election, lease.term, `s${i}`), { signal: signal() }),
        );
        calls.splice(4, 0, b.requestHandover(operator, { signal: signal() }));
        await Promise.all(calls);
        // Spread first: the operator's replaced it; operator first: every later spread was refused.
        assert.equal(await pending(c, election), operator.id);
        await a.clearHandover(election, operator.id, { signal: signal() });
      }
      await s.release(a, lease);
    }),
  ];
}
