import { randomUUID } from 'node:crypto';
import type { PoolConfig, QueryResultRow } from 'pg';
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
  LeaseWatch,
  RecordWriteOptions,
  ReleaseOptions,
  RenewOptions,
  RenewWithOptions,
  RenewWithReply,
  SharedRecord,
  StateCallOptions,
} from '../lease-store.js';
import { type LeaseRowView, leaseInfoOf, refusalOf, refusesAcquire } from '../sql-handover-support.js';
import { type SqlColumns, SqlRecords, sqlColumns } from '../sql-records-support.js';
import { decodeStateEntry, prepareStateWrite, stateKey, stateLostError, withStateColumn } from '../state-support.js';
import { storeMessages as messages } from '../store.messages.js';
import { errorCode, type Step, StoreCallKit, serverClockLimits } from '../store-support.js';
import { PostgresClient, type PostgresLeaseStoreOptions, poolConfig } from './postgres-client.js';
import { classifyPostgresError } from './postgres-errors.js';
import { PostgresListener } from './postgres-listener.js';
import { postgresRecordsProtocol } from './postgres-records.js';
import { PostgresRenewal } from './postgres-renewal.js';
import {
  DEFAULT_SCHEMA,
  DEFAULT_TABLE,
  type PostgresStatements,
  postgresHandoverMigrationSql,
  postgresLeaseStateMigrationSql,
  postgresRecordsMigrationSql,
  postgresStatements,
  qualified,
} from './postgres-sql.js';
import { identifier, jsonb, NUL_ESCAPE } from './postgres-values.js';

export type { PostgresLeaseStoreOptions } from './postgres-client.js';
export {
  postgresHandoverMigrationSql,
  postgresLeaseStateMigrationSql,
  postgresLeaseTableSql,
  postgresRecordsMigrationSql,
} from './postgres-sql.js';

const STORE = 'PostgresLeaseStore';

/**
 * Leases as rows of a PostgreSQL table: `INSERT … ON CONFLICT DO UPDATE … WHERE expires_at <= now`
 * takes over an expired row atomically, with the server's clock (`clock_timestamp()`) as the only
 * time source. The term is a per-row counter bumped on every takeover. Release sends
 * `pg_notify(channel, election)`; {@link watch} LISTENs on a connection of its own so followers
 * contend at once.
 *
 * Leader state lives in the row's `state` jsonb column, `{ [key]: { value, term } }`, written by one
 * `UPDATE … WHERE lease_id = … AND term = … AND expires_at > clock_timestamp()`. A renewal folds what
 * it carries and learns ({@link renewWith}) into ONE statement, one round trip (postgres-renewal.ts).
 *
 * Handover lives in the row too: the holder's meta (written by the acquire, replaced by a renew),
 * a released row's reservation for a named identity (written by the release's own conditional
 * UPDATE; the acquire's ON CONFLICT condition refuses everyone else until it ends), and the pending
 * request; so do shared records (`records`, `{ [key]: { value, version } }`, one compare-and-set
 * statement per write), which like the request any replica writes (a row made for either is free, term 0).
 *
 * Permissions: SELECT, INSERT, UPDATE on the table, plus CREATE on the schema the first time unless
 * the table was created beforehand ({@link postgresLeaseTableSql}); on a table of an earlier version,
 * ownership of the table once to add the columns ({@link postgresLeaseStateMigrationSql},
 * {@link postgresHandoverMigrationSql}, {@link postgresRecordsMigrationSql}).
 */
export class PostgresLeaseStore implements LeaseStore {
  readonly name = STORE;
  readonly limits: LeaseStoreLimits = serverClockLimits('PostgreSQL');

