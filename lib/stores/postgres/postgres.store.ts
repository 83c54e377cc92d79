// A static import is fine here: this file is reachable only through the `/postgres` subpath, whose
// users have installed the optional peer `pg`.
import pg, { type Client, type ClientConfig, type Pool, type PoolConfig, type QueryResultRow } from 'pg';
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
  type LeaseWatch,
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
import { classifyPostgresError } from './postgres-errors.js';
import {
  DEFAULT_SCHEMA,
  DEFAULT_TABLE,
  type PostgresStatements,
  postgresLeaseStateMigrationSql,
  postgresLeaseTableSql,
  postgresStatements,
  qualified,
} from './postgres-sql.js';

export { POSTGRES_LEASE_TABLE_SQL, postgresLeaseStateMigrationSql, postgresLeaseTableSql } from './postgres-sql.js';

import { type ListenConnection, PostgresListener } from './postgres-listener.js';

const STORE = 'PostgresLeaseStore';
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const URL_PROTOCOLS = ['postgres:', 'postgresql:', 'socket:'];
/** JSON's escape of U+0000 (not preceded by an escaping backslash), which jsonb refuses. */
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;

export interface PostgresLeaseStoreOptions {
  /** An existing `pg` Pool or Client. The store never closes it. */
  client?: Pool | Client;
  /**
   * Connection string or pool settings for a pool the store opens (and closes in `close()`).
   * Defaults added unless given: connect timeout 5 s, query/statement timeout 10 s, keep-alive,
   * `allowExitOnIdle` (idle connections do not keep the process alive once the elector stopped).
   */
  connection?: string | PoolConfig;
  /** Table with one row per election. Default `leader_election_leases`. */
  table?: string;
  /** Schema of the table. Default `public`. */
  schema?: string;
  /** LISTEN/NOTIFY channel for release notifications. Default: the table name. */
  channel?: string;
  /** Create the table on first use when it is missing (default true). */
  createTable?: boolean;
  /** Client-side bound of one statement, also on a pool or client you pass in. Default 10000. */
  queryTimeoutMs?: number;
}

/** The part of a Pool or Client the store uses: both answer `query` the same way. */
interface Queryable {
  query<R extends QueryResultRow>(config: {
    text: string;
    values?: unknown[];
    query_timeout?: number;
  }): Promise<{ rows: R[]; rowCount: number | null }>;
}

