// A static import is fine here: this file is reachable only through the `/mysql` subpath, whose
// users have installed the optional peer `mysql2`.
import mysql, { type Pool, type PoolOptions, type RowDataPacket } from 'mysql2/promise';
import { messages } from '../../leader-election.messages.js';
import { HandoverColumns } from '../handover-columns.js';
import {
  decodeHandoverRequest,
  decodeLeaseMeta,
  encodeHandoverRequest,
  encodeLeaseMeta,
  releaseReservation,
} from '../handover-support.js';
import {
  type AcquireRequest,
  type AcquireResult,
  type CallOptions,
  FatalLeaseStoreError,
  type HandoverRequest,
  type LeaderStateEntry,
  type Lease,
  type LeaseInfo,
  LeaseLostError,
  type LeaseStore,
  type LeaseStoreLimits,
  type ReleaseOptions,
  type RenewOptions,
  type StateCallOptions,
} from '../lease-store.js';
import {
  decodeStateEntry,
  onceUntilDone,
  prepareStateWrite,
  stateKey,
  stateLostError,
  withStateColumn,
} from '../state-support.js';
import { checkConnectionUrl, errorCode, type Step, StoreCalls, serverClockLimits } from '../store-support.js';
import { classifyMySqlError } from './mysql-errors.js';
import {
  DEFAULT_TABLE,
  type MySqlAcquireStatements,
  mysqlHandoverMigrationSql,
  mysqlLeaseStateMigrationSql,
  mysqlLeaseTableSql,
  mysqlStatements,
  quote,
} from './mysql-sql.js';

export {
  MYSQL_LEASE_TABLE_SQL,
  mysqlHandoverMigrationSql,
  mysqlLeaseStateMigrationSql,
  mysqlLeaseTableSql,
} from './mysql-sql.js';

const STORE = 'MySqlLeaseStore';
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const URL_PROTOCOLS = ['mysql:', 'mariadb:'];

export interface MySqlLeaseStoreOptions {
  /** An existing mysql2 pool from `mysql2/promise`. The store never closes it. */
  client?: Pool;
  /**
   * Connection URL or pool settings for a pool the store opens (and closes in `close()`).
   * Defaults added unless given: connect timeout 5 s, 4 connections, TCP keep-alive.
   */
  connection?: string | PoolOptions;
  /** Table with one row per election, in the connection's database. Default `leader_election_leases`. */
  table?: string;
  /** Create the table on first use when it is missing (default true). */
  createTable?: boolean;
  /** Client-side bound of one statement (mysql2 then drops the connection). Default 10000. */
  queryTimeoutMs?: number;
}

/** A row as the acquire and read statements report it (the previous version's: no meta, no reservation). */
interface RowView extends RowDataPacket {
  term: number | string;
  holder: string;
  held: number | string | null;
  meta?: unknown;
  reserved_for?: string | null;
  /** Until the holder's expiry, or the reservation's end. */
  expires_in_ms?: number | string | null;
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
 *
 * Handover lives in the row too: the holder's meta (written by the acquire, replaced by a renew),
 * a released row's reservation for a named identity (written by the release's own conditional
 * UPDATE; the acquire's conditions refuse everyone else until it ends), and the pending request
 * (any replica; a row made for it is free, term 0).
 *
 * Permissions: SELECT, INSERT, UPDATE on the table, plus CREATE on the database the first time
 * unless the table was created beforehand ({@link mysqlLeaseTableSql}); on a table of an earlier
 * version, ALTER once to add the columns ({@link mysqlLeaseStateMigrationSql},
 * {@link mysqlHandoverMigrationSql}).
 */
export class MySqlLeaseStore implements LeaseStore {
  readonly name = STORE;
  readonly limits: LeaseStoreLimits = serverClockLimits('MySQL');

