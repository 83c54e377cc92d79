// The upgrade of a SQL store's table to the handover columns, run by the PostgreSQL and MySQL specs:
// a table made by the previous version, replicas of that version running beside new ones (their own
// statements, sent by hand), two new instances migrating at once, and createTable: false; and leader
// state beside those replicas: their statements never name the state column, so it survives them.

import { LeaseLostError } from '../../lib/shared/errors.js';
import {
  type FoldingStore,
  supportsHandover,
  supportsRenewWith,
  supportsState,
} from '../../lib/stores/lease-store.capabilities.js';
import type { HandoverRequest, Lease, LeaseStore, RenewWithOptions } from '../../lib/stores/lease-store.js';

/** A replica of the previous version: the statements it sends, which never name the handover columns. */
export interface PreviousVersionReplica {
  /** The lease, or undefined when refused. */
  acquire(election: string, identity: string, leaseDurationMs?: number): Promise<Lease | undefined>;
  /** True when renewed. */
  renew(lease: Lease): Promise<boolean>;
  release(lease: Lease): Promise<unknown>;
  read(election: string): Promise<{ holder: string; held: boolean }>;
}

export interface SqlHandoverUpgradeTarget {
  /** A fresh table exactly as the previous version made it (with the state column); its name. */
  previousVersionTable(): Promise<string>;
  store(table: string, options?: { createTable?: boolean }): LeaseStore;
  previousVersion(table: string): PreviousVersionReplica;
  /** The handover columns the table has, sorted. */
  handoverColumns(table: string): Promise<string[]>;
  /** Runs the exported migration SQL by hand. */
  migrate(table: string): Promise<unknown>;
  /** The exported function, as the fatal error names it, e.g. `postgresHandoverMigrationSql()`. */
  migrationName: string;
  /**
   * A second run by hand: a no-op (PostgreSQL's ADD COLUMN IF NOT EXISTS), or refused as a whole with
   * this error code, changing nothing (MySQL 8 has no IF NOT EXISTS there).
   */
  secondRunRefusedWith?: string;
}

const COLUMNS = ['handover', 'meta', 'meta_lease_id', 'reserved_for', 'reserved_until'];
const signal = () => AbortSignal.timeout(10_000);

