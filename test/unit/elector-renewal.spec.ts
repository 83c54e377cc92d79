// Issue 29: what rides on the leader's renewals. A store that folds (renewWith) gets ONE call per
// renewal, the pending handover request included; one that does not gets the renew and the separate
// read; a store that bills each read (readEveryNthRenewal) is asked every Nth renewal only; and a
// store that refuses a folded renewal as fatal never costs the leader its term.
import { FatalLeaseStoreError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { timings, useElectorFixture } from './elector-fixture.js';

/** `inner` behind a proxy counting every method call; `hide` removes members; `refuse` may refuse a call (its error). */
function counted(
  inner: InMemoryLeaseStore,
  extra: { hide?: string[]; readEveryNthRenewal?: number; refuse?: (method: string) => Error | undefined } = {},
) {
  const calls = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      if (typeof property === 'string' && extra.hide?.includes(property)) return undefined;
      if (property === 'readEveryNthRenewal') return extra.readEveryNthRenewal;
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor') return value;
      return (...args: unknown[]) => {
        calls.set(property, (calls.get(property) ?? 0) + 1);
        const refusal = extra.refuse?.(property);
        if (refusal) return Promise.reject(refusal);
        return Reflect.apply(value, target, args);
      };
    },
  }) as LeaseStore;
  return { store, calls };
}

describe('the leader renewal and what rides on it (issue 29)', () => {
  const fx = useElectorFixture();
  const renewals = 10;

  async function leadFor(store: LeaseStore, extra = {}) {
    const a = fx.elector('a', store, extra);
    await a.start();
    expect(a.isLeader()).toBe(true);
    await fx.clock.advance(renewals * timings.renewIntervalMs + 10);
    expect(a.isLeader()).toBe(true);
    return a;
  }

  it('a store that folds: one call per renewal, and a handover request still reaches the leader through it', async () => {
    const { store, calls } = counted(fx.memory);
    const a = await leadFor(store);
    expect(calls.get('renewWith')).toBe(renewals);
    expect([calls.get('renew'), calls.get('readHandover')]).toEqual([undefined, undefined]);
    // Another replica's request (written straight to the store): honoured at the next renewal.
    const b = fx.elector('b');
    await b.start();
    const events: string[] = [];
    a.events$.subscribe((event) => events.push(event.type));
    await b.requestHandover({ to: 'b' });
    await fx.clock.advance(timings.renewIntervalMs + 10);
    expect(events).toContain('revoked');
    expect(a.isLeader()).toBe(false);
    expect(calls.get('readHandover')).toBeUndefined();
  });

  it('a store that does not fold: the renew and the separate read of the pending request, each renewal', async () => {
    const { store, calls } = counted(fx.memory, { hide: ['renewWith'] });
    await leadFor(store);
    expect([calls.get('renew'), calls.get('readHandover')]).toEqual([renewals, renewals]);
  });

  it('readEveryNthRenewal 4: the request is read at the 1st, 5th, 9th renewal of the term, the renewals alone otherwise', async () => {
    const { store, calls } = counted(fx.memory, { hide: ['renewWith'], readEveryNthRenewal: 4 });
    await leadFor(store);
    expect([calls.get('renew'), calls.get('readHandover')]).toEqual([renewals, 3]);
    const folding = counted(new InMemoryLeaseStore({ clock: fx.clock }), { readEveryNthRenewal: 4 });
    await leadFor(folding.store);
    // A turn without a read carries nothing: the plain renew.
    expect([folding.calls.get('renewWith'), folding.calls.get('renew')]).toEqual([3, renewals - 3]);
  });

  it('a failed renewal does not use up its read turn: the next renewal reads', async () => {
    let failNext = false;
    const { store, calls } = counted(fx.memory, {
      hide: ['renewWith'],
      readEveryNthRenewal: 4,
      refuse: (method) => {
        if (method !== 'renew' || !failNext) return undefined;
        failNext = false;
        return new TransientLeaseStoreError('503 Server Busy');
      },
    });
    const a = fx.elector('a', store);
    await a.start();
    failNext = true;
    await fx.clock.advance(timings.renewIntervalMs + 10);
    expect(calls.get('readHandover')).toBeUndefined();
    await fx.clock.advance(timings.renewIntervalMs);
    expect(a.isLeader()).toBe(true);
    expect(calls.get('readHandover')).toBe(1);
  });

  it.each([0, 21, 1.5])('readEveryNthRenewal %s is refused at construction, naming the range', (every) => {
    const { store } = counted(fx.memory, { readEveryNthRenewal: every });
    expect(() => fx.elector('a', store)).toThrow(/readEveryNthRenewal must be an integer from 1 to 20/);
  });

  it('a folded renewal refused as fatal: the leader keeps its term, warns once, and renews alone from then on', async () => {
    const warnings: string[] = [];
    const { store, calls } = counted(fx.memory, {
      refuse: (method) =>
        method === 'renewWith' ? new FatalLeaseStoreError('column "records" does not exist') : undefined,
    });
    const logger = { log: () => undefined, error: () => undefined, warn: (m: string) => warnings.push(m) };
    await leadFor(store, { logger });
    expect(calls.get('renewWith')).toBe(1);
    expect([calls.get('renew'), calls.get('readHandover')]).toEqual([renewals, renewals]);
    expect(warnings.filter((w) => w.includes('refused a folded renewal'))).toHaveLength(1);
  });

  it('a store refusing every renewal (revoked credentials) does not turn folding off: once it answers again, one call per renewal', async () => {
    const warnings: string[] = [];
    let refusing = false;
    const { store, calls } = counted(fx.memory, {
      refuse: (method) =>
        refusing && method.startsWith('renew') ? new FatalLeaseStoreError('403 AuthorizationFailure') : undefined,
    });
    const logger = { log: () => undefined, error: () => undefined, warn: (m: string) => warnings.push(m) };
    const a = fx.elector('a', store, { logger });
    await a.start();
    refusing = true;
    await fx.clock.advance(2 * timings.renewIntervalMs + 10);
    // Each renewal tried the fold, then renewed alone: both refused, so the fold stays.
    expect([calls.get('renewWith'), calls.get('renew')]).toEqual([2, 2]);
    refusing = false;
    await fx.clock.advance(3 * timings.renewIntervalMs);
    expect(a.isLeader()).toBe(true);
    expect([calls.get('renewWith'), calls.get('renew')]).toEqual([5, 2]);
    expect(warnings.filter((w) => w.includes('refused a folded renewal'))).toHaveLength(0);
  });
});
