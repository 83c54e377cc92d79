// A static import is fine here: this file is reachable only through the `/mysql` subpath, whose
// users have installed the optional peer `mysql2`.
import mysql, { type Pool, type PoolOptions } from 'mysql2/promise';
import { checkConnectionUrl, errorCode } from '../store-support.js';
import { mysqlLeaseTableSql } from './mysql-sql.js';

const URL_PROTOCOLS = ['mysql:', 'mariadb:'];

/** Options of `new MySqlLeaseStore(...)`: the connection and the lease table. */
export interface MySqlLeaseStoreOptions {
  /** An existing mysql2 pool from `mysql2/promise`. The store never closes it. */
  client?: Pool;
  /**
   * Connection URL or pool settings for a pool the store opens (and closes in `close()`).
   * Defaults added unless given: connect timeout 5 s, 4 connections, TCP keep-alive, and
   * `multipleStatements` (a folded renewal sends its UPDATE and SELECT in one round trip; the store
   * only ever sends its own statements, values bound as parameters).
   */
  connection?: string | PoolOptions;
  /** Table with one row per election, in the connection's database. Default `leader_election_leases`. */
  table?: string;
  /** Create the table on first use when it is missing (default true). */
  createTable?: boolean;
  /** Client-side bound of one statement (mysql2 then drops the connection). Default 10000. */
  queryTimeoutMs?: number;
}

/** The pool settings: ours by default, the user's on top; the URL checked before anything connects. */
export function poolOptions(connection: string | PoolOptions): PoolOptions {
  const config = typeof connection === 'string' ? { uri: connection } : connection;
  if (config?.uri !== undefined) {
    const option = typeof connection === 'string' ? 'connection' : 'connection.uri';
    checkConnectionUrl(
      'MySqlLeaseStore',
      option,
      config.uri,
      URL_PROTOCOLS,
      'mysql://user:password@host:3306/database',
    );
  }
  return { connectTimeout: 5_000, connectionLimit: 4, enableKeepAlive: true, multipleStatements: true, ...config };
}

/**
 * The store's way to its server: the user's pool, or one of its own (opened on first use, ended by
 * {@link end}); the missing table created once on the way; the in-place migrations.
 */
export class MySqlClient {
  private pool?: Pool;
  private tableReady?: Promise<void>;

  constructor(
    private readonly options: {
      userPool?: Pool;
      connection?: PoolOptions;
      queryTimeoutMs: number;
      createTable: boolean;
      tableName: string;
      /** Throws once the store is closed: nothing reopens a pool then. */
      assertOpen(): void;
    },
  ) {}

  /**
   * One statement; a missing table is created once and the statement retried. mysql2 cannot
   * cancel a statement: an abandoned one finishes in the background, and the callers' `step()`
   * refuses to send another after the abort.
   */
  async query<R = unknown>(sql: string, values: unknown[]): Promise<R[]> {
    const pool = this.getPool();
    const options = { sql, values, timeout: this.options.queryTimeoutMs, rowsAsArray: false };
    try {
      return (await pool.query(options))[0] as R[];
    } catch (error) {
      if (!this.options.createTable || errorCode(error) !== 'ER_NO_SUCH_TABLE') throw error;
      await this.ensureTable(pool);
      return (await pool.query(options))[0] as R[];
    }
  }

  /**
   * Whether one `query` may carry several statements: on our own pool by default; on a pool the user
   * passed in only when its owner enabled it (the store never changes a user's pool).
   */
  multipleStatements(): boolean {
    const pool = this.getPool() as { pool?: { config?: { connectionConfig?: { multipleStatements?: boolean } } } };
    return pool.pool?.config?.connectionConfig?.multipleStatements === true;
  }

  /** One ALTER adding columns; "Duplicate column name" (added meanwhile by another instance or by hand) is done. */
  async addColumns(sql: string): Promise<void> {
    try {
      await this.getPool().query({ sql, timeout: this.options.queryTimeoutMs });
    } catch (error) {
      if (errorCode(error) !== 'ER_DUP_FIELDNAME') throw error;
    }
  }

  /** Ends our own pool only: a pool the user passed in stays theirs. */
  end(): Promise<void> | undefined {
    return this.pool?.end();
  }

  private ensureTable(pool: Pool): Promise<void> {
    const { tableName, queryTimeoutMs } = this.options;
    this.tableReady ??= pool.query({ sql: mysqlLeaseTableSql(tableName), timeout: queryTimeoutMs }).then(
      () => undefined,
      (error: unknown) => {
        this.tableReady = undefined;
        throw error;
      },
    );
    return this.tableReady;
  }

  private getPool(): Pool {
    this.options.assertOpen();
    if (this.options.userPool) return this.options.userPool;
    this.pool ??= mysql.createPool(this.options.connection as PoolOptions);
    return this.pool;
  }
}

/** The affected-row count of a write's result (its meaning depends on the client's FOUND_ROWS flag). */
export function affectedRows(result: unknown): number {
  return Number((result as { affectedRows?: number }).affectedRows ?? 0);
}
