// The leader-state capability (writeState/readState): a value written under the lease, readable by
// every replica with the writing term, refused to any lease that is not the store's current one.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { LeaseLostError } from '../shared/errors.js';
import { type StateCapableStore, supportsState } from '../stores/lease-store.capabilities.js';
import type { Lease, StateCallOptions } from '../stores/lease-store.js';
import { DEFAULT_MAX_STATE_BYTES } from '../stores/state-support.js';
import { conformanceMessages as messages } from './conformance.messages.js';
import type { ConformanceCase } from './conformance.types.js';
import {
  callSignal,
  defineCase,
  electionName,
  FAST_TIMEOUT_MS,
  rejectsPromptly,
  rejectsWith,
  type Scope,
  same,
  sleep,
  type Target,
} from './conformance-kit.js';

/** Handovers of the interleaving case, each with a stale holder writing in a tight loop. */
const HANDOVERS = 8;
const STALE_WRITES_PER_HANDOVER = 12;

export async function stateStore(s: Scope): Promise<StateCapableStore> {
  const store = await s.newStore();
  assert.ok(supportsState(store), `${store.name} does not declare writeState and readState`);
  return store;
}

export const writeState = (store: StateCapableStore, lease: Lease, value: unknown, key?: string) =>
  store.writeState(lease, value, stateOptions(key));
export const readState = (store: StateCapableStore, election: string, key?: string) =>
  store.readState(election, stateOptions(key));
export const rejectsLost = (promise: Promise<unknown>) => rejectsWith(promise, LeaseLostError);

