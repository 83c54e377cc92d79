// The store-support module on its own: what every store inherits from it, with a protocol whose
// timing the test controls (the conformance suites show the same on real servers).
import { jest } from '@jest/globals';
import { FatalLeaseStoreError, LeaseLostError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import { stateUnsupportedError, supportsState } from '../../lib/stores/lease-store.capabilities.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import {
  DEFAULT_MAX_STATE_BYTES,
  decodeStateEntry,
  onceUntilDone,
  prepareStateWrite,
  withStateColumn,
} from '../../lib/stores/state-support.js';
import { type AcquireProtocol, StoreCallKit, WatchFanOut } from '../../lib/stores/store-support.js';

const request = (signal: AbortSignal) => ({ election: 'e', identity: 'me', leaseDurationMs: 5_000, signal });

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function calls(busy: boolean[] = []) {
  return new StoreCallKit({
    name: 'TestStore',
    classify: (error) => new FatalLeaseStoreError(`classified: ${String(error)}`),
    onBusy: (value) => busy.push(value),
  });
}

describe('StoreCallKit', () => {
  it('run: settles at the abort even when the work does not, classifies driver errors, passes typed ones', async () => {
    const support = calls();
    const controller = new AbortController();
    const hanging = support.run(controller.signal, () => new Promise(() => undefined));
    controller.abort(new Error('gave up'));
    await expect(hanging).rejects.toBeInstanceOf(TransientLeaseStoreError);
    await expect(support.run(AbortSignal.timeout(1_000), async () => Promise.reject('boom'))).rejects.toThrow(
      'classified: boom',
    );
    const lost = new LeaseLostError('not ours');
    await expect(support.run(AbortSignal.timeout(1_000), async () => Promise.reject(lost))).rejects.toBe(lost);
  });

  it('run: step() refuses to send another request once the signal aborted', async () => {
    const support = calls();
    const controller = new AbortController();
    const sent: string[] = [];
    const gate = deferred<void>();
    const call = support.run(controller.signal, async (step) => {
      sent.push('first');
      await gate.promise;
      step();
      sent.push('second');
    });
    controller.abort();
    gate.resolve();
    await expect(call).rejects.toBeInstanceOf(TransientLeaseStoreError);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['first']);
  });

  it('acquire: a clear answer is returned as is and nothing is given back', async () => {
    const support = calls();
    const released: string[] = [];
    const protocol: AcquireProtocol = {
      attempt: async () => ({ acquired: false, holder: 'other', term: 3 }),
      releaseAttempt: async (leaseId) => released.push(leaseId),
    };
    expect(await support.acquire(request(AbortSignal.timeout(1_000)), protocol)).toEqual({
      acquired: false,
      holder: 'other',
      term: 3,
    });
    expect(released).toEqual([]);
  });

  it("acquire: an unknown outcome gives the attempt's own lease id back at once, and again once the call settled", async () => {
    const support = calls();
    const released: string[] = [];
    const late = deferred<never>();
    let attempted: string | undefined;
    const protocol: AcquireProtocol = {
      attempt: async (leaseId) => {
        attempted = leaseId;
        return late.promise;
      },
      releaseAttempt: async (leaseId) => released.push(leaseId),
    };
    const controller = new AbortController();
    const call = support.acquire(request(controller.signal), protocol);
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(TransientLeaseStoreError);
    await new Promise((resolve) => setImmediate(resolve));
    expect(attempted).toMatch(/^[0-9a-f-]{36}$/);
    expect(released).toEqual([attempted]);
    // The abandoned request lands (here: fails) later; its id is given back once more.
    late.reject(new Error('connection reset'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(released).toEqual([attempted, attempted]);
  });

  it('acquire: refused before anything was sent (aborted signal, closed store) undoes nothing', async () => {
    const support = calls();
    const released: string[] = [];
    const protocol: AcquireProtocol = {
      attempt: async () => ({ acquired: false }),
      releaseAttempt: async (leaseId) => released.push(leaseId),
    };
    await expect(support.acquire(request(AbortSignal.abort()), protocol)).rejects.toBeInstanceOf(
      TransientLeaseStoreError,
    );
    await support.close({});
    await expect(support.acquire(request(AbortSignal.timeout(1_000)), protocol)).rejects.toThrow('TestStore is closed');
    expect(released).toEqual([]);
  });

  it('close: waits for the give-backs, refuses calls afterwards, disconnects once; onBusy follows the calls in flight', async () => {
    const busy: boolean[] = [];
    const support = calls(busy);
    const giveBack = deferred<void>();
    const order: string[] = [];
    const protocol: AcquireProtocol = {
      attempt: async () => Promise.reject(new Error('reply lost')),
      releaseAttempt: async () => {
        await giveBack.promise;
        order.push('given back');
      },
    };
    await expect(support.acquire(request(AbortSignal.timeout(1_000)), protocol)).rejects.toThrow('classified');
    const disconnect = jest.fn(() => {
      order.push('disconnected');
    });
    const closing = support.close({ disconnect });
    expect(support.close({ disconnect })).toBe(closing);
    setTimeout(() => giveBack.resolve(), 50);
    await closing;
    expect(order).toEqual(['given back', 'given back', 'disconnected']);
    expect(disconnect).toHaveBeenCalledTimes(1);
    expect(() => support.assertOpen()).toThrow('TestStore is closed');
    expect(busy[0]).toBe(true);
    expect(busy.at(-1)).toBe(false);
  });
});

describe('WatchFanOut', () => {
  it('wakes the watchers of one election, all of them after a reconnect; connects on the first, lets go after the last', async () => {
    const hooks: string[] = [];
    const fanOut = new WatchFanOut({ onFirst: () => hooks.push('first'), onEmpty: () => hooks.push('empty') });
    const woken: string[] = [];
    const a = fanOut.add('jobs', () => woken.push('a'));
    const b = fanOut.add('jobs', () => woken.push('b'));
    const c = fanOut.add('mail', () => woken.push('c'));
    fanOut.notify('jobs');
    expect(woken).toEqual(['a', 'b']);
    fanOut.wakeAll();
    expect(woken).toEqual(['a', 'b', 'a', 'b', 'c']);
    await a.close();
    await a.close();
    await b.close();
    expect(hooks).toEqual(['first']);
    await c.close();
    expect(hooks).toEqual(['first', 'empty']);
    fanOut.notify('jobs');
    expect(woken).toHaveLength(5);
  });
});

describe('leader-state support', () => {
  const lease = { election: 'e', holder: 'h', leaseId: 'id', term: 7 };
  const store = (maxStateBytes?: number) => ({
    name: 'TestStore',
    limits: { minLeaseDurationMs: 1, maxLeaseDurationMs: 10, reason: 'test', maxStateBytes },
  });
  const signal = AbortSignal.timeout(1_000);

  it('prepareStateWrite: the entry carries the term; the limit is the declared one, never below 64 KiB', () => {
    expect(prepareStateWrite(store(), lease, { a: 'ü' }, { signal })).toEqual({
      key: 'state',
      json: '{"a":"ü"}',
      entry: '{"value":{"a":"ü"},"term":7}',
    });
    const atLimit = (bytes: number) => 'a'.repeat(bytes - 2);
    expect(() => prepareStateWrite(store(1_000), lease, atLimit(DEFAULT_MAX_STATE_BYTES), { signal })).not.toThrow();
    expect(() => prepareStateWrite(store(), lease, atLimit(DEFAULT_MAX_STATE_BYTES + 1), { signal })).toThrow(
      /65537 bytes of JSON, more than limits.maxStateBytes \(65536 bytes\)/,
    );
    expect(() => prepareStateWrite(store(100_000), lease, atLimit(100_000), { signal })).not.toThrow();
    expect(() => prepareStateWrite(store(100_000), lease, atLimit(100_001), { signal })).toThrow(RangeError);
    // Counted in UTF-8 bytes: 30 000 three-byte characters are 90 002 bytes of JSON.
    expect(() => prepareStateWrite(store(), lease, '€'.repeat(30_000), { signal })).toThrow(/90002 bytes/);
    expect(() => prepareStateWrite(store(), lease, () => 1, { signal })).toThrow(TypeError);
    expect(() => prepareStateWrite(store(), lease, 1, { key: 'a"b', signal })).toThrow(TypeError);
  });

  it('decodeStateEntry: a stored entry as JSON text or parsed; anything else is fatal, never guessed at', () => {
    expect(decodeStateEntry('S', 'e', 'k', '{"value":null,"term":3}')).toEqual({ value: null, term: 3 });
    expect(decodeStateEntry('S', 'e', 'k', { value: [1], term: '4' })).toEqual({ value: [1], term: 4 });
    for (const bad of ['not json', '{"term":1}', '{"value":1}', '{"value":1,"term":"x"}', 5, null, '[]']) {
      expect(() => decodeStateEntry('S', 'e', 'k', bad)).toThrow(FatalLeaseStoreError);
    }
  });

  it('supportsState needs both methods; the unsupported error names the store', () => {
    expect(supportsState(new InMemoryLeaseStore())).toBe(true);
    const half = Object.assign(Object.create(InMemoryLeaseStore.prototype), { readState: undefined });
    expect(supportsState(half)).toBe(false);
    const error = stateUnsupportedError({ name: 'ThirdPartyStore' });
    expect(error).toBeInstanceOf(FatalLeaseStoreError);
    expect(error.message).toContain('ThirdPartyStore does not support leader state');
  });

  it('onceUntilDone: one run for concurrent callers, again after a failure, never after a success', async () => {
    let runs = 0;
    let fail = true;
    const once = onceUntilDone(async () => {
      runs += 1;
      if (fail) throw new Error('boom');
    });
    await expect(Promise.all([once(), once()])).rejects.toThrow('boom');
    expect(runs).toBe(1);
    fail = false;
    await Promise.all([once(), once()]);
    await once();
    expect(runs).toBe(2);
  });

  it('withStateColumn: migrates and retries when allowed, else a fatal error with the driver error as cause', async () => {
    const missing = Object.assign(new Error('column "state" does not exist'), { code: '42703' });
    const column = (createTable: boolean) => ({
      missing: (error: unknown) => error === missing,
      migrate: jest.fn(async () => undefined),
      createTable,
      missingError: () => new FatalLeaseStoreError('run the migration'),
    });
    const step = jest.fn();
    let calls = 0;
    const work = async () => {
      calls += 1;
      if (calls === 1) throw missing;
      return 'ok';
    };
    const allowed = column(true);
    expect(await withStateColumn(step, allowed, work)).toBe('ok');
    expect(allowed.migrate).toHaveBeenCalledTimes(1);
    expect(step).toHaveBeenCalledTimes(1);

    calls = 0;
    const refused = column(false);
    const error = await withStateColumn(step, refused, work).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FatalLeaseStoreError);
    expect((error as Error).cause).toBe(missing);
    expect(refused.migrate).not.toHaveBeenCalled();
    // Other failures pass through untouched.
    const other = new Error('other');
    await expect(withStateColumn(step, allowed, () => Promise.reject(other))).rejects.toBe(other);
  });
});
