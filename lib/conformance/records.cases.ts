// The shared-records capability (readRecord/writeRecord, issue 28): small JSON records any replica
// may write, each write a compare-and-set on the record's version, so concurrent writers lose no
// update. The cases of their independence from the lease and leader state are records-lease.cases.ts.
import assert from 'node:assert/strict';
import { MAX_SHARED_RECORD_BYTES } from '../stores/lease-store.calls.js';
import type { RecordCapableStore } from '../stores/lease-store.capabilities.js';
import type { ConformanceCase } from './conformance.types.js';
import {
  electionName,
  FAST_TIMEOUT_MS,
  rejectsPromptly,
  rejectsWith,
  same,
  sleep,
  type Target,
} from './conformance-kit.js';
import { readRecord, recordDefine, recordStore, recordStores, versionOf, writeRecord } from './records-kit.js';
import { recordLeaseCases } from './records-lease.cases.js';

/** The no-lost-update case: writers, each through its own store instance, and increments each. */
const WRITERS = 6;
const INCREMENTS = 8;
/** Attempts (successful or refused) all writers together may make before the case gives up. */
const MAX_ATTEMPTS = 2_000;

export function recordCases(t: Target): ConformanceCase[] {
  const define = recordDefine(t);
  return [
    define('an absent record reads undefined, on an election nobody ever led too', async (s) => {
      const [a, b] = await recordStores(s, 2);
      const election = electionName('rec-absent');
      assert.equal(await readRecord(a, election, 'jobs'), undefined);
      await writeRecord(b, election, 'other', 1, null);
      assert.equal(await readRecord(a, election, 'jobs'), undefined);
    }),

    define('ifVersion null creates once: a second create is refused (false) and the first value stays', async (s) => {
      const [a, b] = await recordStores(s, 2);
      const election = electionName('rec-create');
      const value = { paused: ['ü "quoted"'], n: 3, nested: [null, true, 1.5], empty: {} };
      assert.equal(await writeRecord(a, election, 'jobs', value, null), true);
      const created = await readRecord(b, election, 'jobs');
      same(created?.value, value);
      assert.ok(typeof created?.version === 'string' && created.version.length > 0, 'no version string');
      assert.equal(await writeRecord(b, election, 'jobs', { paused: [] }, null), false);
      same(await readRecord(a, election, 'jobs'), created);
    }),

    define(
      'the current version writes and changes the version; a stale version is refused and the value stays',
      async (s) => {
        const [a, b] = await recordStores(s, 2);
        const election = electionName('rec-cas');
        assert.equal(await writeRecord(a, election, 'jobs', 'first', null), true);
        const first = await versionOf(b, election, 'jobs');
        assert.equal(await writeRecord(b, election, 'jobs', 'second', first), true);
        const second = await readRecord(a, election, 'jobs');
        assert.equal(second?.value, 'second');
        assert.notEqual(second?.version, first, 'the version did not change with the write');
        // The same value again is a write too: the version changes, so a reader's CAS notices it.
        assert.equal(await writeRecord(a, election, 'jobs', 'second', second?.version ?? null), true);
        const third = await readRecord(b, election, 'jobs');
        assert.ok(third && third.version !== second?.version && third.version !== first, 'a version came back');
        for (const stale of [first, second?.version ?? 'none', 'no-such-version']) {
          assert.equal(await writeRecord(b, election, 'jobs', 'stale', stale), false, `version ${stale} wrote`);
        }
        same(await readRecord(a, election, 'jobs'), third);
        // Any JSON value round-trips, a bare null included (it is not "absent").
        for (const next of [null, 0, 'text', [1, 2], false]) {
          const version = await versionOf(a, election, 'jobs');
          assert.equal(await writeRecord(a, election, 'jobs', next, version), true);
          same((await readRecord(b, election, 'jobs'))?.value, next);
        }
      },
    ),

    define(
      `concurrent writers (${WRITERS} store instances × ${INCREMENTS} read-modify-write increments, retrying on false) lose no update`,
      async (s) => {
        const stores = await recordStores(s, WRITERS);
        const election = electionName('rec-race');
        let attempts = 0;
        const writer = async (store: RecordCapableStore, id: number) => {
          for (let done = 0; done < INCREMENTS; ) {
            attempts += 1;
            assert.ok(
              attempts <= MAX_ATTEMPTS,
              `more than ${MAX_ATTEMPTS} attempts for ${WRITERS * INCREMENTS} writes`,
            );
            const current = await readRecord(store, election, 'counter');
            const { count = 0, by = [] } = (current?.value ?? {}) as { count?: number; by?: number[] };
            const next = { count: count + 1, by: [...by, id] };
            if (await writeRecord(store, election, 'counter', next, current?.version ?? null)) done += 1;
            // A refused writer backs off a little, as a real caller would, so the race stays fair.
            else await sleep(Math.random() * 5);
          }
        };
        await Promise.all(stores.map((store, id) => writer(store, id)));
        const final = (await readRecord(stores[0] as RecordCapableStore, election, 'counter'))?.value as {
          count: number;
          by: number[];
        };
        assert.equal(final.count, WRITERS * INCREMENTS, `${final.count} after ${WRITERS * INCREMENTS} increments`);
        for (let id = 0; id < WRITERS; id++) {
          assert.equal(final.by.filter((w) => w === id).length, INCREMENTS, `writer ${id} lost an update`);
        }
      },
      FAST_TIMEOUT_MS * 2,
    ),

    define('keys and elections are independent', async (s) => {
      const [a, b] = await recordStores(s, 2);
      const one = electionName('rec-keys-1');
      const two = electionName('rec-keys-2');
      assert.equal(await writeRecord(a, one, 'jobs', 'one/jobs', null), true);
      assert.equal(await writeRecord(a, one, 'job:x.y-1_2', 'one/x', null), true);
      assert.equal(await writeRecord(b, two, 'jobs', 'two/jobs', null), true);
      const before = await readRecord(b, one, 'jobs');
      assert.equal(before?.value, 'one/jobs');
      assert.equal((await readRecord(a, one, 'job:x.y-1_2'))?.value, 'one/x');
      assert.equal((await readRecord(a, two, 'jobs'))?.value, 'two/jobs');
      assert.equal(await readRecord(a, two, 'job:x.y-1_2'), undefined);
      // A write to one key of one election leaves every other record as it was, version included.
      const other = await versionOf(b, two, 'jobs');
      assert.equal(await writeRecord(b, two, 'jobs', 'two/jobs 2', other), true);
      assert.equal(await writeRecord(a, one, 'job:x.y-1_2', 'one/x 2', await versionOf(a, one, 'job:x.y-1_2')), true);
      same(await readRecord(a, one, 'jobs'), before);
      assert.equal((await readRecord(a, two, 'jobs'))?.value, 'two/jobs 2');
      // The longest key is a key like any other.
      const long = 'k'.repeat(200);
      assert.equal(await writeRecord(a, one, long, 'long key', null), true);
      assert.equal((await readRecord(b, one, long))?.value, 'long key');
    }),

    define(
      'a value of exactly MAX_SHARED_RECORD_BYTES (UTF-8 JSON) is stored; one byte more is a RangeError naming the limit, nothing written',
      async (s) => {
        const [a, b] = await recordStores(s, 2);
        const election = electionName('rec-size');
        // Too large on create: nothing appears.
        const wide = 'ü'.repeat(1_000);
        const fits = wide + 'a'.repeat(MAX_SHARED_RECORD_BYTES - 2 - 2 * wide.length);
        assert.equal(Buffer.byteLength(JSON.stringify(fits)), MAX_SHARED_RECORD_BYTES);
        const error = (await rejectsWith(writeRecord(a, election, 'big', `${fits}a`, null), RangeError)) as Error;
        for (const named of [String(MAX_SHARED_RECORD_BYTES), 'MAX_SHARED_RECORD_BYTES']) {
          assert.ok(error.message.includes(named), `"${error.message}" does not name ${named}`);
        }
        assert.equal(await readRecord(b, election, 'big'), undefined);
        // Two-byte characters, so the limit counts bytes of UTF-8, not string length.
        assert.equal(await writeRecord(a, election, 'big', fits, null), true);
        const stored = await readRecord(b, election, 'big');
        assert.equal(stored?.value, fits);
        // Too large over an existing record, with its current version: the record stays as it was.
        await rejectsWith(writeRecord(b, election, 'big', `${fits}a`, stored?.version ?? null), RangeError);
        same(await readRecord(a, election, 'big'), stored);
      },
    ),

    define('an invalid key, condition or value is a TypeError, before anything is sent', async (s) => {
      const [a, b] = await recordStores(s, 2);
      const election = electionName('rec-invalid');
      // A key is a name, not a path: anything outside [A-Za-z0-9._:-]{1,200} is refused.
      for (const key of ['', 'a/b', 'a b', '$.x', 'x'.repeat(201), 'ä', "'", undefined]) {
        await rejectsWith(writeRecord(a, election, key as string, 1, null), TypeError);
        await rejectsWith(readRecord(b, election, key as string), TypeError);
      }
      for (const ifVersion of [undefined, '', 7]) {
        await rejectsWith(writeRecord(a, election, 'jobs', 1, ifVersion as string), TypeError);
      }
      for (const value of [undefined, { n: 1n }, () => 1]) {
        await rejectsWith(writeRecord(a, election, 'jobs', value, null), TypeError);
      }
      assert.equal(await readRecord(b, election, 'jobs'), undefined);
    }),

    define(
      'an aborted signal rejects record calls promptly with TransientLeaseStoreError, nothing written',
      async (s) => {
        const a = await recordStore(s);
        const election = electionName('rec-abort');
        const aborted = () => AbortSignal.abort(new Error('test abort'));
        await rejectsPromptly(a.writeRecord(election, 'jobs', 'aborted', { ifVersion: null, signal: aborted() }));
        await rejectsPromptly(a.readRecord(election, 'jobs', { signal: aborted() }));
        assert.equal(await readRecord(a, election, 'jobs'), undefined);
        assert.equal(await writeRecord(a, election, 'jobs', 'kept', null), true);
        const kept = await readRecord(a, election, 'jobs');
        const version = kept?.version ?? null;
        await rejectsPromptly(a.writeRecord(election, 'jobs', 'aborted', { ifVersion: version, signal: aborted() }));
        same(await readRecord(a, election, 'jobs'), kept);
      },
    ),

    ...recordLeaseCases(t),
  ];
}