  private readonly table: string;
  private readonly tableName: string;
  private readonly sql: ReturnType<typeof mysqlStatements>;
  private readonly createTable: boolean;
  private readonly queryTimeoutMs: number;
  private readonly userPool?: Pool;
  private readonly connection?: PoolOptions;
  private pool?: Pool;
  private tableReady?: Promise<void>;
  private readonly stateColumn = {
    missing: (error: unknown) => errorCode(error) === 'ER_BAD_FIELD_ERROR',
    migrate: onceUntilDone(() => this.addColumns(mysqlLeaseStateMigrationSql(this.tableName))),
    createTable: true,
    missingError: () =>
      new FatalLeaseStoreError(messages.state.columnMissing(STORE, this.table, 'mysqlLeaseStateMigrationSql()')),
  };
  private readonly handoverColumns: HandoverColumns;
  private readonly calls = new StoreCalls({
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
    this.stateColumn.createTable = this.createTable;
    this.handoverColumns = new HandoverColumns({
      missing: (error) => errorCode(error) === 'ER_BAD_FIELD_ERROR',
      migrate: onceUntilDone(() => this.addColumns(mysqlHandoverMigrationSql(this.tableName))),
      createTable: this.createTable,
      missingError: () =>
        new FatalLeaseStoreError(messages.handover.columnsMissing(STORE, this.table, 'mysqlHandoverMigrationSql()')),
    });
    this.queryTimeoutMs = options.queryTimeoutMs ?? 10_000;
    this.userPool = options.client;
    if (!options.client) {
      const config = typeof options.connection === 'string' ? { uri: options.connection } : options.connection;
      if (config?.uri !== undefined) {
        const option = typeof options.connection === 'string' ? 'connection' : 'connection.uri';
        checkConnectionUrl(STORE, option, config.uri, URL_PROTOCOLS, 'mysql://user:password@host:3306/database');
      }
      this.connection = { connectTimeout: 5_000, connectionLimit: 4, enableKeepAlive: true, ...config };
    }
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, leaseDurationMs } = request;
    const meta = encodeLeaseMeta(STORE, request.meta) ?? null;
    const attempt = async (sql: MySqlAcquireStatements, leaseId: string, step: Step): Promise<AcquireResult> => {
      const [current] = await this.query<RowView>(sql.read, [election]);
      if (current && refuses(current, identity)) return refusal(current);
      step();
      const values = [election, identity, leaseId, leaseDurationMs];
      await this.query(sql.take, sql === this.sql ? [...values, meta, leaseId] : values);
      step();
      const [row] = await this.query<RowView>(sql.mine, [leaseId, election]);
      if (row && Number(row.mine) === 1) {
        return { acquired: true, lease: { election, holder: identity, leaseId, term: Number(row.term) } };
      }
      return row ? refusal(row) : { acquired: false };
    };
    return this.calls.acquire(request, {
      attempt: (leaseId, step) =>
        this.handoverColumns.preferred(
          step,
          () => attempt(this.sql, leaseId, step),
          () => attempt(this.sql.legacy, leaseId, step),
        ),
      releaseAttempt: (leaseId, signal) =>
        this.calls.run(signal, () => this.query(this.sql.release, [election, leaseId, null, null])),
    });
  }

  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const meta = encodeLeaseMeta(STORE, options.meta);
    const ours = [lease.election, lease.leaseId, lease.term];
    const renewed = await this.calls.run(options.signal, async (step) => {
      const plain = () => this.query(this.sql.renew, [options.leaseDurationMs, ...ours]);
      const result =
        meta === undefined
          ? await plain()
          : await this.handoverColumns.preferred(
              step,
              () => this.query(this.sql.renewMeta, [meta, options.leaseDurationMs, ...ours]),
              plain,
            );
      if (affectedRows(result) > 0) return true;
      // Without FOUND_ROWS a renewal in the same millisecond changes nothing and counts 0 rows.
      step();
      return (await this.query(this.sql.stillMine, ours)).length > 0;
    });
    if (!renewed) throw new LeaseLostError(messages.leaseLost(lease.election));
  }

  async release(lease: Lease, options: ReleaseOptions): Promise<void> {
    const reservation = releaseReservation(options);
    const values = [lease.election, lease.leaseId, lease.term, lease.term];
    const plain = () => this.query(this.sql.release, values);
    await this.calls.run(options.signal, (step) =>
      reservation === undefined
        ? plain()
        : // Without the columns the lease is still freed, as by a store without handover.
          this.handoverColumns.preferred(
            step,
            () => this.query(this.sql.releaseReserved, [reservation.to, reservation.ms, ...values]),
            plain,
          ),
    );
  }

  async read(election: string, options: CallOptions): Promise<LeaseInfo> {
    const [row] = await this.calls.run(options.signal, (step) =>
      this.handoverColumns.preferred(
        step,
        () => this.query<RowView>(this.sql.read, [election]),
        () => this.query<RowView>(this.sql.legacy.read, [election]),
      ),
    );
    if (!row) return { held: false, term: 0 };
    const term = Number(row.term);
    if (Number(row.held) !== 1) {
      return row.reserved_for == null ? { held: false, term } : { held: false, term, reservedFor: row.reserved_for };
    }
    const meta = decodeLeaseMeta(row.meta);
    return meta === undefined
      ? { held: true, holder: row.holder, term }
      : { held: true, holder: row.holder, term, meta };
  }

