// Issue #24, defect 3: one request slot per election. An operator's request, recorded, must not be
// replaced by a spread request landing before the leader's next renewal (the leader would decline
// the spread request and nobody would move). Elector level, fake clock, in-memory store; the rule at
// each store is proved by the conformance suite ("the request slot").
import type { CallOptions, HandoverRequest, LeaseStore } from '../../lib/stores/lease-store.js';
import type { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { timings, useElectorFixture } from './elector-fixture.js';

const signal = () => new AbortController().signal;
/** Renewal, then a retry of the named follower (jitter ≤ 15 %). */
const HONOURED_WITHIN = timings.renewIntervalMs + timings.retryIntervalMs * 1.2;

/**
 * A third-party store written against the contract before `conditionalSpreadRequests`: it writes
 * every request unconditionally (replacing whatever is pending) and resolves nothing.
 */
class UnconditionalRequestStore implements LeaseStore {
  readonly name = 'UnconditionalRequestStore';
  readonly limits: LeaseStore['limits'];
  writes = 0;

  constructor(private readonly inner: InMemoryLeaseStore) {
    this.limits = inner.limits;
  }

  acquire: LeaseStore['acquire'] = (request) => this.inner.acquire(request);
  renew: LeaseStore['renew'] = (lease, options) => this.inner.renew(lease, options);
  release: LeaseStore['release'] = (lease, options) => this.inner.release(lease, options);
  read: LeaseStore['read'] = (election, options) => this.inner.read(election, options);
  readHandover = (election: string, options: CallOptions) => this.inner.readHandover(election, options);
  clearHandover = (election: string, id: string, options: CallOptions) =>
    this.inner.clearHandover(election, id, options);

  async requestHandover(request: HandoverRequest, options: CallOptions): Promise<void> {
    this.writes += 1;
    const pending = await this.inner.readHandover(request.election, options);
    if (pending) await this.inner.clearHandover(request.election, pending.id, options);
    await this.inner.requestHandover(request, options);
  }
}

describe('Elector: a spread request never replaces a pending operator request', () => {
  const fx = useElectorFixture();

  async function threeReplicas(store?: LeaseStore) {
    const logs: string[] = [];
    const logger = {
      log: () => undefined,
      debug: (m: string) => logs.push(`debug ${m}`),
      warn: (m: string) => logs.push(`warn ${m}`),
      error: (m: string) => logs.push(`error ${m}`),
    };
    const [a, b, c] = ['a', 'b', 'c'].map((id) => fx.elector(id, store ?? fx.memory, { logger }));
    if (!a || !b || !c) throw new Error('unreachable');
    await a.start();
    await b.start();
    await c.start();
    expect(a.isLeader()).toBe(true);
    return { a, b, c, logs };
  }

  it('operator to b, then spread from c before the next renewal: the spread request is not recorded, b leads', async () => {
    const { a, b, c, logs } = await threeReplicas();
    const operator = await a.requestHandover({ to: 'b', reason: 'operator', requestedBy: 'cli:ops@host' });
    // a leads 1, c leads 0: a would decline this spread request (difference rule) had it replaced the operator's.
    a.setLeaderships(1);
    await expect(c.requestHandover({ to: 'c', reason: 'spread', requesterLeaderships: 0 })).resolves.toBeUndefined();
    expect(await fx.memory.readHandover('jobs', { signal: signal() })).toEqual(operator);
    await fx.clock.advance(HONOURED_WITHIN);
    expect(b.isLeader()).toBe(true);
    expect(a.isLeader()).toBe(false);
    expect(c.isLeader()).toBe(false);
    // "Not now", said once at debug level: no warning or error for the spread balancer to repeat.
    expect(logs.filter((l) => !l.startsWith('debug'))).toEqual([]);
    expect(logs.filter((l) => l.includes('spread request not recorded'))).toHaveLength(1);
  });

  it('a pending spread request is replaced by an operator request, which is honoured', async () => {
    const { a, b, c } = await threeReplicas();
    a.setLeaderships(1);
    const spread = await c.requestHandover({ to: 'c', reason: 'spread', requesterLeaderships: 0 });
    expect(spread).toBeDefined();
    const operator = await b.requestHandover({ to: 'b' });
    expect(await fx.memory.readHandover('jobs', { signal: signal() })).toEqual(operator);
    await fx.clock.advance(HONOURED_WITHIN);
    expect(b.isLeader()).toBe(true);
  });

  it('a store that does not declare conditionalSpreadRequests: the elector reads first and does not write', async () => {
    const store = new UnconditionalRequestStore(fx.memory);
    const { a, b, c } = await threeReplicas(store);
    const operator = await a.requestHandover({ to: 'b' });
    expect(store.writes).toBe(1);
    a.setLeaderships(1);
    await expect(c.requestHandover({ to: 'c', reason: 'spread', requesterLeaderships: 0 })).resolves.toBeUndefined();
    expect(store.writes).toBe(1);
    expect(await fx.memory.readHandover('jobs', { signal: signal() })).toEqual(operator);
    await fx.clock.advance(HONOURED_WITHIN);
    expect(b.isLeader()).toBe(true);
  });
});