/**
 * Leases as rows of a PostgreSQL table: `INSERT … ON CONFLICT DO UPDATE … WHERE expires_at <= now`
 * takes over an expired row atomically, with the server's clock (`clock_timestamp()`) as the only
 * time source. The term is a per-row counter bumped on every takeover. Release sends
 * `pg_notify(channel, election)`; {@link watch} LISTENs on a connection of its own so followers
 * contend at once.
 *
 * Leader state lives in the row's `state` jsonb column, `{ [key]: { value, term } }`, written by one
 * `UPDATE … WHERE lease_id = … AND term = … AND expires_at > clock_timestamp()`.
 *
 * Permissions: SELECT, INSERT, UPDATE on the table, plus CREATE on the schema the first time unless
 * the table was created beforehand ({@link postgresLeaseTableSql}); on a table of a version before
 * leader state, ownership of the table once to add the column ({@link postgresLeaseStateMigrationSql}).
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
  private readonly queryTimeoutMs: number;
  private readonly userClient?: Pool | Client;
  private readonly connection?: PoolConfig;
  private pool?: Pool;
  private tableReady?: Promise<void>;
  private listener?: PostgresListener;
  private readonly stateColumn = {
    missing: (error: unknown) => errorCode(error) === '42703',
    migrate: onceUntilDone(() => this.addStateColumn()),
    createTable: true,
    missingError: () =>
      new FatalLeaseStoreError(messages.state.columnMissing(STORE, this.table, 'postgresLeaseStateMigrationSql()')),
  };
  private readonly calls = new StoreCalls({
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
    this.stateColumn.createTable = this.createTable;
    this.queryTimeoutMs = options.queryTimeoutMs ?? 10_000;
    this.userClient = options.client;
    if (!options.client) {
      const config =
        typeof options.connection === 'string' ? { connectionString: options.connection } : options.connection;
      if (config?.connectionString !== undefined) {
        const option = typeof options.connection === 'string' ? 'connection' : 'connection.connectionString';
        checkConnectionUrl(
          STORE,
          option,
          config.connectionString,
          URL_PROTOCOLS,
          'postgres://user:password@host:5432/database',
        );
      }
      this.connection = {
        connectionTimeoutMillis: 5_000,
        statement_timeout: this.queryTimeoutMs,
        keepAlive: true,
        max: 4,
        allowExitOnIdle: true,
        application_name: 'nestjs-leader-election',
        ...config,
      };
    }
  }

  acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, leaseDurationMs } = request;
    return this.calls.acquire(request, {
      attempt: async (leaseId, step) => {
        for (let round = 1; ; round++) {
          const [row] = await this.query<{
            acquired: boolean;
            term: string;
            holder: string;
            expires_in_ms: number | string | null;
          }>(step, this.sql.acquire, [election, identity, leaseId, leaseDurationMs]);
          if (row?.acquired) {
            return { acquired: true, lease: { election, holder: identity, leaseId, term: Number(row.term) } };
          }
          if (row) {
            // The holder's expiry by the server's clock, as a delay: the follower's next try (a hint).
            const expiresInMs = Number(row.expires_in_ms);
            const hint = Number.isFinite(expiresInMs) ? { expiresInMs } : {};
            return { acquired: false, holder: row.holder, term: Number(row.term), ...hint };
          }
          // Not taken, and the statement's snapshot predates whoever beat us: ask afresh who holds it.
          step();
          const info = await this.readRow(step, election);
          // Freed again meanwhile (that holder already released): it is free now, so try once more
          // rather than answer "held by nobody".
          if (info.held || round === 2) return { acquired: false, holder: info.holder, term: info.term };
          step();
        }
      },
      releaseAttempt: (leaseId, signal) =>
        this.calls.run(signal, (step) => this.query(step, this.sql.release, [election, leaseId, null, this.channel])),
    });
  }

  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const rows = await this.run(options.signal, this.sql.renew, [
      lease.election,
      lease.leaseId,
      lease.term,
      options.leaseDurationMs,
    ]);
    if (rows.length === 0) throw new LeaseLostError(messages.leaseLost(lease.election));
  }

  async release(lease: Lease, options: CallOptions): Promise<void> {
    await this.run(options.signal, this.sql.release, [lease.election, lease.leaseId, lease.term, this.channel]);
  }

  read(election: string, options: CallOptions): Promise<LeaseInfo> {
    return this.calls.run(options.signal, (step) => this.readRow(step, election));
  }

  async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const { key, entry } = prepareStateWrite(this, lease, value, options);
    // jsonb cannot hold U+0000 (SQLSTATE 22P05); refused up front rather than retried forever.
    if (NUL_ESCAPE.test(entry)) throw new TypeError(messages.state.notSerialisable(STORE, 'U+0000 in jsonb'));
    const values = [lease.election, lease.leaseId, lease.term, key, entry];
    const rows = await this.calls.run(options.signal, (step) =>
      withStateColumn(step, this.stateColumn, () => this.query(step, this.sql.writeState, values)),
    );
    if (rows.length === 0) throw stateLostError(lease);
  }

  async readState(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    const key = stateKey(options);
    const [row] = await this.calls.run(options.signal, (step) =>
      withStateColumn(step, this.stateColumn, () =>
        this.query<{ entry: unknown }>(step, this.sql.readState, [election, key]),
      ),
    );
    return row?.entry == null ? undefined : decodeStateEntry(STORE, election, key, row.entry);
  }

  watch(election: string, onMayBeFree: () => void): LeaseWatch {
    this.listener ??= new PostgresListener(this.channel, () => this.listenerConnection());
    return this.listener.add(election, onMayBeFree);
  }

  close(): Promise<void> {
    return this.calls.close({
      stopWatching: async () => this.listener?.close(),
      // Only our own pool: a client the user passed in stays theirs.
      disconnect: () => this.pool?.end(),
    });
  }

  // ---- internals ------------------------------------------------------------------------------

  private async readRow(step: Step, election: string): Promise<LeaseInfo> {
    const [row] = await this.query<{ holder: string; term: string; held: boolean }>(step, this.sql.read, [election]);
    if (!row) return { held: false, term: 0 };
    return row.held
      ? { held: true, holder: row.holder, term: Number(row.term) }
      : { held: false, term: Number(row.term) };
  }

  /** One statement under `signal`; see {@link query}. */
  private run<R extends QueryResultRow = QueryResultRow>(signal: AbortSignal, text: string, values: unknown[]) {
    return this.calls.run(signal, (step) => this.query<R>(step, text, values));
  }

  /**
   * One statement. pg cannot cancel a query from the client, so an abandoned statement finishes
   * in the background. A missing table is created once and the statement retried.
   */
  private async query<R extends QueryResultRow = QueryResultRow>(
    step: Step,
    text: string,
    values: unknown[],
  ): Promise<R[]> {
    const query = { text, values, query_timeout: this.queryTimeoutMs };
    const db = this.queryable();
    try {
      return (await db.query<R>(query)).rows;
    } catch (error) {
      if (!this.createTable || errorCode(error) !== '42P01') throw error;
      await this.ensureTable(db);
      step();
      return (await db.query<R>(query)).rows;
    }
  }

  private ensureTable(db: Queryable): Promise<void> {
    this.tableReady ??= db
      .query({ text: postgresLeaseTableSql(this.tableName, this.schemaName), query_timeout: this.queryTimeoutMs })
      .then(
        () => undefined,
        (error: unknown) => {
          // Two instances creating the table at once: the loser sees a duplicate (of the table, its
          // row type or a catalog row, depending on where the race is lost), which is success.
          if (['23505', '42P07', '42710'].includes(errorCode(error) ?? '')) return;
          this.tableReady = undefined;
          throw error;
        },
      );
    return this.tableReady;
  }

  private async addStateColumn(): Promise<void> {
    const text = postgresLeaseStateMigrationSql(this.tableName, this.schemaName);
    try {
      await this.queryable().query({ text, query_timeout: this.queryTimeoutMs });
    } catch (error) {
      // Two instances adding it at once: the loser's catalog insert collides, which is success.
      if (errorCode(error) !== '42701' && errorCode(error) !== '23505') throw error;
    }
  }

  private queryable(): Queryable {
    this.calls.assertOpen();
    if (this.userClient) return this.userClient as unknown as Queryable;
    if (!this.pool) {
      this.pool = new pg.Pool(this.connection);
      // An idle client that loses its connection emits 'error' on the pool; unhandled, it would
      // crash the process. The next query simply gets a fresh connection.
      this.pool.on('error', () => undefined);
    }
    return this.pool as unknown as Queryable;
  }

  /** A connection for LISTEN: ours when we can open one, else the user's single Client. */
  private async listenerConnection(): Promise<ListenConnection> {
    const user = this.userClient;
    if (user && !isPool(user)) return { client: user, owned: false };
    const config: ClientConfig = user ? (user as Pool).options : (this.connection as PoolConfig);
    const ClientClass = ((config as PoolConfig).Client ?? pg.Client) as typeof Client;
    return { client: new ClientClass(config), owned: true };
  }
}

// ---- helpers ------------------------------------------------------------------------------------

function isPool(client: Pool | Client): client is Pool {
  return typeof (client as Pool).idleCount === 'number';
}

function identifier(option: string, value: string): string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
    throw new TypeError(messages.backend.invalidIdentifier(STORE, option, value, 63));
  }
  return value;
}