  async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const { key, entry } = prepareStateWrite(this, lease, value, options);
    const ours = [lease.election, lease.leaseId, lease.term];
    const written = await this.calls.run(options.signal, (step) =>
      withStateColumn(step, this.stateColumn, async () => {
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
      withStateColumn(step, this.stateColumn, () =>
        this.query<RowDataPacket & { entry: unknown }>(this.sql.readState, [`$."${key}"`, election]),
      ),
    );
    return row?.entry == null ? undefined : decodeStateEntry(STORE, election, key, row.entry);
  }

  async requestHandover(request: HandoverRequest, options: CallOptions): Promise<void> {
    const values = [request.election, encodeHandoverRequest(STORE, request)];
    await this.calls.run(options.signal, (step) =>
      this.handoverColumns.required(step, () => this.query(this.sql.requestHandover, values)),
    );
  }

  async readHandover(election: string, options: CallOptions): Promise<HandoverRequest | undefined> {
    const [row] = await this.calls.run(options.signal, (step) =>
      this.handoverColumns.required(step, () =>
        this.query<RowDataPacket & { handover: unknown }>(this.sql.readHandover, [election]),
      ),
    );
    return decodeHandoverRequest(row?.handover);
  }

  async clearHandover(election: string, id: string, options: CallOptions): Promise<void> {
    await this.calls.run(options.signal, (step) =>
      this.handoverColumns.required(step, () => this.query(this.sql.clearHandover, [election, id])),
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
    return this.calls.close({ disconnect: () => this.pool?.end() });
  }

  // ---- internals ------------------------------------------------------------------------------

  /**
   * One statement; a missing table is created once and the statement retried. mysql2 cannot
   * cancel a statement: an abandoned one finishes in the background, and the callers' `step()`
   * refuses to send another after the abort.
   */
  private async query<R = unknown>(sql: string, values: unknown[]): Promise<R[]> {
    const pool = this.getPool();
    const options = { sql, values, timeout: this.queryTimeoutMs, rowsAsArray: false };
    try {
      return (await pool.query(options))[0] as R[];
    } catch (error) {
      if (!this.createTable || errorCode(error) !== 'ER_NO_SUCH_TABLE') throw error;
      await this.ensureTable(pool);
      return (await pool.query(options))[0] as R[];
    }
  }

  private ensureTable(pool: Pool): Promise<void> {
    this.tableReady ??= pool.query({ sql: mysqlLeaseTableSql(this.tableName), timeout: this.queryTimeoutMs }).then(
      () => undefined,
      (error: unknown) => {
        this.tableReady = undefined;
        throw error;
      },
    );
    return this.tableReady;
  }

  /** One ALTER adding columns; "Duplicate column name" (added meanwhile by another instance or by hand) is done. */
  private async addColumns(sql: string): Promise<void> {
    try {
      await this.getPool().query({ sql, timeout: this.queryTimeoutMs });
    } catch (error) {
      if (errorCode(error) !== 'ER_DUP_FIELDNAME') throw error;
    }
  }

  private getPool(): Pool {
    this.calls.assertOpen();
    if (this.userPool) return this.userPool;
    this.pool ??= mysql.createPool(this.connection as PoolOptions);
    return this.pool;
  }
}

/** Refused without trying: held, or reserved for someone else (meta and reservation as the row view gates them). */
function refuses(row: RowView, identity: string): boolean {
  return Number(row.held) === 1 || (row.reserved_for != null && row.reserved_for !== identity);
}

/** A refused acquire, from the row as read. */
function refusal(row: RowView): AcquireResult {
  const held = Number(row.held) === 1;
  const expiresInMs = row.expires_in_ms == null ? Number.NaN : Number(row.expires_in_ms);
  const meta = held ? decodeLeaseMeta(row.meta) : undefined;
  return {
    acquired: false,
    ...(held && { holder: row.holder }),
    term: Number(row.term),
    // The holder's expiry (or the reservation's end) by the server's clock, as a delay: a hint.
    ...(Number.isFinite(expiresInMs) && (held || row.reserved_for != null) && { expiresInMs }),
    ...(meta !== undefined && { meta }),
    ...(!held && row.reserved_for != null && { reservedFor: row.reserved_for }),
  };
}

function affectedRows(result: unknown): number {
  return Number((result as unknown as { affectedRows?: number }).affectedRows ?? 0);
}