export function stateCases(t: Target): ConformanceCase[] {
  const more = t.leaderState ? {} : { skipReason: messages.noCapability('leader state (writeState/readState)') };
  const define = (name: string, timeoutMs: number, body: (s: Scope) => Promise<void>) =>
    defineCase(t, `leader state: ${name}`, timeoutMs, body, more);
  const stores = async (s: Scope) => [await stateStore(s), await stateStore(s)] as const;
  return [
    define(
      'a leader writes, another store instance reads the value with the writing term',
      FAST_TIMEOUT_MS,
      async (s) => {
        const election = electionName('write-read');
        const [a, b] = await stores(s);
        assert.equal(await readState(b, election), undefined);
        const lease = await s.acquireOk(a, election, 'a');
        assert.equal(await readState(b, election), undefined);

        const value = { cursor: 'ü/1 "quoted"', n: 3, nested: [null, true, 1.5], empty: {} };
        await writeState(a, lease, value);
        same(await readState(b, election), { value, term: lease.term });
        // The default key is 'state'.
        same(await readState(b, election, 'state'), { value, term: lease.term });
        // Overwritten as a whole, and any JSON value (a bare null, a number) round-trips.
        for (const next of [null, 42, 'text', [1, 2]]) {
          await writeState(a, lease, next);
          same(await readState(b, election), { value: next, term: lease.term });
        }
        await s.release(a, lease);
      },
    ),

    define(
      'after expiry and takeover the old lease cannot write, the state survives the acquire, the new leader wins',
      t.slowTimeoutMs,
      async (s) => {
        const election = electionName('takeover');
        const [a, b] = await stores(s);
        const old = await s.acquireOk(a, election, 'a');
        await writeState(a, old, { checkpoint: 1 });
        await writeState(a, old, { checkpoint: 1 }, 'tick:job');
        await sleep(t.expiryWaitMs);
        const next = await s.acquireOk(b, election, 'b');
        assert.ok(next.term > old.term, `term ${next.term} after ${old.term}`);
        // An acquire never clears state: the next leader continues from the checkpoint.
        same(await readState(b, election), { value: { checkpoint: 1 }, term: old.term });

        const refused = await rejectsLost(writeState(a, old, { checkpoint: 0 }));
        assert.ok((refused as Error).message.includes(election), 'the refusal does not name the election');
        await rejectsLost(writeState(a, old, { checkpoint: 0 }, 'tick:job'));
        same(await readState(a, election), { value: { checkpoint: 1 }, term: old.term });
        same(await readState(a, election, 'tick:job'), { value: { checkpoint: 1 }, term: old.term });

        await writeState(b, next, { checkpoint: 2 });
        same(await readState(a, election), { value: { checkpoint: 2 }, term: next.term });
        await rejectsLost(writeState(a, old, { checkpoint: 0 }));
        same(await readState(b, election), { value: { checkpoint: 2 }, term: next.term });
        await s.release(b, next);
      },
    ),

    define(
      'an expired lease cannot write even when nobody took it over (expiry judged by the store)',
      t.slowTimeoutMs,
      async (s) => {
        const election = electionName('expired');
        const [a, b] = await stores(s);
        const lease = await s.acquireOk(a, election, 'a');
        await writeState(a, lease, 'before expiry');
        await sleep(t.expiryWaitMs);
        assert.equal((await s.read(b, election)).held, false);
        await rejectsLost(writeState(a, lease, 'after expiry'));
        same(await readState(b, election), { value: 'before expiry', term: lease.term });
      },
    ),

    define(
      'a released lease, a stranger lease id and a never-acquired election cannot write',
      FAST_TIMEOUT_MS,
      async (s) => {
        const election = electionName('released');
        const [a, b] = await stores(s);
        const lease = await s.acquireOk(a, election, 'a');
        await writeState(a, lease, 'kept');
        const stranger: Lease = { ...lease, holder: 'stranger', leaseId: randomUUID() };
        await rejectsLost(writeState(b, stranger, 'stranger'));
        await s.release(a, lease);
        await rejectsLost(writeState(a, lease, 'after release'));
        same(await readState(b, election), { value: 'kept', term: lease.term });

        const never = electionName('never');
        await rejectsLost(writeState(a, { ...lease, election: never }, 'x'));
        assert.equal(await readState(b, never), undefined);
      },
    ),

    define(
      'keys are independent: writing tick:x never touches state, and the other way round',
      FAST_TIMEOUT_MS,
      async (s) => {
        const election = electionName('keys');
        const [a, b] = await stores(s);
        const lease = await s.acquireOk(a, election, 'a');
        await writeState(a, lease, { user: 1 });
        await writeState(a, lease, { tick: '10:00' }, 'tick:x');
        await writeState(a, lease, { tick: '10:05' }, 'tick:y.z-1_2');
        same(await readState(b, election), { value: { user: 1 }, term: lease.term });
        await writeState(a, lease, { user: 2 });
        same(await readState(b, election, 'tick:x'), { value: { tick: '10:00' }, term: lease.term });
        same(await readState(b, election, 'tick:y.z-1_2'), { value: { tick: '10:05' }, term: lease.term });
        same(await readState(b, election), { value: { user: 2 }, term: lease.term });
        assert.equal(await readState(b, election, 'tick:unknown'), undefined);
        // A key is a namespace name, not a path: anything outside [A-Za-z0-9._:-]{1,200} is refused.
        for (const key of ['', 'a/b', 'a b', '$.x', 'x'.repeat(201), 'ä']) {
          await rejectsWith(writeState(a, lease, 1, key), TypeError);
          await rejectsWith(readState(b, election, key), TypeError);
        }
        await writeState(a, lease, 'long key', 'k'.repeat(200));
        same(await readState(b, election, 'k'.repeat(200)), { value: 'long key', term: lease.term });
        await s.release(a, lease);
      },
    ),

    define(
      'a value of exactly maxStateBytes (UTF-8 JSON) is stored, one byte more is refused naming the limit',
      FAST_TIMEOUT_MS,
      async (s) => {
        const election = electionName('size');
        const [a, b] = await stores(s);
        const limit = a.limits.maxStateBytes ?? DEFAULT_MAX_STATE_BYTES;
        assert.ok(limit >= DEFAULT_MAX_STATE_BYTES, `maxStateBytes ${limit} < ${DEFAULT_MAX_STATE_BYTES}`);
        const lease = await s.acquireOk(a, election, 'a');
        // Two-byte characters, so the limit counts bytes of UTF-8, not string length.
        const wide = 'ü'.repeat(1_000);
        const fits = wide + 'a'.repeat(limit - 2 - 2 * wide.length);
        assert.equal(Buffer.byteLength(JSON.stringify(fits)), limit);
        await writeState(a, lease, fits);
        same(await readState(b, election), { value: fits, term: lease.term });

        const error = (await rejectsWith(writeState(a, lease, `${fits}a`), RangeError)) as Error;
        assert.ok(error.message.includes(String(limit)), `"${error.message}" does not name ${limit}`);
        assert.ok(error.message.includes('maxStateBytes'), `"${error.message}" does not name maxStateBytes`);
        same(await readState(b, election), { value: fits, term: lease.term });

        // Not JSON at all: refused before anything is sent, too.
        await rejectsWith(writeState(a, lease, undefined), TypeError);
        await rejectsWith(writeState(a, lease, { n: 1n }), TypeError);
        await s.release(a, lease);
      },
    ),

    define(
      'an aborted signal rejects state calls promptly with TransientLeaseStoreError and writes nothing',
      FAST_TIMEOUT_MS,
      async (s) => {
        const election = electionName('abort');
        const a = await stateStore(s);
        const lease = await s.acquireOk(a, election, 'a');
        const aborted = () => AbortSignal.abort(new Error('test abort'));
        await rejectsPromptly(a.writeState(lease, 'aborted', { signal: aborted() }));
        await rejectsPromptly(a.readState(election, { signal: aborted() }));
        assert.equal(await readState(a, election), undefined);
        await s.release(a, lease);
      },
    ),

    define(
      'two holders never both write: stale writes racing a handover never land after the new term started',
      FAST_TIMEOUT_MS * 2,
      async (s) => {
        const election = electionName('interleave');
        const both = await stores(s);
        let holder = 0;
        let lease = await s.acquireOk(both[0], election, 'holder-0');
        await writeState(both[0], lease, { round: -1, term: lease.term });
        const landedLate: string[] = [];
        for (let round = 0; round < HANDOVERS; round++) {
          const staleStore = both[holder] as StateCapableStore;
          const stale = lease;
          let newTermStarted = false;
          // The stale holder writes back to back while the lease changes hands under it.
          const staleLoop = (async () => {
            for (let i = 0; i < STALE_WRITES_PER_HANDOVER; i++) {
              const startedAfter = newTermStarted;
              try {
                await writeState(staleStore, stale, { round, stale: i, term: stale.term });
                if (startedAfter) landedLate.push(`round ${round} write ${i}`);
              } catch (error) {
                if (!(error instanceof LeaseLostError)) throw error;
              }
            }
          })();
          await s.release(staleStore, stale);
          holder = 1 - holder;
          const current = both[holder] as StateCapableStore;
          lease = await s.acquireOk(current, election, `holder-${round + 1}`);
          newTermStarted = true;
          await writeState(current, lease, { round, term: lease.term });
          await staleLoop;
          same(await readState(both[1 - holder] as StateCapableStore, election), {
            value: { round, term: lease.term },
            term: lease.term,
          });
        }
        assert.deepEqual(landedLate, []);
        await s.release(both[holder] as StateCapableStore, lease);
      },
    ),
  ];
}

function stateOptions(key: string | undefined): StateCallOptions {
  return key === undefined ? { signal: callSignal() } : { key, signal: callSignal() };
}
