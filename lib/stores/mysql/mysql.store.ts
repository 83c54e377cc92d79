import type { PoolOptions, RowDataPacket } from 'mysql2/promise';
import {
  decodeHandoverRequest,
  encodeHandoverRequest,
  encodeLeaseMeta,
  releaseReservation,
} from '../handover-support.js';
import type {
  AcquireRequest,
  AcquireResult,
  CallOptions,
  HandoverRequest,
  LeaderStateEntry,
  Lease,
  LeaseInfo,
  LeaseStore,
  LeaseStoreLimits,
  RecordWriteOptions,
  ReleaseOptions,
  RenewOptions,
  RenewWithOptions,
  RenewWithReply,
  SharedRecord,
  StateCallOptions,
} from '../lease-store.js';
import { isReplicaRequest } from '../lease-store.spread-rule.js';
import { type LeaseRowView, leaseInfoOf, refusalOf, refusesAcquire } from '../sql-handover-support.js';
import { type SqlColumns, SqlRecords, sqlColumns } from '../sql-records-support.js';
import { decodeStateEntry, prepareStateWrite, stateKey, stateLostError, withStateColumn } from '../state-support.js';
import { storeMessages as messages } from '../store.messages.js';
import { errorCode, type Step, StoreCallKit, serverClockLimits } from '../store-support.js';
import { affectedRows, MySqlClient, type MySqlLeaseStoreOptions, poolOptions } from './mysql-client.js';
import { classifyMySqlError } from './mysql-errors.js';
import { mysqlRecordsProtocol } from './mysql-records.js';
import { MySqlRenewal } from './mysql-renewal.js';
import {
  DEFAULT_TABLE,
  type MySqlAcquireStatements,
  mysqlHandoverMigrationSql,
  mysqlLeaseStateMigrationSql,
  mysqlRecordsMigrationSql,
  mysqlStatements,
  quote,
} from './mysql-sql.js';

export type { MySqlLeaseStoreOptions } from './mysql-client.js';
export {
  mysqlHandoverMigrationSql,
  mysqlLeaseStateMigrationSql,
  mysqlLeaseTableSql,
  mysqlRecordsMigrationSql,
} from './mysql-sql.js';

const STORE = 'MySqlLeaseStore';
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** A row as the acquire statements report it; `mine`: the lease id is ours. */
interface RowView extends RowDataPacket, LeaseRowView {
  holder: string;
  mine?: number | string | null;
}

/**
 * Leases as rows of a MySQL / MariaDB table. A free or expired row is taken over by one
 * `INSERT … ON DUPLICATE KEY UPDATE` whose every assignment is conditional on
 * `expires_at <= UTC_TIMESTAMP(3)`: the server's clock is the only time source, the row lock makes
 * it atomic, and the term is a per-row counter bumped on every takeover. MySQL has no push
 * notification, so followers poll.
 *
 * Leader state lives in the row's `state` JSON column, `{ [key]: { value, term } }`, written by one
 * `UPDATE … SET state = JSON_SET(…) WHERE lease_id = … AND term = … AND expires_at > UTC_TIMESTAMP(3)`.
 * A renewal folds what it carries and learns ({@link renewWith}) into one UPDATE and a SELECT of the
 * row, sent together: one round trip on the store's own pool, two on a pool you pass in without
 * `multipleStatements` (mysql-renewal.ts).
 *
 * Handover lives in the row too: the holder's meta (written by the acquire, replaced by a renew),
 * a released row's reservation for a named identity (written by the release's own conditional
 * UPDATE; the acquire's conditions refuse everyone else until it ends), and the pending request;
 * so do shared records (`records`, `{ [key]: { value, version } }`, compare-and-set), which like the
 * request any replica writes (a row made for either is free, term 0).
 *
 * Permissions: SELECT, INSERT, UPDATE on the table, plus CREATE on the database the first time
 * unless the table was created beforehand ({@link mysqlLeaseTableSql}); on a table of an earlier
 * version, ALTER once to add the columns ({@link mysqlLeaseStateMigrationSql},
 * {@link mysqlHandoverMigrationSql}, {@link mysqlRecordsMigrationSql}).
 */
export class MySqlLeaseStore implements LeaseStore {
  readonly name = STORE;
  readonly limits: LeaseStoreLimits = serverClockLimits('MySQL');

