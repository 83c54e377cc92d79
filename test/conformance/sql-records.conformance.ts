// Shared records in the SQL stores (PostgreSQL, MySQL), beyond the exported suite's cases: the
// upgrade of a table made before the records column (replicas of earlier versions running beside
// new ones, two new instances migrating at once, createTable: false), the row a first write creates
// racing an acquire, many writers at once on an election without a row, and a write held up by a
// row lock giving up at its signal.
import { randomBytes } from 'node:crypto';
import { FatalLeaseStoreError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import {
  type FoldingStore,
  type RecordCapableStore,
  supportsRecords,
  supportsRenewWith,
  supportsState,
} from '../../lib/stores/lease-store.capabilities.js';
import type { Lease, LeaseStore, RenewWithOptions, SharedRecord } from '../../lib/stores/lease-store.js';
import type { PreviousVersionReplica } from './sql-handover-upgrade.js';

export interface SqlRecordsTarget {
  /** A store on `table` (which it creates on first use unless createTable is false). */
  store(table: string, options?: { createTable?: boolean }): LeaseStore;
  /** A table name of this run (the spec drops it at the end). */
  freshTable(): string;
  /** A fresh table exactly as the version before shared records made it (state and handover columns). */
  previousVersionTable(): Promise<string>;
  /** A replica of the version before handover: statements that name neither handover nor records columns. */
  previousVersion(table: string): PreviousVersionReplica;
  hasRecordsColumn(table: string): Promise<boolean>;
  /** Runs the exported migration SQL by hand. */
  migrate(table: string): Promise<unknown>;
  /** The exported function, as the fatal error names it, e.g. `postgresRecordsMigrationSql()`. */
  migrationName: string;
  /** A second run by hand is refused with this code, changing nothing (MySQL 8 has no IF NOT EXISTS). */
  secondRunRefusedWith?: string;
  /** Holds the election's row locked (SELECT … FOR UPDATE in an open transaction) while `during` runs. */
  lockingRow(table: string, election: string, during: () => Promise<void>): Promise<void>;
}

const signal = (ms = 10_000) => AbortSignal.timeout(ms);
const unique = (tag: string) => `${tag}-${randomBytes(4).toString('hex')}`;

export function describeSqlRecords(name: string, t: SqlRecordsTarget): void {
  describe(`${name}: shared records in the lease table`, () => {
    const stores: LeaseStore[] = [];
    const store = (table: string, options?: { createTable?: boolean }): RecordCapableStore => {
      const created = t.store(table, options);
      stores.push(created);
      if (!supportsRecords(created)) throw new Error(`${created.name} does not declare shared records`);
      return created;
    };
    const write = (s: RecordCapableStore, election: string, key: string, value: unknown, ifVersion: string | null) =>
      s.writeRecord(election, key, value, { ifVersion, signal: signal() });
    const read = (s: RecordCapableStore, election: string, key: string) =>
      s.readRecord(election, key, { signal: signal() });
    const acquire = async (s: LeaseStore, election: string, identity: string): Promise<Lease> => {
      const result = await s.acquire({ election, identity, leaseDurationMs: 30_000, signal: signal() });
      if (!result.acquired) throw new Error(`${identity} did not acquire ${election}`);
      return result.lease;
    };
    let table: string;

    beforeAll(() => {
      table = t.freshTable();
    });

    afterEach(async () => {
      await Promise.all(stores.splice(0).map((s) => s.close?.()));
    });

    it('a table of the version before records gains the column in place, two instances migrating at once; older replicas work beside them and never change a record', async () => {
      const old = await t.previousVersionTable();
      // The previous version's lease, state and handover statements are today's: none names records.
      const previous = store(old);
      const ancient = t.previousVersion(old);
      const held = await acquire(previous, 'e', 'old');
      const [a, b] = [store(old), store(old)];
      expect(await t.hasRecordsColumn(old)).toBe(false);
      const [written, early] = await Promise.all([
        write(a, 'e', 'jobs', { paused: ['x'] }, null),
        read(b, 'e', 'jobs'),
      ]);
      expect(written).toBe(true);
      if (early !== undefined) expect(early.value).toEqual({ paused: ['x'] });
      expect(await t.hasRecordsColumn(old)).toBe(true);
      const record = (await read(b, 'e', 'jobs')) as SharedRecord;
      expect(record.value).toEqual({ paused: ['x'] });
      // The holder renews, writes state and a handover request is made: the record stays.
      await previous.renew(held, { leaseDurationMs: 30_000, signal: signal(), meta: { leaderships: 1 } });
      await previous.writeState?.(held, { cursor: 1 }, { signal: signal() });
      expect(
        await previous.requestHandover?.(
          { election: 'e', id: 'r1', term: held.term, requestedBy: 'b', reason: 'operator', requestedAt: 1 },
          { signal: signal() },
        ),
      ).toBe(true);
      await previous.release(held, { signal: signal() });
      // A replica of the version before handover takes the released row, renews and releases it.
      const ancientLease = await ancient.acquire('e', 'ancient');
      expect(ancientLease?.term).toBe(held.term + 1);
      expect(await ancient.renew(ancientLease as Lease)).toBe(true);
      await ancient.release(ancientLease as Lease);
      expect(await read(a, 'e', 'jobs')).toEqual(record);
      // A row a first record write made is free (term 0), and every version's acquire takes it.
      expect(await write(a, 'fresh', 'jobs', 'kept', null)).toBe(true);
      expect(await b.read('fresh', { signal: signal() })).toEqual({ held: false, term: 0 });
      const taken = await ancient.acquire('fresh', 'ancient');
      expect(taken?.term).toBe(1);
      expect(await ancient.read('fresh')).toMatchObject({ holder: 'ancient', held: true });
      expect((await read(b, 'fresh', 'jobs'))?.value).toBe('kept');
      // A row an older replica inserts (naming no records column) has no records, and takes one.
      const inserted = await ancient.acquire('old-row', 'ancient');
      expect(await read(b, 'old-row', 'jobs')).toBeUndefined();
      expect(await write(b, 'old-row', 'jobs', 2, null)).toBe(true);
      expect((await read(a, 'old-row', 'jobs'))?.value).toBe(2);
      expect(await a.read('old-row', { signal: signal() })).toEqual({
        held: true,
        holder: 'ancient',
        term: inserted?.term,
      });
      // The documented SQL, run again by hand, changes nothing.
      const again = t.migrate(old);
      if (t.secondRunRefusedWith) await expect(again).rejects.toMatchObject({ code: t.secondRunRefusedWith });
      else await again;
      expect(await read(b, 'e', 'jobs')).toEqual(record);
    });

    it('with createTable: false, record calls name the migration to run while leases, state and handover work; once run, the same instance writes', async () => {
      const old = await t.previousVersionTable();
      const s = store(old, { createTable: false });
      const lease = await acquire(s, 'e', 'a');
      await s.writeState?.(lease, 'state', { signal: signal() });
      for (const call of [write(s, 'e', 'jobs', 1, null), write(s, 'e', 'jobs', 1, 'v'), read(s, 'e', 'jobs')]) {
        const error = await call.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(FatalLeaseStoreError);
        expect((error as Error).message).toContain(t.migrationName);
      }
      expect(await t.hasRecordsColumn(old)).toBe(false);
      expect(await s.read('e', { signal: signal() })).toEqual({ held: true, holder: 'a', term: lease.term });
      await t.migrate(old);
      expect(await write(s, 'e', 'jobs', 1, null)).toBe(true);
      expect((await read(s, 'e', 'jobs'))?.value).toBe(1);
      expect(await s.readState?.('e', { signal: signal() })).toEqual({ value: 'state', term: lease.term });
      await s.renew(lease, { leaseDurationMs: 30_000, signal: signal() });
    });

    it('a folded renewal on a table without the column: with createTable: false, state writes and a handover read fold, a records read fails naming the migration once renewed; with createTable on it is added on the way', async () => {
      const old = await t.previousVersionTable();
      const s = store(old, { createTable: false });
      if (!supportsRenewWith(s) || !supportsState(s)) throw new Error(`${s.name} does not fold renewals`);
      const lease = await acquire(s, 'e', 'a');
      const renewWith = (on: FoldingStore, extra: Omit<RenewWithOptions, 'signal' | 'leaseDurationMs'>) =>
        on.renewWith(lease, { leaseDurationMs: 30_000, signal: signal(), ...extra });
      expect(await renewWith(s, { writeState: [{ key: 'state', value: 1 }], readHandover: true })).toEqual({
        handover: null,
      });
      const error = await renewWith(s, { writeState: [{ key: 'state', value: 2 }], readRecords: ['jobs'] }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(FatalLeaseStoreError);
      expect((error as Error).message).toContain(t.migrationName);
      // As the separate calls: the renewal and its writes went through, the read could not.
      expect(await s.readState('e', { signal: signal() })).toEqual({ value: 2, term: lease.term });
      expect(await t.hasRecordsColumn(old)).toBe(false);
      const migrating = store(old);
      if (!supportsRenewWith(migrating)) throw new Error(`${migrating.name} does not fold renewals`);
      expect(await renewWith(migrating, { readRecords: ['jobs'], writeState: [{ key: 'state', value: 3 }] })).toEqual({
        records: { jobs: null },
      });
      expect(await t.hasRecordsColumn(old)).toBe(true);
      expect(await write(migrating, 'e', 'jobs', 'x', null)).toBe(true);
      expect(await renewWith(migrating, { readRecords: ['jobs'] })).toEqual({
        records: { jobs: await read(migrating, 'e', 'jobs') },
      });
      expect(await s.readState('e', { signal: signal() })).toEqual({ value: 3, term: lease.term });
    });

    it('a first record write racing an acquire on an election without a row: both succeed, the lease is term 1 and the record stays (30 warm races)', async () => {
      const [a, b] = [store(table), store(table)];
      await Promise.all([read(a, 'warm', 'jobs'), b.read('warm', { signal: signal() })]);
      for (let round = 0; round < 30; round++) {
        const election = unique(`race-${round}`);
        const [written, acquired] = await Promise.all([
          write(a, election, 'jobs', { round }, null),
          b.acquire({ election, identity: 'b', leaseDurationMs: 30_000, signal: signal() }),
        ]);
        expect(written).toBe(true);
        expect(acquired).toMatchObject({ acquired: true, lease: { term: 1 } });
        expect((await read(b, election, 'jobs'))?.value).toEqual({ round });
        expect(await a.read(election, { signal: signal() })).toEqual({ held: true, holder: 'b', term: 1 });
      }
    });

    it('first writes at once on an election without a row: of 8 creates of one key exactly one wins; 8 creates of distinct keys all win', async () => {
      const writers = Array.from({ length: 8 }, () => store(table));
      await Promise.all(writers.map((s) => read(s, 'warm', 'jobs')));
      for (let round = 0; round < 5; round++) {
        const election = unique(`create-${round}`);
        const same = await Promise.all(writers.map((s, i) => write(s, election, 'jobs', i, null)));
        expect(same.filter(Boolean)).toHaveLength(1);
        expect((await read(writers[0] as RecordCapableStore, election, 'jobs'))?.value).toBe(same.indexOf(true));
        const other = unique(`keys-${round}`);
        expect(await Promise.all(writers.map((s, i) => write(s, other, `k${i}`, i, null)))).toEqual(
          writers.map(() => true),
        );
        for (let i = 0; i < writers.length; i++)
          expect((await read(writers[i] as RecordCapableStore, other, `k${i}`))?.value).toBe(i);
      }
    });

    it('8 writers × 10 read-modify-write increments from an election without a row lose no update (80)', async () => {
      const writers = Array.from({ length: 8 }, () => store(table));
      const election = unique('increments');
      await Promise.all(
        writers.map(async (s, id) => {
          for (let done = 0; done < 10; ) {
            const current = await read(s, election, 'counter');
            const { count = 0, by = [] } = (current?.value ?? {}) as { count?: number; by?: number[] };
            if (await write(s, election, 'counter', { count: count + 1, by: [...by, id] }, current?.version ?? null)) {
              done += 1;
            } else {
              await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
            }
          }
        }),
      );
      const final = (await read(writers[0] as RecordCapableStore, election, 'counter'))?.value as {
        count: number;
        by: number[];
      };
      expect(final.count).toBe(80);
      for (let id = 0; id < 8; id++) expect(final.by.filter((w) => w === id)).toHaveLength(10);
    });

    it('a write held up by a locked row gives up at its signal (transient); the statement landing later is still a compare-and-set', async () => {
      const [a, b] = [store(table), store(table)];
      const election = unique('locked');
      expect(await write(a, election, 'jobs', 'v1', null)).toBe(true);
      const first = (await read(a, election, 'jobs')) as SharedRecord;
      await t.lockingRow(table, election, async () => {
        const startedAt = performance.now();
        const call = a.writeRecord(election, 'jobs', 'late', { ifVersion: first.version, signal: signal(300) });
        await expect(call).rejects.toBeInstanceOf(TransientLeaseStoreError);
        expect(performance.now() - startedAt).toBeLessThan(2_000);
        // Readers are not held up by the lock.
        expect(await read(b, election, 'jobs')).toEqual(first);
      });
      // The abandoned statement runs once the lock is gone: it wrote over the version it named...
      const deadline = performance.now() + 5_000;
      let now = await read(b, election, 'jobs');
      while (now?.value !== 'late' && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        now = await read(b, election, 'jobs');
      }
      expect(now?.value).toBe('late');
      expect(now?.version).not.toBe(first.version);
      // ...so a writer still holding that version is refused.
      expect(await write(b, election, 'jobs', 'stale', first.version)).toBe(false);
      expect(await read(a, election, 'jobs')).toEqual(now);
    });
  });
}