  private readonly table: string;
  private readonly sql: PostgresStatements;
  private readonly schemaName: string;
  private readonly tableName: string;
  private readonly channel: string;
  private readonly createTable: boolean;
  private readonly client: PostgresClient;
  private listener?: PostgresListener;
  private readonly columns: SqlColumns;
  private readonly records: SqlRecords;
  private readonly renewal: PostgresRenewal;
  private readonly calls = new StoreCallKit({
    name: STORE,
    classify: (error) => classifyPostgresError(error, this.table, this.schemaName, this.createTable),
  });

  constructor(options: PostgresLeaseStoreOptions) {
    if (!options?.client === !options?.connection) {
      throw new TypeError(
        messages.backend.clientOrConnection(STORE, 'a pg Pool or Client', 'a pg PoolConfig or connection string'),
      );
    }
    this.schemaName = identifier('schema', options.schema ?? DEFAULT_SCHEMA);
    this.tableName = identifier('table', options.table ?? DEFAULT_TABLE);
    this.table = qualified(this.schemaName, this.tableName);
    this.sql = postgresStatements(this.table);
    this.channel = identifier('channel', options.channel ?? this.tableName);
    this.createTable = options.createTable ?? true;
    const queryTimeoutMs = options.queryTimeoutMs ?? 10_000;
    this.client = new PostgresClient({
      userClient: options.client,
      connection: options.client ? undefined : poolConfig(options.connection as string | PoolConfig, queryTimeoutMs),
      queryTimeoutMs,
      createTable: this.createTable,
      tableName: this.tableName,
      schemaName: this.schemaName,
      assertOpen: () => this.calls.assertOpen(),
    });
    const [tableName, schemaName] = [this.tableName, this.schemaName];
    this.columns = sqlColumns({
      store: STORE,
      table: this.table,
      createTable: this.createTable,
      missing: (error) => errorCode(error) === '42703',
      addColumns: (sql) => this.client.addColumns(sql),
      state: { sql: postgresLeaseStateMigrationSql(tableName, schemaName), name: 'postgresLeaseStateMigrationSql()' },
      handover: { sql: postgresHandoverMigrationSql(tableName, schemaName), name: 'postgresHandoverMigrationSql()' },
      records: { sql: postgresRecordsMigrationSql(tableName, schemaName), name: 'postgresRecordsMigrationSql()' },
    });
    this.records = new SqlRecords({
      store: this,
      calls: this.calls,
      column: this.columns.records,
      protocol: postgresRecordsProtocol(this.table, (step, text, values) => this.query(step, text, values)),
      // jsonb cannot hold U+0000 (SQLSTATE 22P05): refused up front rather than sent.
      storable: (entry) => jsonb(entry, 'shared record'),
    });
    const [calls, columns, sql] = [this.calls, this.columns, this.sql];
    this.renewal = new PostgresRenewal({ store: this, calls, columns, sql, query: (...args) => this.query(...args) });
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, leaseDurationMs } = request;
    const meta = jsonb(encodeLeaseMeta(STORE, request.meta), 'lease meta');
    return this.calls.acquire(request, {
      attempt: async (leaseId, step) => {
        const values = [election, identity, leaseId, leaseDurationMs];
        for (let round = 1; ; round++) {
          const [row] = await this.columns.handover.preferred(
            step,
            () => this.query<LeaseRowView & { acquired: boolean }>(step, this.sql.acquire, [...values, meta ?? null]),
            () => this.query<LeaseRowView & { acquired: boolean }>(step, this.sql.legacy.acquire, values),
          );
          if (row?.acquired) {
            return { acquired: true, lease: { election, holder: identity, leaseId, term: Number(row.term) } };
          }
          if (row) return refusalOf(row);
          // Not taken, and the statement's snapshot predates whoever beat us: ask afresh who holds it.
          step();
          const view = await this.readView(step, election);
          // Freed again meanwhile (that holder already released): it is free now, so try once more
          // rather than answer "held by nobody".
          if (round === 2 || (view && refusesAcquire(view, identity))) {
            return view ? refusalOf(view) : { acquired: false, term: 0 };
          }
          step();
        }
      },
      releaseAttempt: (leaseId, signal) =>
        this.calls.run(signal, (step) => this.query(step, this.sql.release, [election, leaseId, null, this.channel])),
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
    const values = [lease.election, lease.leaseId, lease.term, this.channel];
    await this.calls.run(options.signal, (step) =>
      reservation === undefined
        ? this.query(step, this.sql.release, values)
        : this.columns.handover.preferred(
            step,
            () => this.query(step, this.sql.releaseReserved, [...values, reservation.to, reservation.ms]),
            // Without the columns the lease is still freed, as by a store without handover.
            () => this.query(step, this.sql.release, values),
          ),
    );
  }

  async read(election: string, options: CallOptions): Promise<LeaseInfo> {
    return leaseInfoOf(await this.calls.run(options.signal, (step) => this.readView(step, election)));
  }

  async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const { key, entry } = prepareStateWrite(this, lease, value, options);
    // jsonb cannot hold U+0000 (SQLSTATE 22P05); refused up front rather than retried forever.
    if (NUL_ESCAPE.test(entry)) throw new TypeError(messages.state.notSerialisable(STORE, 'U+0000 in jsonb'));
    const values = [lease.election, lease.leaseId, lease.term, key, entry];
    const rows = await this.calls.run(options.signal, (step) =>
      withStateColumn(step, this.columns.state, () => this.query(step, this.sql.writeState, values)),
    );
    if (rows.length === 0) throw stateLostError(lease);
  }

