// The metrics' view of a LeaseStore must be the store itself to the elector: every member reaches
// the store (optional ones and capabilities added later included), results and errors unchanged.
import { instrumentLeaseStore, type StoreCallSink } from '../../lib/metrics/instrumented.store.js';
import { LeaseLostError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import type { LeaseWatch } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';

/** A store with #private state, an optional capability and a member no contract names yet. */
class CapableStore extends InMemoryLeaseStore {
  #watches = 0;
  readonly capabilities = { future: true };

  get watches(): number {
    return this.#watches;
  }
  failRenew?: Error;

  override watch(_election: string, _onMayBeFree: () => void): LeaseWatch {
    this.#watches += 1;
    return { close: async () => undefined };
  }

  async futureCapability(election: string): Promise<string> {
    return `future of ${election} after ${this.#watches} watch(es)`;
  }

  override async renew(...args: Parameters<InMemoryLeaseStore['renew']>): Promise<void> {
    if (this.failRenew) throw this.failRenew;
    return super.renew(...args);
  }
}

const signal = () => new AbortController().signal;

describe('instrumentLeaseStore', () => {
  it('forwards optional and unknown members to the store, with the store as `this`', async () => {
    const store = new CapableStore();
    const view = instrumentLeaseStore(store, {});
    expect('watch' in view).toBe(true);
    expect('close' in view).toBe('close' in store);
    expect(view.name).toBe(store.name);
    expect(view.limits).toBe(store.limits);
    expect(view.capabilities).toBe(store.capabilities);
    view.watch?.('e', () => undefined);
    expect(await view.futureCapability('e')).toBe('future of e after 1 watch(es)');
    expect(view.watches).toBe(1);
    expect(view).toBeInstanceOf(CapableStore);
    // Fetched twice, the same function: callers may compare or remove listeners by identity.
    expect(view.futureCapability).toBe(view.futureCapability);
  });

  it('leaves absent optional members absent', () => {
    const store = new InMemoryLeaseStore();
    const bare = Object.assign(Object.create(null), {
      name: store.name,
      limits: store.limits,
      acquire: store.acquire.bind(store),
      renew: store.renew.bind(store),
      release: store.release.bind(store),
      read: store.read.bind(store),
    });
    const view = instrumentLeaseStore(bare, {});
    expect('watch' in view).toBe(false);
    expect(view.watch).toBeUndefined();
    expect(view.close).toBeUndefined();
  });

  it('times each operation with its outcome and passes results and errors through unchanged', async () => {
    const calls: string[] = [];
    const hints: Array<number | undefined> = [];
    const sink: StoreCallSink = {
      recorder: {
        storeCall: (operation, outcome, seconds, holderExpiresInMs) => {
          expect(seconds).toBeGreaterThanOrEqual(0);
          calls.push(`${operation}:${outcome}`);
          hints.push(holderExpiresInMs);
        },
      },
    };
    const store = new CapableStore();
    const view = instrumentLeaseStore(store, sink);
    const won = await view.acquire({ election: 'e', identity: 'a', leaseDurationMs: 1000, signal: signal() });
    expect(won.acquired).toBe(true);
    const lost = await view.acquire({ election: 'e', identity: 'b', leaseDurationMs: 1000, signal: signal() });
    expect(lost).toEqual({ acquired: false, holder: 'a', term: 1, expiresInMs: expect.any(Number) });
    // The holder's remaining lease (the memory store's hint), passed through unchanged.
    expect(lost.acquired === false && lost.expiresInMs).toBeGreaterThan(0);
    expect(lost.acquired === false && lost.expiresInMs).toBeLessThanOrEqual(1000);
    if (!won.acquired) throw new Error('unreachable');
    await view.renew(won.lease, { leaseDurationMs: 1000, signal: signal() });
    const gone = new LeaseLostError('gone');
    store.failRenew = gone;
    await expect(view.renew(won.lease, { leaseDurationMs: 1000, signal: signal() })).rejects.toBe(gone);
    const raw = new Error('socket hang up');
    store.failRenew = raw;
    await expect(view.renew(won.lease, { leaseDurationMs: 1000, signal: signal() })).rejects.toBe(raw);
    store.failRenew = new TransientLeaseStoreError('503');
    await expect(view.renew(won.lease, { leaseDurationMs: 1000, signal: signal() })).rejects.toThrow('503');
    store.failRenew = undefined;
    // A folded renewal is a renewal to the metrics (the leader's renewals on a store that folds).
    const folded = await view.renewWith?.(won.lease, { leaseDurationMs: 1000, signal: signal(), readHandover: true });
    expect(folded).toEqual({ handover: null });
    await view.read('e', { signal: signal() });
    await view.release(won.lease, { signal: signal() });
    expect(calls).toEqual([
      'acquire:ok',
      'acquire:held',
      'renew:ok',
      'renew:lost',
      // An untyped error is transient to the elector, and so to the metrics.
      'renew:transient',
      'renew:transient',
      'renew:ok',
      'read:ok',
      'release:ok',
    ]);
    // Only the refused acquire carries the holder's remaining lease (the leaderless gauge's vouch).
    expect(hints).toEqual([undefined, lost.acquired === false && lost.expiresInMs, ...Array(7).fill(undefined)]);
  });

  it('measures nothing until a recorder is set', async () => {
    const sink: StoreCallSink = {};
    const view = instrumentLeaseStore(new InMemoryLeaseStore(), sink);
    await view.read('e', { signal: signal() });
    const seen: string[] = [];
    sink.recorder = { storeCall: (operation) => seen.push(operation) };
    await view.read('e', { signal: signal() });
    expect(seen).toEqual(['read']);
  });
});
