// Issue 24, defect 2: the reservation a directed handover writes at release must be valid for every
// timing the options accept. Leases of SQL/Redis/etcd stores go up to 24 h and `standbyPollMs` up
// to an hour, so a reservation derived from them may be longer than an hour; options whose
// reservation the store cannot keep fail at construction, naming the option and the range; and a
// reservation the store refuses at release anyway never leaves the old lease blocking everyone.
import type { Elector, ElectorOptions } from '../../lib/election/elector.js';
import { FatalLeaseStoreError } from '../../lib/shared/errors.js';
import type { LeaseStore, ReleaseOptions } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { useElectorFixture } from './elector-fixture.js';

const HOUR = 3_600_000;
/** The limits every SQL store, Redis and etcd declare (store-support.ts `serverClockLimits`, etcd.store.ts). */
const SERVER_LIMITS = { minLeaseDurationMs: 1_000, maxLeaseDurationMs: 24 * HOUR, reason: 'server-side expiry' };
const LONG = {
  leaseDurationMs: 2 * HOUR,
  renewDeadlineMs: 1.6 * HOUR,
  renewIntervalMs: 0.4 * HOUR,
  retryIntervalMs: HOUR / 4,
};

describe('Elector: directed handover with long leases and long standby polls', () => {
  const fx = useElectorFixture();

  function serverLike(store: InMemoryLeaseStore = fx.memory): InMemoryLeaseStore {
    return Object.assign(store, { limits: SERVER_LIMITS });
  }

  /** Advances the fake clock until `elector` leads or `withinMs` passed; the time it took. */
  async function leadsWithin(elector: Elector, withinMs: number, stepMs = 1_000): Promise<number> {
    const from = fx.clock.now();
    while (!elector.isLeader() && fx.clock.now() - from < withinMs) await fx.clock.advance(stepMs);
    expect({ leader: elector.identity, leads: elector.isLeader() }).toEqual({ leader: elector.identity, leads: true });
    return fx.clock.now() - from;
  }

  it('lease 7,200,000 ms: requestHandover({ to }) moves leadership to the named replica within renew + retry', async () => {
    const store = serverLike();
    const warnings: string[] = [];
    const logger = { log: () => undefined, warn: (line: string) => warnings.push(line), error: () => undefined };
    const [a, b, c] = ['a', 'b', 'c'].map((id) => fx.elector(id, store, { ...LONG, logger }));
    for (const elector of [a, b, c]) await elector?.start();
    if (!a || !b || !c) throw new Error('unreachable');
    expect(a.isLeader()).toBe(true);
    await c.requestHandover({ to: 'b' });
    await leadsWithin(b, LONG.renewIntervalMs + 2 * LONG.retryIntervalMs);
    expect(a.isLeader()).toBe(false);
    expect(c.isLeader()).toBe(false);
    expect(warnings).toEqual([]);
  });

  it('activeFollowers 1, standbyPollMs 3,600,000: a standby named by a handover leads at its next poll', async () => {
    const store = serverLike();
    const standby: Partial<ElectorOptions> = { activeFollowers: 1, standbyPollMs: HOUR };
    const [a, b, c] = ['a', 'b', 'c'].map((id) => fx.elector(id, store, standby));
    if (!a || !b || !c) throw new Error('unreachable');
    for (const elector of [a, b, c]) await elector.start();
    await fx.clock.advance(2_000);
    expect(a.isLeader()).toBe(true);
    // One of b and c holds the slot; the other stands by, polling once an hour (±15 %).
    const slot = await store.read('~standby.0.jobs', { signal: new AbortController().signal });
    const heir = slot.holder === 'b' ? c : b;
    await a.requestHandover({ to: heir.identity });
    await leadsWithin(heir, HOUR * 1.15 + 2 * 1_000 + 500, 5_000);
    expect(a.isLeader()).toBe(false);
  });

  it('a reservation the store refuses at release: the lease is released without one, and a replica leads', async () => {
    const store = serverLike(new RefusingReservations({ clock: fx.clock }));
    const warnings: string[] = [];
    const logger = { log: () => undefined, warn: (line: string) => warnings.push(line), error: () => undefined };
    const [a, b] = ['a', 'b'].map((id) => fx.elector(id, store, { ...LONG, logger }));
    if (!a || !b) throw new Error('unreachable');
    await a.start();
    await b.start();
    await b.requestHandover({ to: 'b' });
    // Without the fallback the lease stays held until it expires: two hours nobody leads.
    await leadsWithin(b, LONG.renewIntervalMs + 2 * LONG.retryIntervalMs * 1.15 + 1_000);
    expect(warnings.join('\n')).toMatch(/reservation/);
  });
});

/** A store whose backend refuses every reservation (as a server would refuse a value it cannot keep). */
class RefusingReservations extends InMemoryLeaseStore implements LeaseStore {
  override release(lease: Parameters<LeaseStore['release']>[0], options: ReleaseOptions): Promise<void> {
    if (options.handoverTo !== undefined) return Promise.reject(new FatalLeaseStoreError('reservation refused'));
    return super.release(lease, options);
  }
}
