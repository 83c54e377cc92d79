// Direct tests of shared records (readRecord/writeRecord, issue 28) that the Redis and etcd specs
// share (redis-records.spec.ts, etcd-records.spec.ts), against the real servers: the compare-and-set
// rules, a heavier race than the conformance suite's, and a record's life beside a lease's.
import { randomBytes } from 'node:crypto';
import { TransientLeaseStoreError } from '../../lib/shared/errors.js';
import type { RecordCapableStore } from '../../lib/stores/lease-store.capabilities.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';

export type RecordStore = RecordCapableStore & Required<Pick<LeaseStore, 'close'>>;

export interface RecordsDirectFixture {
  /** A lease short enough to wait out (whole seconds on etcd). */
  leaseDurationMs: number;
  /** How long after its lease ends the server has surely dropped it (etcd sweeps expiries each ~0.5 s). */
  expirySlackMs: number;
  createStore(): RecordStore;
}

const WRITERS = 8;
const INCREMENTS = 10;
const signal = (ms = 10_000) => AbortSignal.timeout(ms);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const electionFor = (tag: string) => `${tag}-${randomBytes(4).toString('hex')}`;

export function describeRecordsDirect(storeName: string, fixture: () => RecordsDirectFixture): void {
  describe(`${storeName} shared records`, () => {
    const stores: RecordStore[] = [];
    const open = (count: number) => {
      const opened = Array.from({ length: count }, () => fixture().createStore());
      stores.push(...opened);
      return opened;
    };
    afterEach(async () => {
      await Promise.all(stores.splice(0).map((s) => s.close()));
    });
    const write = (s: RecordStore, election: string, key: string, value: unknown, ifVersion: string | null) =>
      s.writeRecord(election, key, value, { ifVersion, signal: signal() });
    const read = (s: RecordStore, election: string, key: string) => s.readRecord(election, key, { signal: signal() });

    it('create-if-absent: the first create wins, a second is refused and leaves the first value', async () => {
      const [a, b] = open(2) as [RecordStore, RecordStore];
      const election = electionFor('create');
      expect(await read(a, election, 'jobs')).toBeUndefined();
      expect(await write(a, election, 'jobs', { paused: ['x'] }, null)).toBe(true);
      const created = await read(b, election, 'jobs');
      expect(created).toEqual({ value: { paused: ['x'] }, version: expect.any(String) });
      expect(await write(b, election, 'jobs', { paused: [] }, null)).toBe(false);
      expect(await read(a, election, 'jobs')).toEqual(created);
    });

    it('a stale version is refused; the current one writes and gets a new version', async () => {
      const [a, b] = open(2) as [RecordStore, RecordStore];
      const election = electionFor('stale');
      await write(a, election, 'jobs', 1, null);
      const v1 = (await read(a, election, 'jobs'))?.version as string;
      expect(await write(b, election, 'jobs', 2, v1)).toBe(true);
      const second = await read(a, election, 'jobs');
      expect(second?.value).toBe(2);
      expect(second?.version).not.toBe(v1);
      // Both replicas read v1 before: the second writer with it must lose.
      expect(await write(a, election, 'jobs', 3, v1)).toBe(false);
      expect(await read(b, election, 'jobs')).toEqual(second);
    });

    it(`${WRITERS} writers × ${INCREMENTS} read-modify-write increments, retrying on false, lose no update`, async () => {
      const writers = open(WRITERS);
      const election = electionFor('race');
      let refused = 0;
      await Promise.all(
        writers.map(async (s, id) => {
          for (let done = 0; done < INCREMENTS; ) {
            const current = await read(s, election, 'counter');
            const { n = 0, by = [] } = (current?.value ?? {}) as { n?: number; by?: number[] };
            if (await write(s, election, 'counter', { n: n + 1, by: [...by, id] }, current?.version ?? null)) done++;
            else refused++;
          }
        }),
      );
      const final = (await read(writers[0] as RecordStore, election, 'counter'))?.value as { n: number; by: number[] };
      expect(final.n).toBe(WRITERS * INCREMENTS);
      for (let id = 0; id < WRITERS; id++) expect(final.by.filter((w) => w === id)).toHaveLength(INCREMENTS);
      // Not a test that cannot fail: the writers did collide, and the refusals are what kept the count.
      expect(refused).toBeGreaterThan(0);
    }, 60_000);

    it('records outlive a lease (acquire, expiry, release, a new term) and never create, change or extend it', async () => {
      const [a, b] = open(2) as [RecordStore, RecordStore];
      const { leaseDurationMs, expirySlackMs } = fixture();
      const election = electionFor('lease');
      const acquire = (s: RecordStore, identity: string) =>
        s.acquire({ election, identity, leaseDurationMs, signal: signal() });
      // Written on an election nobody ever led: no lease appears.
      expect(await write(b, election, 'jobs', 'before', null)).toBe(true);
      expect(await a.read(election, { signal: signal() })).toEqual({ held: false, term: 0 });

      const first = await acquire(a, 'a');
      if (!first.acquired) throw new Error('not acquired');
      const startedAt = performance.now();
      expect(await read(b, election, 'jobs')).toMatchObject({ value: 'before' });
      // A follower writes all through the lease's life: the lease must still end on time.
      let writes = 0;
      let info = await b.read(election, { signal: signal() });
      while (info.held && performance.now() - startedAt < leaseDurationMs + expirySlackMs) {
        expect(info).toMatchObject({ holder: 'a', term: first.lease.term });
        const version = (await read(b, election, 'jobs'))?.version as string;
        expect(await write(b, election, 'jobs', { during: writes++ }, version)).toBe(true);
        await sleep(20);
        info = await b.read(election, { signal: signal() });
      }
      expect(writes).toBeGreaterThan(1);
      const kept = await read(a, election, 'jobs');
      // Read once more past the bound: a read begun before it could have found the lease still there.
      info = info.held ? await b.read(election, { signal: signal() }) : info;
      expect(info).toEqual({ held: false, term: first.lease.term });
      expect(await read(a, election, 'jobs')).toEqual(kept);

      const second = await acquire(b, 'b');
      if (!second.acquired) throw new Error('not acquired');
      expect(second.lease.term).toBeGreaterThan(first.lease.term);
      expect(await read(a, election, 'jobs')).toEqual(kept);
      await b.release(second.lease, { signal: signal() });
      expect(await read(a, election, 'jobs')).toEqual(kept);
      expect(await a.read(election, { signal: signal() })).toEqual({ held: false, term: second.lease.term });
    }, 30_000);

    it('a write touches its own key of its own election only', async () => {
      const [a, b] = open(2) as [RecordStore, RecordStore];
      const [one, two] = [electionFor('own-1'), electionFor('own-2')];
      await write(a, one, 'jobs', 'one', null);
      await write(a, two, 'jobs', 'two', null);
      await write(a, one, 'other', 'other', null);
      const before = [await read(b, two, 'jobs'), await read(b, one, 'other')];
      const version = (await read(b, one, 'jobs'))?.version as string;
      expect(await write(b, one, 'jobs', 'one again', version)).toBe(true);
      expect([await read(a, two, 'jobs'), await read(a, one, 'other')]).toEqual(before);
      expect(await read(a, two, 'missing')).toBeUndefined();
    });

    it('an aborted signal is a TransientLeaseStoreError, promptly: before the call nothing is written', async () => {
      const [a] = open(1) as [RecordStore];
      const election = electionFor('abort');
      const aborted = AbortSignal.abort(new Error('test abort'));
      const startedAt = performance.now();
      await expect(a.writeRecord(election, 'jobs', 1, { ifVersion: null, signal: aborted })).rejects.toBeInstanceOf(
        TransientLeaseStoreError,
      );
      await expect(a.readRecord(election, 'jobs', { signal: aborted })).rejects.toBeInstanceOf(
        TransientLeaseStoreError,
      );
      expect(await read(a, election, 'jobs')).toBeUndefined();
      // Aborted while in flight: settles at once (the write may or may not land: its outcome is unknown).
      const controller = new AbortController();
      const inFlight = a.writeRecord(election, 'jobs', 2, { ifVersion: null, signal: controller.signal });
      controller.abort(new Error('test abort'));
      await expect(inFlight).rejects.toBeInstanceOf(TransientLeaseStoreError);
      expect(performance.now() - startedAt).toBeLessThan(2_000);
    });
  });
}
