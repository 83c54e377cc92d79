// The leader-state capability (writeState/readState), run by describeLeaseStoreConformance for every
// store whose target says `leaderState: true`; a store that says nothing must declare neither method.
// Every case uses its own election, so they run concurrently like the lease cases.
import { randomBytes, randomUUID } from 'node:crypto';
import { LeaseLostError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import { type StateCapableStore, supportsState } from '../../lib/stores/lease-store.capabilities.js';
import type { Lease, LeaseStore, StateCallOptions } from '../../lib/stores/lease-store.js';
import { DEFAULT_MAX_STATE_BYTES } from '../../lib/stores/state-support.js';
import type { ConformanceTarget } from './lease-store.conformance.js';

const CALL_TIMEOUT_MS = 10_000;
const PROMPT_MS = 2_000;
/** The signal of the write whose reply gets lost. */
const LOST_CALL_TIMEOUT_MS = 2_000;
const FAST_TEST_TIMEOUT_MS = 60_000;
/** Handovers of the interleaving case, each with a stale holder writing in a tight loop. */
const HANDOVERS = 8;
const STALE_WRITES_PER_HANDOVER = 12;

export function describeLeaderStateConformance(name: string, t: ConformanceTarget): void {
  describe(`LeaderState conformance: ${name}`, () => {
    const durationMs = t.leaseDurationMs;
    const expiryWaitMs = durationMs + Math.max(1_000, durationMs / 5);
    const slowTestTimeoutMs = 3 * durationMs + 60_000;
    const opened = new Set<LeaseStore>();

    afterAll(async () => {
      await Promise.allSettled([...opened].map((store) => store.close?.()));
    });

    if (!t.leaderState) {
      test('a store that does not declare leader state implements neither method', async () => {
        const store = await t.createStore();
        opened.add(store);
        expect(store.writeState).toBeUndefined();
        expect(store.readState).toBeUndefined();
      });
      return;
    }

    async function newStore(): Promise<StateCapableStore> {
      const store = await t.createStore();
      opened.add(store);
      if (!supportsState(store)) throw new Error(`${store.name} does not declare writeState and readState`);
      return store;
    }

    async function acquireOk(store: LeaseStore, election: string, identity: string): Promise<Lease> {
      const result = await store.acquire({ election, identity, leaseDurationMs: durationMs, signal: callSignal() });
      if (!result.acquired) throw new Error(`expected ${identity} to acquire "${election}"`);
      return result.lease;
    }

    const write = (store: StateCapableStore, lease: Lease, value: unknown, key?: string) =>
      store.writeState(lease, value, options(key));
    const readState = (store: StateCapableStore, election: string, key?: string) =>
      store.readState(election, options(key));

    test.concurrent(
      'a leader writes, another store instance reads the value with the writing term',
      async () => {
        const election = electionName('write-read');
        const [a, b] = [await newStore(), await newStore()];
        expect(await readState(b, election)).toBeUndefined();
        const lease = await acquireOk(a, election, 'a');
        expect(await readState(b, election)).toBeUndefined();

        const value = { cursor: 'ü/1 "quoted"', n: 3, nested: [null, true, 1.5], empty: {} };
        await write(a, lease, value);
        expect(await readState(b, election)).toEqual({ value, term: lease.term });
        // The default key is 'state'.
        expect(await readState(b, election, 'state')).toEqual({ value, term: lease.term });
        // Overwritten as a whole, and any JSON value (a bare null, a number) round-trips.
        for (const next of [null, 42, 'text', [1, 2]]) {
          await write(a, lease, next);
          expect(await readState(b, election)).toEqual({ value: next, term: lease.term });
        }
        await a.release(lease, { signal: callSignal() });
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'after expiry and takeover the old lease cannot write, the state survives the acquire, the new leader wins',
      async () => {
        const election = electionName('takeover');
        const [a, b] = [await newStore(), await newStore()];
        const old = await acquireOk(a, election, 'a');
        await write(a, old, { checkpoint: 1 });
        await write(a, old, { checkpoint: 1 }, 'tick:job');
        await sleep(expiryWaitMs);
        const next = await acquireOk(b, election, 'b');
        expect(next.term).toBeGreaterThan(old.term);
        // An acquire never clears state: the next leader continues from the checkpoint.
        expect(await readState(b, election)).toEqual({ value: { checkpoint: 1 }, term: old.term });

        const refused = await expectLost(write(a, old, { checkpoint: 0 }));
        expect((refused as Error).message).toContain(election);
        await expectLost(write(a, old, { checkpoint: 0 }, 'tick:job'));
        expect(await readState(a, election)).toEqual({ value: { checkpoint: 1 }, term: old.term });
        expect(await readState(a, election, 'tick:job')).toEqual({ value: { checkpoint: 1 }, term: old.term });

        await write(b, next, { checkpoint: 2 });
        expect(await readState(a, election)).toEqual({ value: { checkpoint: 2 }, term: next.term });
        await expectLost(write(a, old, { checkpoint: 0 }));
        expect(await readState(b, election)).toEqual({ value: { checkpoint: 2 }, term: next.term });
        await b.release(next, { signal: callSignal() });
      },
      slowTestTimeoutMs,
    );

    test.concurrent(
      'an expired lease cannot write even when nobody took it over (expiry judged by the store)',
      async () => {
        const election = electionName('expired');
        const [a, b] = [await newStore(), await newStore()];
        const lease = await acquireOk(a, election, 'a');
        await write(a, lease, 'before expiry');
        await sleep(expiryWaitMs);
        expect((await b.read(election, { signal: callSignal() })).held).toBe(false);
        await expectLost(write(a, lease, 'after expiry'));
        expect(await readState(b, election)).toEqual({ value: 'before expiry', term: lease.term });
      },
      slowTestTimeoutMs,
    );

    test.concurrent(
      'a released lease, a stranger lease id and a never-acquired election cannot write',
      async () => {
        const election = electionName('released');
        const [a, b] = [await newStore(), await newStore()];
        const lease = await acquireOk(a, election, 'a');
        await write(a, lease, 'kept');
        const stranger: Lease = { ...lease, holder: 'stranger', leaseId: randomUUID() };
        await expectLost(write(b, stranger, 'stranger'));
        await a.release(lease, { signal: callSignal() });
        await expectLost(write(a, lease, 'after release'));
        expect(await readState(b, election)).toEqual({ value: 'kept', term: lease.term });

        const never = electionName('never');
        await expectLost(write(a, { ...lease, election: never }, 'x'));
        expect(await readState(b, never)).toBeUndefined();
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'keys are independent: writing tick:x never touches state, and the other way round',
      async () => {
        const election = electionName('keys');
        const [a, b] = [await newStore(), await newStore()];
        const lease = await acquireOk(a, election, 'a');
        await write(a, lease, { user: 1 });
        await write(a, lease, { tick: '10:00' }, 'tick:x');
        await write(a, lease, { tick: '10:05' }, 'tick:y.z-1_2');
        expect(await readState(b, election)).toEqual({ value: { user: 1 }, term: lease.term });
        await write(a, lease, { user: 2 });
        expect(await readState(b, election, 'tick:x')).toEqual({ value: { tick: '10:00' }, term: lease.term });
        expect(await readState(b, election, 'tick:y.z-1_2')).toEqual({ value: { tick: '10:05' }, term: lease.term });
        expect(await readState(b, election)).toEqual({ value: { user: 2 }, term: lease.term });
        expect(await readState(b, election, 'tick:unknown')).toBeUndefined();
        // A key is a namespace name, not a path: anything outside [A-Za-z0-9._:-]{1,200} is refused.
        for (const key of ['', 'a/b', 'a b', '$.x', 'x'.repeat(201), 'ä']) {
          await expect(write(a, lease, 1, key)).rejects.toBeInstanceOf(TypeError);
          await expect(readState(b, election, key)).rejects.toBeInstanceOf(TypeError);
        }
        await write(a, lease, 'long key', 'k'.repeat(200));
        expect(await readState(b, election, 'k'.repeat(200))).toEqual({ value: 'long key', term: lease.term });
        await a.release(lease, { signal: callSignal() });
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'a value of exactly maxStateBytes (UTF-8 JSON) is stored, one byte more is refused naming the limit',
      async () => {
        const election = electionName('size');
        const [a, b] = [await newStore(), await newStore()];
        const limit = a.limits.maxStateBytes ?? DEFAULT_MAX_STATE_BYTES;
        expect(limit).toBeGreaterThanOrEqual(DEFAULT_MAX_STATE_BYTES);
        const lease = await acquireOk(a, election, 'a');
        // Two-byte characters, so the limit counts bytes of UTF-8, not string length.
        const wide = 'ü'.repeat(1_000);
        const fits = wide + 'a'.repeat(limit - 2 - 2 * wide.length);
        expect(Buffer.byteLength(JSON.stringify(fits))).toBe(limit);
        await write(a, lease, fits);
        expect(await readState(b, election)).toEqual({ value: fits, term: lease.term });

        const error = await write(a, lease, `${fits}a`).then(
          () => new Error('expected a RangeError'),
          (reason: unknown) => reason,
        );
        expect(error).toBeInstanceOf(RangeError);
        expect((error as Error).message).toContain(String(limit));
        expect((error as Error).message).toContain('maxStateBytes');
        expect(await readState(b, election)).toEqual({ value: fits, term: lease.term });

        // Not JSON at all: refused before anything is sent, too.
        await expect(write(a, lease, undefined)).rejects.toBeInstanceOf(TypeError);
        await expect(write(a, lease, { n: 1n })).rejects.toBeInstanceOf(TypeError);
        await a.release(lease, { signal: callSignal() });
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'an aborted signal rejects state calls promptly with TransientLeaseStoreError and writes nothing',
      async () => {
        const election = electionName('abort');
        const a = await newStore();
        const lease = await acquireOk(a, election, 'a');
        const aborted = () => AbortSignal.abort(new Error('test abort'));
        await expectPromptTransient(a.writeState(lease, 'aborted', { signal: aborted() }));
        await expectPromptTransient(a.readState(election, { signal: aborted() }));
        expect(await readState(a, election)).toBeUndefined();
        await a.release(lease, { signal: callSignal() });
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'a state write whose reply is lost after the server applied it breaks nothing',
      async () => {
        const election = electionName('reply-lost');
        const losing = await t.createReplyLosingStore();
        try {
          const { store } = losing;
          if (!supportsState(store)) throw new Error(`${store.name} does not declare writeState and readState`);
          if (!losing.loseNextReplyContaining) throw new Error('the target must provide loseNextReplyContaining');
          const other = await newStore();
          const lease = await acquireOk(store, election, 'a');
          await write(store, lease, { n: 1 });
          const marker = `marker-${randomBytes(6).toString('hex')}`;
          losing.loseNextReplyContaining(marker, 'reset');
          const outcome = await store
            .writeState(lease, { n: 2, marker }, { signal: AbortSignal.timeout(LOST_CALL_TIMEOUT_MS) })
            .then(
              () => 'resolved',
              (error: unknown) => error,
            );
          expect(losing.repliesLost).toBe(1);
          // Unknown outcome: transient (or resolved, when the driver resent it), never "lost" or fatal.
          if (outcome !== 'resolved') expect(outcome).toBeInstanceOf(TransientLeaseStoreError);
          // The server applied it: the value landed whole, with our term.
          expect(await readState(other, election)).toEqual({ value: { n: 2, marker }, term: lease.term });
          // The lease and the link recover: the leader renews and writes again.
          await store.renew(lease, { leaseDurationMs: durationMs, signal: callSignal() });
          await write(store, lease, { n: 3 });
          expect(await readState(other, election)).toEqual({ value: { n: 3 }, term: lease.term });
          await store.release(lease, { signal: callSignal() });
          // And a stale write through the recovered link is still refused.
          await expectLost(write(store, lease, { n: 0 }));
        } finally {
          // Not the store itself: the in-memory target shares one store across its cases.
          await losing.close?.();
        }
      },
      FAST_TEST_TIMEOUT_MS,
    );

    test.concurrent(
      'two holders never both write: stale writes racing a handover never land after the new term started',
      async () => {
        const election = electionName('interleave');
        const stores = [await newStore(), await newStore()] as const;
        let holder = 0;
        let lease = await acquireOk(stores[0], election, 'holder-0');
        await write(stores[0], lease, { round: -1, term: lease.term });
        const landedLate: string[] = [];
        for (let round = 0; round < HANDOVERS; round++) {
          const staleStore = stores[holder];
          const stale = lease;
          let newTermStarted = false;
          // The stale holder writes back to back while the lease changes hands under it.
          const staleLoop = (async () => {
            for (let i = 0; i < STALE_WRITES_PER_HANDOVER; i++) {
              const startedAfter = newTermStarted;
              try {
                await write(staleStore, stale, { round, stale: i, term: stale.term });
                if (startedAfter) landedLate.push(`round ${round} write ${i}`);
              } catch (error) {
                if (!(error instanceof LeaseLostError)) throw error;
              }
            }
          })();
          await staleStore.release(stale, { signal: callSignal() });
          holder = 1 - holder;
          lease = await acquireOk(stores[holder], election, `holder-${round + 1}`);
          newTermStarted = true;
          await write(stores[holder], lease, { round, term: lease.term });
          await staleLoop;
          expect(await readState(stores[1 - holder], election)).toEqual({
            value: { round, term: lease.term },
            term: lease.term,
          });
        }
        expect(landedLate).toEqual([]);
        await stores[holder].release(lease, { signal: callSignal() });
      },
      FAST_TEST_TIMEOUT_MS * 2,
    );
  });
}

function options(key: string | undefined): StateCallOptions {
  return key === undefined ? { signal: callSignal() } : { key, signal: callSignal() };
}

function electionName(tag: string): string {
  return `state-${tag}-${randomBytes(4).toString('hex')}`;
}

function callSignal(): AbortSignal {
  return AbortSignal.timeout(CALL_TIMEOUT_MS);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function expectLost(promise: Promise<unknown>): Promise<unknown> {
  const error = await promise.then(
    () => new Error('expected LeaseLostError, but the write succeeded'),
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(LeaseLostError);
  return error;
}

async function expectPromptTransient(promise: Promise<unknown>): Promise<void> {
  const startedAt = performance.now();
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(TransientLeaseStoreError);
  expect(performance.now() - startedAt).toBeLessThan(PROMPT_MS);
}

/**
 * Upgrade tests of leader state, first half: `writer`, leading with `lease`, writes a value and a
 * tick record, then releases. Returns how any replica (`reader`) reads both back and what it must
 * keep reading whatever a previous-version replica does with the lease next.
 */
export async function stateWrittenBeforeUpgrade(
  writer: StateCapableStore,
  reader: StateCapableStore,
  lease: Lease,
): Promise<{ read: () => Promise<unknown[]>; expected: unknown[] }> {
  const signal = () => AbortSignal.timeout(CALL_TIMEOUT_MS);
  await writer.writeState(lease, { cursor: 41 }, { signal: signal() });
  await writer.writeState(lease, 1_700_000_000_000, { signal: signal(), key: 'tick:job' });
  await writer.release(lease, { signal: signal() });
  const read = async () => [
    await reader.readState(lease.election, { signal: signal() }),
    await reader.readState(lease.election, { signal: signal(), key: 'tick:job' }),
  ];
  const expected = [
    { value: { cursor: 41 }, term: lease.term },
    { value: 1_700_000_000_000, term: lease.term },
  ];
  expect(await read()).toEqual(expected);
  return { read, expected };
}

/** Second half: a new leader (`writer`, with `lease`) continues from that state; `reader` sees it. */
export async function stateContinuesAfterUpgrade(
  writer: StateCapableStore,
  reader: StateCapableStore,
  lease: Lease,
): Promise<void> {
  const signal = () => AbortSignal.timeout(CALL_TIMEOUT_MS);
  await writer.writeState(lease, { cursor: 42 }, { signal: signal() });
  expect(await reader.readState(lease.election, { signal: signal() })).toEqual({
    value: { cursor: 42 },
    term: lease.term,
  });
  await writer.release(lease, { signal: signal() });
}