  private readonly table: string;
  private readonly tableName: string;
  private readonly sql: ReturnType<typeof mysqlStatements>;
  private readonly createTable: boolean;
  private readonly client: MySqlClient;
  private readonly columns: SqlColumns;
  private readonly records: SqlRecords;
  private readonly renewal: MySqlRenewal;
  private readonly calls = new StoreCallKit({
    name: STORE,
    classify: (error) => classifyMySqlError(error, this.table, this.createTable),
  });

  constructor(options: MySqlLeaseStoreOptions) {
    if (!options?.client === !options?.connection) {
      throw new TypeError(
        messages.backend.clientOrConnection(STORE, 'a mysql2/promise Pool', 'a mysql2 PoolOptions or URL'),
      );
    }
    this.tableName = options.table ?? DEFAULT_TABLE;
    if (typeof this.tableName !== 'string' || !IDENTIFIER.test(this.tableName)) {
      throw new TypeError(messages.backend.invalidIdentifier(STORE, 'table', this.tableName, 64));
    }
    this.table = quote(this.tableName);
    this.sql = mysqlStatements(this.table);
    this.createTable = options.createTable ?? true;
    this.client = new MySqlClient({
      userPool: options.client,
      connection: options.client ? undefined : poolOptions(options.connection as string | PoolOptions),
      queryTimeoutMs: options.queryTimeoutMs ?? 10_000,
      createTable: this.createTable,
      tableName: this.tableName,
      assertOpen: () => this.calls.assertOpen(),
    });
    this.columns = sqlColumns({
      store: STORE,
      table: this.table,
      createTable: this.createTable,
      missing: (error) => errorCode(error) === 'ER_BAD_FIELD_ERROR',
      addColumns: (sql) => this.client.addColumns(sql),
      state: { sql: mysqlLeaseStateMigrationSql(this.tableName), name: 'mysqlLeaseStateMigrationSql()' },
      handover: { sql: mysqlHandoverMigrationSql(this.tableName), name: 'mysqlHandoverMigrationSql()' },
      records: { sql: mysqlRecordsMigrationSql(this.tableName), name: 'mysqlRecordsMigrationSql()' },
    });
    const protocol = mysqlRecordsProtocol(this.table, (sql, values) => this.query(sql, values));
    this.records = new SqlRecords({ store: this, calls: this.calls, column: this.columns.records, protocol });
    const [calls, columns, sql, client] = [this.calls, this.columns, this.sql, this.client];
    this.renewal = new MySqlRenewal({ store: this, calls, columns, sql, client });
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, leaseDurationMs } = request;
    const meta = encodeLeaseMeta(STORE, request.meta) ?? null;
    const attempt = async (sql: MySqlAcquireStatements, leaseId: string, step: Step): Promise<AcquireResult> => {
      for (let round = 1; ; round++) {
        const [current] = await this.query<RowView>(sql.read, [election]);
        if (current && refusesAcquire(current, identity)) return refusalOf(current);
        step();
        const values = [election, identity, leaseId, leaseDurationMs];
        await this.query(sql.take, sql === this.sql ? [...values, meta, leaseId] : values);
        step();
        const [row] = await this.query<RowView>(sql.mine, [leaseId, election]);
        if (row && Number(row.mine) === 1) {
          return { acquired: true, lease: { election, holder: identity, leaseId, term: Number(row.term) } };
        }
        // Beaten between our read and our take by a holder that has released since: it is free now,
        // so try once more rather than answer "held by nobody" and wait a whole retry interval.
        if (round === 2 || !row || refusesAcquire(row, identity)) return row ? refusalOf(row) : { acquired: false };
        step();
      }
    };
    return this.calls.acquire(request, {
      attempt: (leaseId, step) =>
        this.columns.handover.preferred(
          step,
          () => attempt(this.sql, leaseId, step),
          () => attempt(this.sql.legacy, leaseId, step),
        ),
      releaseAttempt: (leaseId, signal) =>
        this.calls.run(signal, () => this.query(this.sql.release, [election, leaseId, null, null])),
    });
  }

  renew(lease: Lease, options: RenewOptions): Promise<void> {
    return this.renewal.renew(lease, options);
  }

  renewWith(lease: Lease, options: RenewWithOptions): Promise<RenewWithReply> {
    return this.renewal.renewWith(lease, options);
  }

  async release(lease: Lease, options: ReleaseOptions): Promise<void> {
    const reservation = releaseReservation(options, this.limits);
    const values = [lease.election, lease.leaseId, lease.term, lease.term];
    const plain = () => this.query(this.sql.release, values);
    await this.calls.run(options.signal, (step) =>
      reservation === undefined
        ? plain()
        : // Without the columns the lease is still freed, as by a store without handover.
          this.columns.handover.preferred(
            step,
            () => this.query(this.sql.releaseReserved, [reservation.to, reservation.ms, ...values]),
            plain,
          ),
    );
  }

  async read(election: string, options: CallOptions): Promise<LeaseInfo> {
    const [row] = await this.calls.run(options.signal, (step) =>
      this.columns.handover.preferred(
        step,
        () => this.query<RowView>(this.sql.read, [election]),
        () => this.query<RowView>(this.sql.legacy.read, [election]),
      ),
    );
    return leaseInfoOf(row);
  }

  async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const { key, entry } = prepareStateWrite(this, lease, value, options);
    const ours = [lease.election, lease.leaseId, lease.term];
    const written = await this.calls.run(options.signal, (step) =>
      withStateColumn(step, this.columns.state, async () => {
        const result = await this.query(this.sql.writeState, [`$."${key}"`, entry, ...ours]);
        if (affectedRows(result) > 0) return true;
        // Without FOUND_ROWS, writing the entry already stored changes nothing and counts 0 rows.
        step();
        return (await this.query(this.sql.stillMine, ours)).length > 0;
      }),
    );
    if (!written) throw stateLostError(lease);
  }

  async readState(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    const key = stateKey(options);
    const [row] = await this.calls.run(options.signal, (step) =>
      withStateColumn(step, this.columns.state, () =>
        this.query<RowDataPacket & { entry: unknown }>(this.sql.readState, [`$."${key}"`, election]),
      ),
    );
    return row?.entry == null ? undefined : decodeStateEntry(STORE, election, key, row.entry);
  }

  readRecord(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined> {
    return this.records.read(election, key, options);
  }

  writeRecord(election: string, key: string, value: unknown, options: RecordWriteOptions): Promise<boolean> {
    return this.records.write(election, key, value, options);
  }

  readonly conditionalSpreadRequests = true;

  async requestHandover(request: HandoverRequest, options: CallOptions): Promise<boolean> {
    const { election, term } = request;
    const json = encodeHandoverRequest(STORE, request);
    return this.calls.run(options.signal, (step) =>
      this.columns.handover.required(step, async () => {
        if (!isReplicaRequest(request.reason)) {
          await this.query(this.sql.requestHandover, [election, json]);
          return true;
        }
        // A new id always changes the value, so "affected" is 1 with or without CLIENT_FOUND_ROWS.
        if (affectedRows(await this.query(this.sql.requestSpread, [json, election, term])) > 0) return true;
        step();
        return affectedRows(await this.query(this.sql.insertSpread, [election, json])) > 0;
      }),
    );
  }

  async readHandover(election: string, options: CallOptions): Promise<HandoverRequest | undefined> {
    const [row] = await this.calls.run(options.signal, (step) =>
      this.columns.handover.required(step, () =>
        this.query<RowDataPacket & { handover: unknown }>(this.sql.readHandover, [election]),
      ),
    );
    return decodeHandoverRequest(row?.handover);
  }

  async clearHandover(election: string, id: string, options: CallOptions): Promise<void> {
    await this.calls.run(options.signal, (step) =>
      this.columns.handover.required(step, () => this.query(this.sql.clearHandover, [election, id])),
    );
  }

  async listElections(options: CallOptions): Promise<string[]> {
    const rows = await this.calls.run(options.signal, () =>
      this.query<RowDataPacket & { election: string }>(this.sql.listElections, []),
    );
    // Sorted here, by code unit like every other store, whatever the table's collation.
    return rows.map((row) => row.election).sort();
  }

  close(): Promise<void> {
    // Only our own pool: a pool the user passed in stays theirs.
    return this.calls.close({ disconnect: () => this.client.end() });
  }

  private query<R = unknown>(sql: string, values: unknown[]): Promise<R[]> {
    return this.client.query<R>(sql, values);
  }
}
