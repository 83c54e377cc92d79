// Issue 14: handover on request, at the elector level, on the fake clock over the in-memory store
// (which implements the handover capability the same way the real stores do; their conformance
// suite proves that part). A request is honoured by the leader of the term it names, at its next
// renewal: drain hook, step-down, grace hook, release reserved for `to`; the named replica leads.

import { NoLeaderError } from '../../lib/shared/errors.js';
import type { HandoverRequest } from '../../lib/stores/lease-store.js';
import { timings, useElectorFixture } from './elector-fixture.js';

const signal = () => new AbortController().signal;

describe('Elector handover requests', () => {
  const fx = useElectorFixture();

  async function threeReplicas() {
    const [a, b, c] = ['a', 'b', 'c'].map((id) => fx.elector(id));
    if (!a || !b || !c) throw new Error('unreachable');
    await a.start();
    await b.start();
    await c.start();
    expect(a.isLeader()).toBe(true);
    return { a, b, c };
  }

  it('a directed request made on a follower moves leadership to the named replica within renew + retry', async () => {
    const { a, b, c } = await threeReplicas();
    const order: string[] = [];
    const events = fx.record(a);
    // At the instant b wins, a has already stopped acting: never two leaders of one election.
    const overlaps: string[] = [];
    b.events$.subscribe((e) => {
      if (e.type === 'elected' && (a.isLeader() || !aSignal.aborted)) overlaps.push(`b elected while a acts`);
    });
    const aSignal = a.signal;
    const requested = await c.requestHandover({ to: 'b', reason: 'maintenance' });
    expect(requested).toMatchObject({ election: 'jobs', term: 1, to: 'b', requestedBy: 'c', reason: 'maintenance' });
    expect(await fx.memory.readHandover('jobs', { signal: signal() })).toEqual(requested);
    const startedAt = fx.clock.now();
    for (let waited = 0; !b.isLeader() && waited < timings.renewIntervalMs + timings.retryIntervalMs * 1.15 + 50; ) {
      await fx.clock.advance(10);
      waited += 10;
      if (!a.isLeader() && order.length === 0) order.push('a stepped down');
    }
    expect(b.isLeader()).toBe(true);
    expect(fx.clock.now() - startedAt).toBeLessThanOrEqual(
      timings.renewIntervalMs + timings.retryIntervalMs * 1.15 + 50,
    );
    expect(a.isLeader()).toBe(false);
    expect(c.isLeader()).toBe(false);
    expect(b.term).toBe(2);
    expect(events.find((e) => e.type === 'revoked')?.reason).toBe('handed over on request to b');
    expect(overlaps).toEqual([]);
    // The old leader sits out and the others follow b from now on: no further change for a while.
    await fx.clock.advance(10 * timings.retryIntervalMs);
    expect(b.isLeader()).toBe(true);
    expect(b.term).toBe(2);
  });

  it('the leader drains (beforeStepDown) while still leading, then the term ends, then beforeRelease, then the release', async () => {
    const log: string[] = [];
    let finishDrain!: () => void;
    const a = fx.elector('a', fx.memory, {
      handover: {
        beforeStepDown: (request: HandoverRequest) => {
          log.push(`drain ${request.to} leader=${a.isLeader()}`);
          return new Promise<void>((resolve) => {
            finishDrain = resolve;
          });
        },
        beforeRelease: async () => {
          log.push(`grace leader=${a.isLeader()} signal=${signal0.aborted}`);
        },
      },
    });
    await a.start();
    const signal0 = a.signal;
    const b = fx.elector('b');
    await b.start();
    await b.requestHandover({ to: 'b' });
    await fx.clock.advance(timings.renewIntervalMs + 10);
    expect(log).toEqual(['drain b leader=true']);
    // A drain longer than the renew deadline: the lease is renewed meanwhile, a stays leader.
    await fx.clock.advance(3 * timings.renewDeadlineMs);
    expect(a.isLeader()).toBe(true);
    expect(b.isLeader()).toBe(false);
    finishDrain();
    await fx.clock.advance(timings.retryIntervalMs * 1.2);
    expect(log).toEqual(['drain b leader=true', 'grace leader=false signal=true']);
    expect(b.isLeader()).toBe(true);
  });

  it('without `to`, another replica leads and the old leader sits out a round (force re-election)', async () => {
    const { a, b, c } = await threeReplicas();
    await a.requestHandover();
    await fx.clock.advance(timings.renewIntervalMs + timings.retryIntervalMs * 1.2);
    expect(a.isLeader()).toBe(false);
    expect([b.isLeader(), c.isLeader()].filter(Boolean)).toHaveLength(1);
  });

  it('a request to a replica that is not running: the reservation ends and another leads within the failover bound', async () => {
    const { a, b, c } = await threeReplicas();
    await b.requestHandover({ to: 'ghost' });
    await fx.clock.advance(timings.renewIntervalMs + 20);
    expect(a.isLeader()).toBe(false);
    expect((await fx.memory.read('jobs', { signal: signal() })).reservedFor).toBe('ghost');
    // Reserved for one lease; then the next poll (≤ retry + jitter) takes it.
    await fx.clock.advance(timings.leaseDurationMs + timings.retryIntervalMs * 1.15 + 20);
    expect([a.isLeader(), b.isLeader(), c.isLeader()].filter(Boolean)).toHaveLength(1);
  });

  it('a request for an earlier term is not honoured by a later leader', async () => {
    const { a, b } = await threeReplicas();
    const stale: HandoverRequest = {
      election: 'jobs',
      id: 'old',
      term: 0,
      to: 'c',
      requestedBy: 'x',
      reason: 'operator',
      requestedAt: 0,
    };
    await fx.memory.requestHandover(stale, { signal: signal() });
    await fx.clock.advance(5 * timings.renewIntervalMs);
    expect(a.isLeader()).toBe(true);
    expect(b.isLeader()).toBe(false);
  });

  it('nobody leads: the request is refused, naming the election; the named replica already leading: nothing recorded', async () => {
    const b = fx.elector('b');
    await expect(b.requestHandover({ to: 'b' })).rejects.toThrow(/"jobs": nobody leads it right now/);
    await expect(b.requestHandover()).rejects.toBeInstanceOf(NoLeaderError);
    await b.start();
    expect(b.isLeader()).toBe(true);
    await expect(b.requestHandover({ to: 'b' })).resolves.toBeUndefined();
    expect(await fx.memory.readHandover('jobs', { signal: signal() })).toBeUndefined();
    await expect(b.requestHandover({ to: '' })).rejects.toThrow(TypeError);
    await expect(b.requestHandover({ reason: 'x'.repeat(201) })).rejects.toThrow(/reason/);
  });

  it('spread: a request is declined unless the leader leads 2 more than the requester; declined requests are cleared', async () => {
    const { a, b } = await threeReplicas();
    a.setLeaderships(2);
    await b.requestHandover({ to: 'b', reason: 'spread', requesterLeaderships: 1 });
    await fx.clock.advance(timings.renewIntervalMs + 20);
    expect(a.isLeader()).toBe(true);
    expect(await fx.memory.readHandover('jobs', { signal: signal() })).toBeUndefined();
    await b.requestHandover({ to: 'b', reason: 'spread', requesterLeaderships: 0 });
    await fx.clock.advance(timings.renewIntervalMs + timings.retryIntervalMs * 1.2);
    expect(b.isLeader()).toBe(true);
  });

  it("where spread meets an operator: an operator's request written while the leader drains for a spread request takes the release", async () => {
    let finishDrain!: () => void;
    const lines: string[] = [];
    const a = fx.elector('a', fx.memory, {
      logger: { log: (line: string) => lines.push(line), warn: () => undefined, error: () => undefined },
      handover: {
        beforeStepDown: () =>
          new Promise<void>((resolve) => {
            finishDrain = resolve;
          }),
      },
    });
    await a.start();
    const [b, c] = [fx.elector('b'), fx.elector('c')];
    await b.start();
    await c.start();
    a.setLeaderships(2);
    const spread = await b.requestHandover({ to: 'b', reason: 'spread', requesterLeaderships: 0 });
    await fx.clock.advance(timings.renewIntervalMs + 20);
    expect(a.isLeader()).toBe(true);
    // Draining for b's spread request; an operator asks for c meanwhile (it replaces the spread request).
    const operator = await b.requestHandover({ to: 'c', reason: 'maintenance' });
    expect(operator?.term).toBe(spread?.term);
    await fx.clock.advance(2 * timings.renewIntervalMs);
    expect(a.isLeader()).toBe(true);
    finishDrain();
    // Released reserved for the operator's target, which takes it at once (the store pushes the release).
    await fx.clock.advance(timings.retryIntervalMs * 1.2);
    expect(c.isLeader()).toBe(true);
    expect(c.term).toBe(2);
    expect(b.isLeader()).toBe(false);
    expect(
      lines.filter((line) =>
        /maintenance request .* came while draining for request .*: the lease goes where it says/.test(line),
      ),
    ).toHaveLength(1);
    expect(
      lines.filter((line) =>
        new RegExp(`handover request ${operator?.id} done: lease released, reserved for c`).test(line),
      ),
    ).toHaveLength(1);
  });

  it('where a resignation meets an operator: a directed request pending for the term reserves the released lease for its target', async () => {
    const lines: string[] = [];
    const a = fx.elector('a', fx.memory, {
      logger: { log: (line: string) => lines.push(line), warn: () => undefined, error: () => undefined },
    });
    await a.start();
    const [b, c] = [fx.elector('b'), fx.elector('c')];
    await b.start();
    await c.start();
    const releases: unknown[] = [];
    const release = fx.memory.release.bind(fx.memory);
    fx.memory.release = (lease, options) => {
      releases.push(options.handoverTo);
      return release(lease, options);
    };
    // Written, and not yet read by a renewal, when the leader resigns (for stuck work, say).
    const operator = await b.requestHandover({ to: 'c', reason: 'maintenance' });
    await a.resign();
    expect(releases).toEqual(['c']);
    expect(lines.filter((line) => line.includes(`resigning while maintenance request ${operator?.id}`))).toHaveLength(
      1,
    );
    await fx.clock.advance(timings.retryIntervalMs * 1.2);
    expect(c.isLeader()).toBe(true);
    // A replica's own request (spread) pending at a resignation names nobody: released as before.
    await c.requestHandover({ to: 'b', reason: 'spread', requesterLeaderships: 0 });
    await c.resign();
    expect(releases).toEqual(['c', undefined]);
  });

  it('a resignation waits at most half a renew interval for the pending request: a store that hangs does not hold the release', async () => {
    const a = fx.elector('a');
    await a.start();
    // Hangs until its caller gives up, as a black-holed connection would.
    fx.memory.readHandover = (_election, { signal }) =>
      new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    let released = false;
    void a.resign().then(() => (released = true));
    await fx.clock.advance(timings.renewIntervalMs / 2 + 10);
    expect(released).toBe(true);
    expect(await fx.held()).toBe(false);
  });

  it('a directed handover pins the election on its new leader: spread requests are declined for handoverHoldMs', async () => {
    const a = fx.elector('a');
    const b = fx.elector('b', fx.memory, { handoverHoldMs: 60_000 });
    await a.start();
    await b.start();
    b.setLeaderships(5);
    await a.requestHandover({ to: 'b' });
    await fx.clock.advance(timings.renewIntervalMs + timings.retryIntervalMs * 1.2);
    expect(b.isLeader()).toBe(true);
    await fx.clock.advance(2 * timings.renewIntervalMs);
    // b learned from the request that a directed handover made it leader, and says so in its lease.
    expect((await fx.memory.read('jobs', { signal: signal() })).meta).toMatchObject({ leaderships: 5, pinned: true });
    await a.requestHandover({ to: 'a', reason: 'spread', requesterLeaderships: 0 });
    await fx.clock.advance(5 * timings.renewIntervalMs);
    expect(b.isLeader()).toBe(true);
    // After the hold, the same request is honoured.
    await fx.clock.advance(60_000);
    expect((await fx.memory.read('jobs', { signal: signal() })).meta).toEqual({ leaderships: 5 });
    await a.requestHandover({ to: 'a', reason: 'spread', requesterLeaderships: 0 });
    await fx.clock.advance(timings.renewIntervalMs + timings.retryIntervalMs * 1.2);
    expect(a.isLeader()).toBe(true);
  });

  it('advertise is stored with the lease: followers and status() see the leader’s', async () => {
    const a = fx.elector('a', fx.memory, { advertise: 'http://10.0.0.1:3000' });
    const b = fx.elector('b', fx.memory, { advertise: 'http://10.0.0.2:3000' });
    await a.start();
    await b.start();
    expect(a.status().leaderAdvertise).toBe('http://10.0.0.1:3000');
    expect(b.status()).toMatchObject({ leaderId: 'a', leaderAdvertise: 'http://10.0.0.1:3000', leaderTerm: 1 });
    expect(a.status()).toMatchObject({ leaderTerm: 1 });
    expect(() => fx.elector('c', fx.memory, { advertise: '' })).toThrow(/advertise must be a non-empty string/);
  });
});
