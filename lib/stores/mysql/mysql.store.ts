// A static import is fine here: this file is reachable only through the `/mysql` subpath, whose
// users have installed the optional peer `mysql2`.
import mysql, { type Pool, type PoolOptions, type RowDataPacket } from 'mysql2/promise';
import { messages } from '../../leader-election.messages.js';
import {
  type AcquireRequest,
  type AcquireResult,
  type CallOptions,
  FatalLeaseStoreError,
  type LeaderStateEntry,
  type Lease,
  type LeaseInfo,
  LeaseLostError,
  type LeaseStore,
  type LeaseStoreLimits,
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

const STORE = 'MySqlLeaseStore';
const DEFAULT_TABLE = 'leader_election_leases';
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const URL_PROTOCOLS = ['mysql:', 'mariadb:'];

/**
 * The table the store uses, for a migration when the application's account may not create tables
 * (then pass `createTable: false`). Grant the account SELECT, INSERT, UPDATE on it.
 *
 * `expires_at` holds UTC (`UTC_TIMESTAMP(3)`), never `NOW()`: NOW() follows each session's
 * time_zone, and two replicas with different session time zones would disagree about expiry.
 * The binary collation keeps election names case-sensitive, as everywhere else.
 */
export function mysqlLeaseTableSql(table = DEFAULT_TABLE): string {
  return `CREATE TABLE IF NOT EXISTS ${quote(table)} (
  election   VARCHAR(200) NOT NULL,
  holder     VARCHAR(256) NOT NULL,
  lease_id   CHAR(36)     NOT NULL,
  term       BIGINT       NOT NULL,
  expires_at DATETIME(3)  NOT NULL,
  state      JSON         NULL,
  PRIMARY KEY (election)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
}

/**
 * Adds the leader-state column to a table made by a version before it, in place. Nullable without
 * a default, because MySQL allows no literal default on a JSON column; replicas of the previous
 * version never name it, so they go on working beside it. The store runs it on first state use
 * when createTable is on (a "Duplicate column name" from a concurrent run counts as done); with
 * `createTable: false`, run it once in a migration (on MariaDB, `ADD COLUMN IF NOT EXISTS` makes a
 * second run a no-op too).
 */
export function mysqlLeaseStateMigrationSql(table = DEFAULT_TABLE): string {
  return `ALTER TABLE ${quote(table)} ADD COLUMN state JSON NULL`;
}

/** {@link mysqlLeaseTableSql} for the default table `leader_election_leases`. */
export const MYSQL_LEASE_TABLE_SQL = mysqlLeaseTableSql();

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

interface StateRow extends RowDataPacket {
  holder: string;
  term: number | string;
  held: number | string | null;
}

interface MineRow extends RowDataPacket {
  holder: string;
  term: number | string;
  mine: number | string | null;
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
 * Permissions: SELECT, INSERT, UPDATE on the table, plus CREATE on the database the first time
 * unless the table was created beforehand ({@link mysqlLeaseTableSql}); on a table of a version
 * before leader state, ALTER once to add the column ({@link mysqlLeaseStateMigrationSql}).
 */
export class MySqlLeaseStore implements LeaseStore {
  readonly name = STORE;
  readonly limits: LeaseStoreLimits = serverClockLimits('MySQL');

  private readonly table: string;
  private readonly tableName: string;
  private readonly createTable: boolean;
  private readonly queryTimeoutMs: number;
  private readonly userPool?: Pool;
  private readonly connection?: PoolOptions;
  private pool?: Pool;
  private tableReady?: Promise<void>;
  private readonly stateColumn = {
    missing: (error: unknown) => errorCode(error) === 'ER_BAD_FIELD_ERROR',
    migrate: onceUntilDone(() => this.addStateColumn()),
    createTable: true,
    missingError: () =>
      new FatalLeaseStoreError(messages.state.columnMissing(STORE, this.table, 'mysqlLeaseStateMigrationSql()')),
  };
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
    this.createTable = options.createTable ?? true;
    this.stateColumn.createTable = this.createTable;
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

  acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, leaseDurationMs } = request;
    const attempt = async (leaseId: string, step: Step): Promise<AcquireResult> => {
      // Polling followers mostly find the lease held: one plain read answers that without a lock.
      const [current] = await this.query<StateRow>(
        `SELECT holder, term, expires_at > UTC_TIMESTAMP(3) AS held FROM ${this.table} WHERE election = ?`,
        [election],
      );
      if (current && Number(current.held) === 1) {
        return { acquired: false, holder: current.holder, term: Number(current.term) };
      }
      // `expires_at` is assigned last: MySQL evaluates the assignments left to right, so every
      // condition before it still sees the old expiry.
      step();
      await this.query(
        `INSERT INTO ${this.table} (election, holder, lease_id, term, expires_at)
         VALUES (?, ?, ?, 1, TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(3)))
         ON DUPLICATE KEY UPDATE
           holder = IF(expires_at <= UTC_TIMESTAMP(3), VALUES(holder), holder),
           lease_id = IF(expires_at <= UTC_TIMESTAMP(3), VALUES(lease_id), lease_id),
           term = IF(expires_at <= UTC_TIMESTAMP(3), term + 1, term),
           expires_at = IF(expires_at <= UTC_TIMESTAMP(3), VALUES(expires_at), expires_at)`,
        [election, identity, leaseId, leaseDurationMs],
      );
      // Our lease id is fresh: finding it in the row is the proof we took it (affectedRows is not,
      // as its meaning depends on the connection's FOUND_ROWS flag).
      step();
      const [row] = await this.query<MineRow>(
        `SELECT holder, term, lease_id = ? AS mine FROM ${this.table} WHERE election = ?`,
        [leaseId, election],
      );
      if (row && Number(row.mine) === 1) {
        return { acquired: true, lease: { election, holder: identity, leaseId, term: Number(row.term) } };
      }
      return row ? { acquired: false, holder: row.holder, term: Number(row.term) } : { acquired: false };
    };
    return this.calls.acquire(request, {
      attempt,
      releaseAttempt: (leaseId, signal) => this.calls.run(signal, () => this.releaseRow(election, leaseId, undefined)),
    });
  }

  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const mine = `election = ? AND lease_id = ? AND term = ? AND expires_at > UTC_TIMESTAMP(3)`;
    const ours = [lease.election, lease.leaseId, lease.term];
    const renewed = await this.calls.run(options.signal, async (step) => {
      const result = await this.query(
        `UPDATE ${this.table} SET expires_at = TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(3)) WHERE ${mine}`,
        [options.leaseDurationMs, ...ours],
      );
      if (affectedRows(result) > 0) return true;
      // Without FOUND_ROWS a renewal in the same millisecond changes nothing and counts 0 rows.
      step();
      return (await this.query(`SELECT 1 AS ok FROM ${this.table} WHERE ${mine}`, ours)).length > 0;
    });
    if (!renewed) throw new LeaseLostError(messages.leaseLost(lease.election));
  }

  async release(lease: Lease, options: CallOptions): Promise<void> {
    await this.calls.run(options.signal, () => this.releaseRow(lease.election, lease.leaseId, lease.term));
  }

  async read(election: string, options: CallOptions): Promise<LeaseInfo> {
    const [row] = await this.calls.run(options.signal, () =>
      this.query<StateRow>(
        `SELECT holder, term, expires_at > UTC_TIMESTAMP(3) AS held FROM ${this.table} WHERE election = ?`,
        [election],
      ),
    );
    if (!row) return { held: false, term: 0 };
    const term = Number(row.term);
    return Number(row.held) === 1 ? { held: true, holder: row.holder, term } : { held: false, term };
  }

  async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const { key, entry } = prepareStateWrite(this, lease, value, options);
    const mine = `election = ? AND lease_id = ? AND term = ? AND expires_at > UTC_TIMESTAMP(3)`;
    const ours = [lease.election, lease.leaseId, lease.term];
    // JSON_EXTRACT(?, '$') makes the parameter a JSON value on both MySQL and MariaDB (which has
    // no CAST … AS JSON); the key needs no escaping, stateKey() allows no quote or backslash.
    const written = await this.calls.run(options.signal, (step) =>
      withStateColumn(step, this.stateColumn, async () => {
        const result = await this.query(
          `UPDATE ${this.table} SET state = JSON_SET(COALESCE(state, '{}'), ?, JSON_EXTRACT(?, '$')) WHERE ${mine}`,
          [`$."${key}"`, entry, ...ours],
        );
        if (affectedRows(result) > 0) return true;
        // Without FOUND_ROWS, writing the entry already stored changes nothing and counts 0 rows.
        step();
        return (await this.query(`SELECT 1 AS ok FROM ${this.table} WHERE ${mine}`, ours)).length > 0;
      }),
    );
    if (!written) throw stateLostError(lease);
  }

  async readState(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    const key = stateKey(options);
    const [row] = await this.calls.run(options.signal, (step) =>
      withStateColumn(step, this.stateColumn, () =>
        this.query<RowDataPacket & { entry: unknown }>(
          `SELECT JSON_EXTRACT(state, ?) AS entry FROM ${this.table} WHERE election = ?`,
          [`$."${key}"`, election],
        ),
      ),
    );
    return row?.entry == null ? undefined : decodeStateEntry(STORE, election, key, row.entry);
  }

  close(): Promise<void> {
    // Only our own pool: a pool the user passed in stays theirs.
    return this.calls.close({ disconnect: () => this.pool?.end() });
  }

  // ---- internals ------------------------------------------------------------------------------

  /** Conditional on lease id and (when known) term, so it never releases a later holder's row. */
  private releaseRow(election: string, leaseId: string, term: number | undefined): Promise<unknown> {
    return this.query(
      `UPDATE ${this.table} SET expires_at = '1970-01-01 00:00:00'
       WHERE election = ? AND lease_id = ? AND (? IS NULL OR term = ?) AND expires_at > UTC_TIMESTAMP(3)`,
      [election, leaseId, term ?? null, term ?? null],
    );
  }

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

  private async addStateColumn(): Promise<void> {
    try {
      await this.getPool().query({ sql: mysqlLeaseStateMigrationSql(this.tableName), timeout: this.queryTimeoutMs });
    } catch (error) {
      // Added meanwhile by another instance (or by hand): done.
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

function affectedRows(result: unknown): number {
  return Number((result as unknown as { affectedRows?: number }).affectedRows ?? 0);
}

function quote(name: string): string {
  return `\`${name}\``;
}
