import { randomUUID } from 'node:crypto';
import { FatalLeaseStoreError } from '../shared/errors.js';
import type {
  CallOptions,
  HandoverRequest,
  Lease,
  LeaseStore,
  RecordWriteOptions,
  RenewWithOptions,
  RenewWithReply,
  SharedRecord,
} from './lease-store.js';
import { decodeRecord, encodeRecord, prepareRecordWrite, recordKey } from './record-support.js';
import { type PreparedRenewal, renewalReply } from './renew-with-support.js';
import { HandoverColumns } from './sql-handover-support.js';
import { onceUntilDone, withStateColumn } from './state-support.js';
import { storeMessages as messages } from './store.messages.js';
import type { Step, StoreCallKit } from './store-support.js';

/**
 * What the SQL stores (PostgreSQL, MySQL) share of shared records: each election's records live in
 * the lease row's `records` JSON column, `{ [key]: { value, version } }`, a column a table of an
 * earlier version gains in place exactly like the state column (`withStateColumn`: added on first
 * use with createTable on, else a fatal error naming the migration). The version is a fresh random
 * UUID per write, so a version never comes back (no ABA) and the new value always differs from the
 * old one (MySQL counts a row as affected only when a value changes). Adding that column made three
 * later columns, so their guards (state, handover, records) are built here once for both stores, and
 * so is what a folded renewal does on a table that lacks one of them ({@link renewSeparately}).
 */

/** How a SQL store finds a later column missing and adds it (the shape `withStateColumn` takes). */
export type ColumnGuard = Parameters<typeof withStateColumn>[1];

/** An in-place migration: its SQL, and the exported function that prints it (named in the fatal error). */
export interface ColumnMigration {
  sql: string;
  name: string;
}

/** The columns later versions added to a SQL store's lease table. */
export interface SqlColumns {
  state: ColumnGuard;
  handover: HandoverColumns;
  records: ColumnGuard;
}

/**
 * The guards of the columns later versions added to the lease table (state, handover, records):
 * each found missing by the driver's "unknown column" error and added in place once, race-safe,
 * with createTable on; with it off, a fatal error names the migration to run.
 */
export function sqlColumns(options: {
  store: string;
  table: string;
  createTable: boolean;
  missing(error: unknown): boolean;
  /** Runs an idempotent or race-tolerant `ALTER TABLE … ADD COLUMN`. */
  addColumns(sql: string): Promise<void>;
  state: ColumnMigration;
  handover: ColumnMigration;
  records: ColumnMigration;
}): SqlColumns {
  const { store, table, createTable, missing } = options;
  const guard = ({ sql }: ColumnMigration, message: string): ColumnGuard => ({
    missing,
    migrate: onceUntilDone(() => options.addColumns(sql)),
    createTable,
    missingError: () => new FatalLeaseStoreError(message),
  });
  const { state, handover, records } = options;
  return {
    state: guard(state, messages.state.columnMissing(store, table, state.name)),
    handover: new HandoverColumns(guard(handover, messages.handover.columnsMissing(store, table, handover.name))),
    records: guard(records, messages.records.columnMissing(store, table, records.name)),
  };
}

/** A SQL store's own statements for records; both run inside a call, with the column there. */
export interface SqlRecordsProtocol {
  /** The stored entry (JSON text or parsed), or null/undefined when the record or row is absent. */
  read(step: Step, election: string, key: string): Promise<unknown>;
  /**
   * Writes `entry` (the encoded `{ value, version }`) as record `key` if its version is
   * `ifVersion` (null: only if absent), atomically at the server; creates the row free (term 0)
   * when missing. True when written.
   */
  write(step: Step, election: string, key: string, entry: string, ifVersion: string | null): Promise<boolean>;
}

export interface SqlRecordsOptions {
  store: Pick<LeaseStore, 'name'>;
  calls: StoreCallKit;
  column: ColumnGuard;
  protocol: SqlRecordsProtocol;
  /** Refuses an entry the column cannot hold (throws a TypeError), before anything is sent. */
  storable?(entry: string): void;
}

/** `readRecord`/`writeRecord` of a SQL store: validation, versions and the column, around its protocol. */
export class SqlRecords {
  constructor(private readonly options: SqlRecordsOptions) {}

  async read(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined> {
    const { store, calls, column, protocol } = this.options;
    const checked = recordKey(key);
    const stored = await calls.run(options.signal, (step) =>
      withStateColumn(step, column, () => protocol.read(step, election, checked)),
    );
    return stored == null ? undefined : decodeRecord(store.name, election, checked, stored);
  }

  async write(election: string, key: string, value: unknown, options: RecordWriteOptions): Promise<boolean> {
    const { store, calls, column, protocol } = this.options;
    // Checked before the call: a TypeError inside it would be classified as the server's failure.
    const { key: checked, json, ifVersion } = prepareRecordWrite(store, key, value, options);
    const entry = encodeRecord(json, randomUUID());
    this.options.storable?.(entry);
    return calls.run(options.signal, (step) =>
      withStateColumn(step, column, () => protocol.write(step, election, checked, entry, ifVersion)),
    );
  }
}

/** What {@link renewSeparately} calls: the store's own separate calls. */
export type SeparateCalls = Pick<LeaseStore, 'name' | 'limits' | 'renew'> & {
  readHandover(election: string, options: CallOptions): Promise<HandoverRequest | undefined>;
  readRecord(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined>;
};

/** What a SQL store's renewals need beside their statements and connection. */
export interface SqlRenewalParts {
  /** The store itself: its limits, and its separate calls for a table that lacks a column. */
  store: SeparateCalls;
  calls: StoreCallKit;
  columns: SqlColumns;
}

/**
 * A folded renewal (`renewWith`) whose one statement named a column the table lacks (a table of an
 * earlier version; nothing was applied): the separate calls instead, in the elector's order, each
 * behind its own guard, since the driver's "unknown column" does not say which column is missing.
 * So such a table works for what it can: columns added in place with createTable on (the next
 * renewal folds again), else the error the separate call throws, naming the migration to run. The
 * state entries still go together, in one statement under the lease's condition (`writeAll`).
 */
export async function renewSeparately(
  store: SeparateCalls,
  lease: Lease,
  options: RenewWithOptions,
  asked: PreparedRenewal,
  writeAll: () => Promise<void>,
): Promise<RenewWithReply> {
  const { signal } = options;
  await store.renew(lease, options);
  if (asked.writes.length > 0) await writeAll();
  const handover = asked.readHandover ? await store.readHandover(lease.election, { signal }) : undefined;
  const records = new Map<string, SharedRecord | undefined>();
  for (const key of asked.recordKeys) records.set(key, await store.readRecord(lease.election, key, { signal }));
  return renewalReply(
    asked,
    () => handover,
    (key) => records.get(key),
  );
}
