// Issue #28, the preferred leader, at the elector level (fake clock, in-memory store): the holder
// publishes its priority with its lease; a `priority` request carries the requester's priority and is
// honoured only when that is strictly higher, never while a directed handover pins the election, and
// never over an operator's pending request. A move by priority pins nothing. Which follower asks, and
// when, is the balancer's (priority-balancer.spec.ts, test/e2e/priority.spec.ts).
import type { Elector } from '../../lib/election/elector.js';
import { PRIORITY_REASON } from '../../lib/stores/lease-store.spread-rule.js';
import { timings, useElectorFixture } from './elector-fixture.js';

const signal = () => new AbortController().signal;
/** The leader reads the request at its next renewal; the heir takes the reserved lease at its next poll. */
const HONOURED_WITHIN = timings.renewIntervalMs + timings.retryIntervalMs * 1.2;

describe('Elector: priority (the preferred leader)', () => {
  const fx = useElectorFixture();

  async function replicas(priorities: Record<string, number>, logs: string[] = []): Promise<Record<string, Elector>> {
    const logger = {
      log: (m: string) => logs.push(m),
      warn: (m: string) => logs.push(m),
      error: (m: string) => logs.push(m),
    };
    const electors: Record<string, Elector> = {};
    for (const [identity, priority] of Object.entries(priorities)) {
      electors[identity] = fx.elector(identity, fx.memory, { priority, logger });
      await electors[identity]?.start();
    }
    return electors;
  }

  const meta = async () => (await fx.memory.read('jobs', { signal: signal() })).meta;

  it('the holder publishes its priority with its lease (none at 0), and status() shows ours and the leader’s', async () => {
    const { a, b } = await replicas({ a: 7, b: 0 });
    expect(a?.isLeader()).toBe(true);
    expect(await meta()).toEqual({ priority: 7 });
    expect(a?.status()).toMatchObject({ priority: 7, leaderPriority: 7, leaderId: 'a' });
    expect(b?.status()).toMatchObject({ priority: 0, leaderPriority: 7, leaderId: 'a' });
    await a?.resign();
    await fx.clock.advance(timings.retryIntervalMs * 1.2);
    expect(b?.isLeader()).toBe(true);
    // A default priority adds nothing to the meta: a lease as an older version writes it, read as 0.
    expect(await meta()).toBeUndefined();
    expect(a?.status()).toMatchObject({ priority: 7, leaderPriority: 0, leaderId: 'b' });
  });

  it('a request of higher priority is honoured: it carries the requester’s priority, and pins nothing', async () => {
    const logs: string[] = [];
    const { a, c } = await replicas({ a: 0, b: 0, c: 10 }, logs);
    const request = await c?.requestHandover({ to: 'c', reason: PRIORITY_REASON });
    expect(request).toMatchObject({ to: 'c', reason: 'priority', requesterPriority: 10, term: 1 });
    await fx.clock.advance(HONOURED_WITHIN);
    expect(c?.isLeader()).toBe(true);
    expect(a?.isLeader()).toBe(false);
    expect(logs.some((l) => l.includes('honours handover request') && l.includes('(priority'))).toBe(true);
    // Not pinned: the meta says so after two renewals, and a still higher replica may take over.
    await fx.clock.advance(3 * timings.renewIntervalMs);
    expect(await meta()).toEqual({ priority: 10 });
    const d = fx.elector('d', fx.memory, { priority: 20 });
    await d.start();
    await d.requestHandover({ to: 'd', reason: PRIORITY_REASON });
    await fx.clock.advance(HONOURED_WITHIN);
    expect(d.isLeader()).toBe(true);
  });

  it('equal or lower priority: declined, the request cleared, nothing moves', async () => {
    const logs: string[] = [];
    const { a, b, c } = await replicas({ a: 5, b: 5, c: 1 }, logs);
    await b?.requestHandover({ to: 'b', reason: PRIORITY_REASON });
    await fx.clock.advance(timings.renewIntervalMs + 20);
    expect(logs.filter((l) => l.includes('declined'))).toEqual([
      expect.stringContaining(
        "this replica's priority is 5, the requester's 5; only a higher priority takes the lease",
      ),
    ]);
    expect(await fx.memory.readHandover('jobs', { signal: signal() })).toBeUndefined();
    await c?.requestHandover({ to: 'c', reason: PRIORITY_REASON });
    await fx.clock.advance(10 * timings.renewIntervalMs);
    expect(a?.isLeader()).toBe(true);
    expect(a?.term).toBe(1);
    expect(logs.filter((l) => l.includes('declined'))).toHaveLength(2);
  });

  it('a directed handover pins the election: a priority request is declined while it holds', async () => {
    const logs: string[] = [];
    const { b, c } = await replicas({ a: 0, b: 0, c: 10 }, logs);
    await c?.requestHandover({ to: 'b' });
    await fx.clock.advance(HONOURED_WITHIN);
    expect(b?.isLeader()).toBe(true);
    // b learns at its first renewal that an operator chose it, and says so from the next.
    await fx.clock.advance(2 * timings.renewIntervalMs + 20);
    expect(await meta()).toEqual({ pinned: true });
    await c?.requestHandover({ to: 'c', reason: PRIORITY_REASON });
    await fx.clock.advance(3 * timings.renewIntervalMs);
    expect(b?.isLeader()).toBe(true);
    expect(logs.filter((l) => l.includes('declined'))).toEqual([
      expect.stringContaining('a directed handover made this replica the leader; spread and priority leave it here'),
    ]);
  });

  it('a pin that runs out leaves the store’s meta (nothing else to publish: it used to say pinned all term)', async () => {
    const [a, b] = ['a', 'b'].map((id) => fx.elector(id, fx.memory, { handoverHoldMs: 2_000 }));
    await a?.start();
    await b?.start();
    await a?.requestHandover({ to: 'b' });
    await fx.clock.advance(HONOURED_WITHIN + 2 * timings.renewIntervalMs);
    expect(b?.isLeader()).toBe(true);
    expect(await meta()).toEqual({ pinned: true });
    await fx.clock.advance(2_000 + timings.renewIntervalMs);
    expect(await meta()).toEqual({});
    expect(b?.term).toBe(2);
  });

  it('never replaces an operator’s pending request: resolves undefined, and the operator’s choice is honoured', async () => {
    const logs: string[] = [];
    const { a, b, c } = await replicas({ a: 0, b: 0, c: 10 }, logs);
    const debug: string[] = [];
    const logger = {
      log: () => undefined,
      warn: () => undefined,
      error: () => undefined,
      debug: (m: string) => debug.push(m),
    };
    const c2 = fx.elector('c2', fx.memory, { priority: 10, logger });
    await c2.start();
    const operator = await a?.requestHandover({ to: 'b', requestedBy: 'cli:ops@host' });
    await expect(c2.requestHandover({ to: 'c2', reason: PRIORITY_REASON })).resolves.toBeUndefined();
    expect(debug.filter((l) => l.includes('not recorded'))).toEqual([
      expect.stringContaining('priority request not recorded: a request of another kind'),
    ]);
    expect(await fx.memory.readHandover('jobs', { signal: signal() })).toEqual(operator);
    await fx.clock.advance(HONOURED_WITHIN);
    expect(b?.isLeader()).toBe(true);
    expect(c?.isLeader()).toBe(false);
  });

  it('refuses an invalid priority at construction, naming the option and its range', () => {
    expect(() => fx.elector('x', fx.memory, { priority: 2.5 })).toThrow(
      'priority must be a whole number from -9007199254740991 to 9007199254740991 (got 2.5)',
    );
  });
});