export function describeSqlHandoverUpgrade(name: string, t: SqlHandoverUpgradeTarget): void {
  describe(`${name}: upgrade to the handover columns`, () => {
    const stores: LeaseStore[] = [];
    const store = (table: string, options?: { createTable?: boolean }) => {
      const created = t.store(table, options);
      stores.push(created);
      if (!supportsHandover(created)) throw new Error(`${created.name} does not declare handover`);
      return created;
    };
    const acquire = (s: LeaseStore, election: string, identity: string, meta?: object) =>
      s.acquire({ election, identity, leaseDurationMs: 30_000, signal: signal(), meta });
    const request = (term: number): HandoverRequest => ({
      election: 'e',
      id: 'r1',
      term,
      requestedBy: 'b',
      reason: 'operator',
      requestedAt: 1,
    });

    afterEach(async () => {
      await Promise.all(stores.splice(0).map((s) => s.close?.()));
    });

    it('a table of the previous version gains them in place, two instances migrating at once, and old replicas keep working beside new ones', async () => {
      const table = await t.previousVersionTable();
      const old = t.previousVersion(table);
      // An old replica leads before any new one starts.
      const oldLease = await old.acquire('e', 'old');
      if (!oldLease) throw new Error('the old replica did not acquire');
      const [a, b] = [store(table), store(table)];
      // Two new instances find the columns missing at the same moment: both add them, neither
      // fails, and the acquire migrates before it runs (the old replica's lease is refused, not broken).
      const [refused] = await Promise.all([
        acquire(a, 'e', 'a', { leaderships: 1 }),
        b.requestHandover?.(request(oldLease.term), { signal: signal() }),
      ]);
      expect(refused).toMatchObject({ acquired: false, holder: 'old', term: oldLease.term });
      expect(refused).not.toHaveProperty('meta');
      expect(await t.handoverColumns(table)).toEqual(COLUMNS);
      expect(await a.readHandover?.('e', { signal: signal() })).toEqual(request(oldLease.term));
      // The old replica's statements work on the migrated table.
      expect(await old.renew(oldLease)).toBe(true);
      expect(await old.read('e')).toMatchObject({ holder: 'old', held: true });
      expect(await a.read('e', { signal: signal() })).toEqual({ held: true, holder: 'old', term: oldLease.term });
      await old.release(oldLease);
      // A new holder's meta and reservation. An old replica ignores the reservation (allowed); then
      // neither the previous holder's meta nor the reservation passes for its own.
      const taken = await acquire(a, 'e', 'a', { leaderships: 1 });
      if (!taken.acquired) throw new Error('not acquired');
      const term = taken.lease.term;
      expect(await b.read('e', { signal: signal() })).toEqual({
        held: true,
        holder: 'a',
        term,
        meta: { leaderships: 1 },
      });
      await a.release(taken.lease, { signal: signal(), handoverTo: 'b', reserveMs: 60_000 });
      expect(await b.read('e', { signal: signal() })).toEqual({ held: false, term, reservedFor: 'b' });
      const oldAgain = await old.acquire('e', 'old');
      if (!oldAgain) throw new Error('the old replica did not acquire');
      expect(await b.read('e', { signal: signal() })).toEqual({ held: true, holder: 'old', term: oldAgain.term });
      // A renew with meta under such a lease (a new replica that took it with the previous version's
      // statement, its migration having failed) tags only the meta: the stale reservation stays dead.
      await b.renew(oldAgain, { leaseDurationMs: 30_000, signal: signal(), meta: { leaderships: 5 } });
      await old.release(oldAgain);
      expect(await b.read('e', { signal: signal() })).toEqual({ held: false, term: oldAgain.term });
      expect((await acquire(b, 'e', 'c')).acquired).toBe(true);
      // A row an old replica inserts (naming none of the columns) reads as before.
      const inserted = await old.acquire('old-row', 'old');
      expect(await b.read('old-row', { signal: signal() })).toEqual({
        held: true,
        holder: 'old',
        term: inserted?.term,
      });
      // The documented SQL, run again by hand, changes nothing.
      const again = t.migrate(table);
      if (t.secondRunRefusedWith) await expect(again).rejects.toMatchObject({ code: t.secondRunRefusedWith });
      else await again;
      expect(await t.handoverColumns(table)).toEqual(COLUMNS);
      expect(await a.readHandover?.('e', { signal: signal() })).toEqual(request(oldLease.term));
    });

    it('leader state written by new replicas survives a previous-version replica acquiring (free and expired rows), renewing and releasing', async () => {
      const table = await t.previousVersionTable();
      const old = t.previousVersion(table);
      const [a, b] = [store(table), store(table)];
      if (!supportsState(a) || !supportsState(b)) throw new Error(`${a.name} does not declare leader state`);
      const readBoth = async () => ({
        state: await b.readState('e', { signal: signal() }),
        tick: await b.readState('e', { signal: signal(), key: 'tick:job' }),
      });
      const first = await acquire(a, 'e', 'a');
      if (!first.acquired) throw new Error('not acquired');
      await a.writeState(first.lease, { cursor: 41 }, { signal: signal() });
      await a.writeState(first.lease, 1_700_000_000_000, { signal: signal(), key: 'tick:job' });
      const written = {
        state: { value: { cursor: 41 }, term: first.lease.term },
        tick: { value: 1_700_000_000_000, term: first.lease.term },
      };
      await a.release(first.lease, { signal: signal() });
      // The old replica takes the released row, renews and releases it: the state stays.
      const oldLease = await old.acquire('e', 'old');
      if (!oldLease) throw new Error('the old replica did not acquire');
      expect(await old.renew(oldLease)).toBe(true);
      expect(await readBoth()).toEqual(written);
      // Nobody but the holder may write: the new replica's stale lease is refused while the old one leads.
      await expect(a.writeState(first.lease, { cursor: 99 }, { signal: signal() })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      await old.release(oldLease);
      expect(await readBoth()).toEqual(written);
      // A new leader continues from it; then its lease expires and the old replica takes the expired row.
      const second = await b.acquire({ election: 'e', identity: 'b', leaseDurationMs: 1_000, signal: signal() });
      if (!second.acquired) throw new Error('not acquired');
      expect(second.lease.term).toBeGreaterThan(oldLease.term);
      await b.writeState(second.lease, { cursor: 42 }, { signal: signal() });
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      const takeover = await old.acquire('e', 'old');
      if (!takeover) throw new Error('the old replica did not take the expired row');
      expect(await old.renew(takeover)).toBe(true);
      await old.release(takeover);
      expect(await readBoth()).toEqual({ ...written, state: { value: { cursor: 42 }, term: second.lease.term } });
    });

    it('with createTable: false, leases work as before, the handover calls name the migration to run, then work', async () => {
      const table = await t.previousVersionTable();
      const s = store(table, { createTable: false });
      const taken = await acquire(s, 'e', 'a', { leaderships: 1 });
      if (!taken.acquired) throw new Error('not acquired');
      await s.renew(taken.lease, { leaseDurationMs: 30_000, signal: signal(), meta: { leaderships: 2 } });
      // Without the columns there is no meta to show.
      expect(await s.read('e', { signal: signal() })).toEqual({ held: true, holder: 'a', term: taken.lease.term });
      for (const call of [
        s.requestHandover?.(request(1), { signal: signal() }),
        s.readHandover?.('e', { signal: signal() }),
        s.clearHandover?.('e', 'r1', { signal: signal() }),
      ]) {
        const error = await call?.catch((e: unknown) => e);
        expect(error).toMatchObject({ kind: 'fatal' });
        expect((error as Error).message).toContain(t.migrationName);
      }
      // A release with a reservation still frees the lease (as by a store without handover).
      await s.release(taken.lease, { signal: signal(), handoverTo: 'b', reserveMs: 60_000 });
      expect(await s.read('e', { signal: signal() })).toEqual({ held: false, term: taken.lease.term });
      expect(await t.handoverColumns(table)).toEqual([]);
      await t.migrate(table);
      // A replica started after the migration uses the columns (a running one looks again within a minute).
      const next = store(table, { createTable: false });
      await next.requestHandover?.(request(1), { signal: signal() });
      expect(await next.readHandover?.('e', { signal: signal() })).toEqual(request(1));
      expect(await acquire(next, 'e', 'b', { leaderships: 1 })).toMatchObject({ acquired: true });
      expect(await next.read('e', { signal: signal() })).toMatchObject({
        held: true,
        holder: 'b',
        meta: { leaderships: 1 },
      });
    });

    it('a folded renewal on a table without them: with createTable: false its meta is left out and a handover read fails naming the migration once renewed; with createTable on they are added on the way', async () => {
      const table = await t.previousVersionTable();
      const s = store(table, { createTable: false });
      if (!supportsRenewWith(s) || !supportsState(s)) throw new Error(`${s.name} does not fold renewals`);
      const taken = await acquire(s, 'e', 'a', { leaderships: 1 });
      if (!taken.acquired) throw new Error('not acquired');
      const { lease } = taken;
      const renewWith = (on: FoldingStore, extra: Omit<RenewWithOptions, 'signal' | 'leaseDurationMs'>) =>
        on.renewWith(lease, { leaseDurationMs: 30_000, signal: signal(), ...extra });
      // Twice: once finding the columns missing, once knowing it.
      for (const value of [1, 2]) {
        const reply = await renewWith(s, { meta: { leaderships: 2 }, writeState: [{ key: 'state', value }] });
        expect(reply).toEqual({});
        expect(await s.readState('e', { signal: signal() })).toEqual({ value, term: lease.term });
      }
      expect(await s.read('e', { signal: signal() })).toEqual({ held: true, holder: 'a', term: lease.term });
      const error = await renewWith(s, { readHandover: true, writeState: [{ key: 'state', value: 3 }] }).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ kind: 'fatal' });
      expect((error as Error).message).toContain(t.migrationName);
      // As the separate calls: the renewal and its writes went through, the read could not.
      expect(await s.readState('e', { signal: signal() })).toEqual({ value: 3, term: lease.term });
      expect(await t.handoverColumns(table)).toEqual([]);
      const migrating = store(table);
      if (!supportsRenewWith(migrating)) throw new Error(`${migrating.name} does not fold renewals`);
      expect(await renewWith(migrating, { meta: { leaderships: 3 }, readHandover: true })).toEqual({ handover: null });
      expect(await t.handoverColumns(table)).toEqual(COLUMNS);
      expect(await migrating.read('e', { signal: signal() })).toMatchObject({ holder: 'a', meta: { leaderships: 3 } });
      await migrating.requestHandover?.(request(lease.term), { signal: signal() });
      expect(await renewWith(migrating, { readHandover: true })).toEqual({ handover: request(lease.term) });
    });
  });
}