  async readState(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    const key = stateKey(options);
    const [row] = await this.calls.run(options.signal, (step) =>
      withStateColumn(step, this.columns.state, () =>
        this.query<{ entry: unknown }>(step, this.sql.readState, [election, key]),
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
    const json = jsonb(encodeHandoverRequest(STORE, request), 'handover request');
    const values = [request.election, json, randomUUID()];
    const rows = await this.calls.run(options.signal, (step) =>
      this.columns.handover.required(step, () => this.query(step, this.sql.requestHandover, values)),
    );
    return rows.length > 0;
  }

  async readHandover(election: string, options: CallOptions): Promise<HandoverRequest | undefined> {
    const [row] = await this.calls.run(options.signal, (step) =>
      this.columns.handover.required(step, () =>
        this.query<{ handover: unknown }>(step, this.sql.readHandover, [election]),
      ),
    );
    return decodeHandoverRequest(row?.handover);
  }

  async clearHandover(election: string, id: string, options: CallOptions): Promise<void> {
    await this.calls.run(options.signal, (step) =>
      this.columns.handover.required(step, () => this.query(step, this.sql.clearHandover, [election, id])),
    );
  }

  async listElections(options: CallOptions): Promise<string[]> {
    const rows = await this.calls.run(options.signal, (step) =>
      this.query<{ election: string }>(step, this.sql.listElections, []),
    );
    // Sorted here, by code unit like every other store, whatever the database's collation.
    return rows.map((row) => row.election).sort();
  }

  watch(election: string, onMayBeFree: () => void): LeaseWatch {
    this.listener ??= new PostgresListener(this.channel, () => this.client.listenerConnection());
    return this.listener.add(election, onMayBeFree);
  }

  close(): Promise<void> {
    return this.calls.close({
      stopWatching: async () => this.listener?.close(),
      disconnect: () => this.client.end(),
    });
  }

  // ---- internals ------------------------------------------------------------------------------

  /** The row as readers see it; the previous version's read on a table without handover columns. */
  private async readView(step: Step, election: string): Promise<LeaseRowView | undefined> {
    const [row] = await this.columns.handover.preferred(
      step,
      () => this.query<LeaseRowView>(step, this.sql.read, [election]),
      () => this.query<LeaseRowView>(step, this.sql.legacy.read, [election]),
    );
    return row;
  }

  private query<R extends QueryResultRow = QueryResultRow>(step: Step, text: string, values: unknown[]) {
    return this.client.query<R>(step, text, values);
  }
}
