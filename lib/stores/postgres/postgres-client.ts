// A static import is fine here: this file is reachable only through the `/postgres` subpath, whose
// users have installed the optional peer `pg`.
import pg, { type Client, type ClientConfig, type Pool, type PoolConfig, type QueryResultRow } from 'pg';
import { checkConnectionUrl, errorCode, type Step } from '../store-support.js';
import { failedBeforeSending, HostChoice, hostAttempts, hostChoiceOf, parseHostList } from './postgres-hosts.js';
import type { ListenConnection } from './postgres-listener.js';
import { postgresLeaseTableSql } from './postgres-sql.js';

/** Options of `new PostgresLeaseStore(...)`: the connection and the lease table. */
export interface PostgresLeaseStoreOptions {
  /** An existing `pg` Pool or Client. The store never closes it. */
  client?: Pool | Client;
  /**
   * Connection string or pool settings for a pool the store opens (and closes in `close()`). Like
   * libpq, a connection string may list several hosts (`postgres://u@db1:5432,db2:5432/app`) with
   * `target_session_attrs=read-write` (or `primary`, `any`: the default): each new connection goes
   * to the first host, in order, that answers in that role, and the LISTEN connection follows it
   * after a failover.
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

const URL_PROTOCOLS = ['postgres:', 'postgresql:', 'socket:'];

/** The pool settings: ours by default, the user's on top; the URL checked before anything connects. */
export function poolConfig(connection: string | PoolConfig, queryTimeoutMs: number): PoolConfig {
  const config = typeof connection === 'string' ? { connectionString: connection } : connection;
  let hosts: HostChoice | undefined;
  if (config?.connectionString !== undefined) {
    const option = typeof connection === 'string' ? 'connection' : 'connection.connectionString';
    const check = (url: string) =>
      checkConnectionUrl(
        'PostgresLeaseStore',
        option,
        url,
        URL_PROTOCOLS,
        'postgres://user:password@host:5432/database (several hosts: host1:5432,host2:5432)',
      );
    const list =
      typeof config.connectionString === 'string' ? parseHostList(config.connectionString, option) : undefined;
    if (list) {
      for (const url of list.urls) check(url);
      hosts = new HostChoice(list, config.Client as typeof Client | undefined);
    } else {
      check(config.connectionString);
    }
  }
  const settings: PoolConfig = {
    connectionTimeoutMillis: 5_000,
    statement_timeout: queryTimeoutMs,
    keepAlive: true,
    max: 4,
    allowExitOnIdle: true,
    application_name: 'leaderlease',
    ...config,
  };
  return hosts ? hosts.poolConfig(settings) : settings;
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
 * The store's way to its server: the user's Pool or Client, or a pool of its own (opened on first
 * use, ended by {@link end}); the missing table created once on the way; the in-place migrations;
 * and a connection for LISTEN.
 */
export class PostgresClient {
  private pool?: Pool;
  private tableReady?: Promise<void>;

  constructor(
    private readonly options: {
      userClient?: Pool | Client;
      connection?: PoolConfig;
      queryTimeoutMs: number;
      createTable: boolean;
      tableName: string;
      schemaName: string;
      /** Throws once the store is closed: nothing reopens a pool then. */
      assertOpen(): void;
    },
  ) {}

  /**
   * One statement. pg cannot cancel a query from the client, so an abandoned statement finishes
   * in the background. A missing table is created once and the statement retried.
   */
  async query<R extends QueryResultRow = QueryResultRow>(step: Step, text: string, values: unknown[]): Promise<R[]> {
    const query = { text, values, query_timeout: this.options.queryTimeoutMs };
    const db = this.queryable();
    try {
      return (await this.onSomeHost(step, () => db.query<R>(query))).rows;
    } catch (error) {
      if (!this.options.createTable || errorCode(error) !== '42P01') throw error;
      await this.ensureTable(db);
      step();
      return (await db.query<R>(query)).rows;
    }
  }

  /**
   * `send`, tried on the next host at once when a host of the list could not be used (unreachable,
   * or not in the role asked for): the statement never left, so trying again is safe.
   */
  private async onSomeHost<T>(step: Step, send: () => Promise<T>): Promise<T> {
    const attempts = hostAttempts(this.options.connection);
    for (let attempt = 1; ; attempt++) {
      try {
        return await send();
      } catch (error) {
        if (attempt >= attempts || !failedBeforeSending(error)) throw error;
        step();
      }
    }
  }

  /** Runs an `ADD COLUMN IF NOT EXISTS` migration; another instance running it at once is success. */
  async addColumns(text: string): Promise<void> {
    try {
      await this.queryable().query({ text, query_timeout: this.options.queryTimeoutMs });
    } catch (error) {
      // Two instances adding them at once: the loser's catalog insert collides, which is success.
      if (errorCode(error) !== '42701' && errorCode(error) !== '23505') throw error;
    }
  }

  /** A connection for LISTEN: ours when we can open one, else the user's single Client. */
  async listenerConnection(): Promise<ListenConnection> {
    const user = this.options.userClient;
    if (user && !isPool(user)) return { client: user, owned: false };
    const config: ClientConfig = user ? (user as Pool).options : (this.options.connection as PoolConfig);
    // A host list: the redial goes to whichever host accepts writes now.
    await hostChoiceOf(config as PoolConfig)?.find();
    const ClientClass = ((config as PoolConfig).Client ?? pg.Client) as typeof Client;
    return { client: new ClientClass(config), owned: true };
  }

  /** Ends our own pool only: a client the user passed in stays theirs. */
  end(): Promise<void> | undefined {
    return this.pool?.end();
  }

  private ensureTable(db: Queryable): Promise<void> {
    const { tableName, schemaName, queryTimeoutMs } = this.options;
    this.tableReady ??= db
      .query({ text: postgresLeaseTableSql(tableName, schemaName), query_timeout: queryTimeoutMs })
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

  private queryable(): Queryable {
    this.options.assertOpen();
    if (this.options.userClient) return this.options.userClient as unknown as Queryable;
    if (!this.pool) {
      this.pool = new pg.Pool(this.options.connection);
      // An idle client that loses its connection emits 'error' on the pool; unhandled, it would
      // crash the process. The next query simply gets a fresh connection.
      this.pool.on('error', () => undefined);
    }
    return this.pool as unknown as Queryable;
  }
}

function isPool(client: Pool | Client): client is Pool {
  return typeof (client as Pool).idleCount === 'number';
}
