// Issue 16: leader state through the elector. writeState is fenced twice: the elector refuses it
// at once when not leading (or past its deadline), and the store refuses a stale lease.

import { LeaseLostError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import type {
  AcquireRequest,
  CallOptions,
  Lease,
  LeaseStore,
  RenewOptions,
  StateCallOptions,
} from '../../lib/stores/lease-store.js';
import type { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { timings, useElectorFixture } from './elector-fixture.js';

/** A real memory store behind a door: counts state writes, can hang them or answer "lost". */
class StateProbeStore implements LeaseStore {
  readonly name = 'StateProbeStore';
  readonly limits;
  writes = 0;
  writeFault: 'pass' | 'hang' | 'lost' = 'pass';

  constructor(private readonly inner: InMemoryLeaseStore) {
    this.limits = inner.limits;
  }
  acquire(request: AcquireRequest) {
    return this.inner.acquire(request);
  }
  renew(lease: Lease, options: RenewOptions) {
    return this.inner.renew(lease, options);
  }
  release(lease: Lease, options: CallOptions) {
    return this.inner.release(lease, options);
  }
  read(election: string, options: CallOptions) {
    return this.inner.read(election, options);
  }
  readState(election: string, options: StateCallOptions) {
    return this.inner.readState(election, options);
  }
  async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    this.writes += 1;
    if (this.writeFault === 'lost') throw new LeaseLostError('taken over');
    // Ignores its signal on purpose: the elector's own bound must end the wait.
    if (this.writeFault === 'hang') return new Promise<void>(() => undefined);
    return this.inner.writeState(lease, value, options);
  }
}

describe('Elector leader state', () => {
  const fx = useElectorFixture();

  it('a leader writes, any replica reads the value with the term that wrote it', async () => {
    const a = fx.elector('a');
    const b = fx.elector('b');
    await a.start();
    await b.start();
    expect(a.isLeader()).toBe(true);
    await a.writeState({ cursor: 41 });
    await a.writeState({ cursor: 42 });
    await a.writeState(7, 'other');
    expect(await b.readState()).toEqual({ value: { cursor: 42 }, term: a.term });
    expect(await b.readState('other')).toEqual({ value: 7, term: a.term });
    expect(await b.readState('never')).toBeUndefined();
  });

  it('a follower writeState rejects at once with LeaseLostError, without reaching the store', async () => {
    const store = new StateProbeStore(fx.memory);
    const a = fx.elector('a', store);
    const b = fx.elector('b', store);
    await a.start();
    await b.start();
    await expect(b.writeState('mine')).rejects.toBeInstanceOf(LeaseLostError);
    await expect(b.writeState('mine')).rejects.toThrow(/not the leader/);
    expect(store.writes).toBe(0);
  });

  it('a leader paused past its deadline cannot write: rejected without reaching the store; the successor keeps its value', async () => {
    const store = new StateProbeStore(fx.memory);
    const a = fx.elector('a', store);
    await a.start();
    await a.writeState({ seq: 1 });
    const writesBefore = store.writes;
    // SIGSTOP-like pause: time passes, no timer runs; the lease expires and b takes it meanwhile.
    fx.clock.jump(timings.leaseDurationMs + 1);
    const b = fx.elector('b', store);
    await b.start();
    expect(b.isLeader()).toBe(true);
    await b.writeState({ seq: 2 });
    // a resumes and writes its (stale) checkpoint: its own deadline has passed, so nothing is sent.
    await expect(a.writeState({ seq: 1.5 })).rejects.toBeInstanceOf(LeaseLostError);
    expect(store.writes).toBe(writesBefore + 1);
    expect(a.isLeader()).toBe(false);
    expect(await a.readState()).toEqual({ value: { seq: 2 }, term: b.term });
  });

  it('a stale lease is refused by the store itself (the elector still believes it leads)', async () => {
    const a = fx.elector('a');
    await a.start();
    const lease = { election: 'jobs', holder: 'a', leaseId: 'not-ours', term: a.term ?? 0 };
    // The store's own check, independent of the elector: a lease id that is not current.
    await expect(fx.memory.writeState(lease, 'x', { signal: new AbortController().signal })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    expect(await a.readState()).toBeUndefined();
  });

  it('a LeaseLostError from the store ends the term at once', async () => {
    const store = new StateProbeStore(fx.memory);
    const a = fx.elector('a', store);
    const events = fx.record(a);
    await a.start();
    const signal = a.signal;
    store.writeFault = 'lost';
    await expect(a.writeState(1)).rejects.toBeInstanceOf(LeaseLostError);
    expect(a.isLeader()).toBe(false);
    expect(signal.aborted).toBe(true);
    expect(events.map((e) => e.type)).toContain('revoked');
  });

  it('a write is bounded by the term: a store that hangs is given up at the deadline', async () => {
    const store = new StateProbeStore(fx.memory);
    const a = fx.elector('a', store, { renewIntervalMs: 1900 });
    await a.start();
    const startedAt = fx.clock.now();
    await fx.clock.advance(500);
    store.writeFault = 'hang';
    let settledAt: number | undefined;
    const write = a.writeState('slow').finally(() => {
      settledAt = fx.clock.now();
    });
    write.catch(() => undefined);
    // The term's remaining time when the write was sent: its deadline is acquire sent + 2000.
    await fx.clock.advance(timings.renewDeadlineMs - 500 - 1);
    expect(settledAt).toBeUndefined();
    await fx.clock.advance(1);
    await expect(write).rejects.toBeInstanceOf(TransientLeaseStoreError);
    expect(settledAt).toBe(startedAt + timings.renewDeadlineMs);
  });

  it('size limit and keys are the store rules: 64 KiB accepted, more rejected naming the limit', async () => {
    const a = fx.elector('a');
    await a.start();
    await a.writeState('x'.repeat(65_536 - 2));
    await expect(a.writeState('x'.repeat(65_536))).rejects.toThrow(/maxStateBytes \(65536 bytes\)/);
    await expect(a.writeState(1, 'bad key')).rejects.toThrow(/key/);
  });

  it('a store without the capability: both reject naming the store', async () => {
    const plain: LeaseStore = {
      name: 'PlainStore',
      limits: fx.memory.limits,
      acquire: (r) => fx.memory.acquire(r),
      renew: (l, o) => fx.memory.renew(l, o),
      release: (l, o) => fx.memory.release(l, o),
      read: (e, o) => fx.memory.read(e, o),
    };
    const a = fx.elector('a', plain);
    await a.start();
    expect(a.supportsState).toBe(false);
    await expect(a.writeState(1)).rejects.toThrow(/PlainStore does not support leader state/);
    await expect(a.readState()).rejects.toThrow(/PlainStore does not support leader state/);
  });
});
