import { randomUUID } from 'node:crypto';
// A static import is fine here: this file is reachable only through the `/postgres` subpath, whose
// users have installed the optional peer `pg`.
import pg, {
  type Client,
  type ClientConfig,
  type Notification,
  type Pool,
  type PoolConfig,
  type QueryResultRow,
} from 'pg';
import { messages } from '../leader-election.messages.js';
import {
  type AcquireRequest,
  type AcquireResult,
  type CallOptions,
  FatalLeaseStoreError,
  type Lease,
  type LeaseInfo,
  LeaseLostError,
  type LeaseStore,
  type LeaseStoreError,
  type LeaseStoreLimits,
  type LeaseWatch,
  type RenewOptions,
  TransientLeaseStoreError,
} from './lease-store.js';
import { settleWithin, throwIfAborted, untilAbortedUndoing } from '../shared/abort.js';

const STORE = 'PostgresLeaseStore';
const DEFAULT_TABLE = 'leader_election_leases';
const DEFAULT_SCHEMA = 'public';
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/** How long close() waits for in-flight clean-ups before ending the pool anyway. */
const CLOSE_GRACE_MS = 5_000;

/**
 * The table the store uses, for a migration when the application's role may not create tables
 * (then pass `createTable: false`). Grant the role SELECT, INSERT, UPDATE on it.
 */
export function postgresLeaseTableSql(table = DEFAULT_TABLE, schema = DEFAULT_SCHEMA): string {
  return `CREATE TABLE IF NOT EXISTS ${qualified(schema, table)} (
  election   text        PRIMARY KEY,
  holder     text        NOT NULL,
  lease_id   uuid        NOT NULL,
  term       bigint      NOT NULL,
  expires_at timestamptz NOT NULL
)`;
}

/** {@link postgresLeaseTableSql} for the default table `public.leader_election_leases`. */
export const POSTGRES_LEASE_TABLE_SQL = postgresLeaseTableSql();

export interface PostgresLeaseStoreOptions {
  /** An existing `pg` Pool or Client. The store never closes it. */
  client?: Pool | Client;
  /**
   * Connection string or pool settings for a pool the store opens (and closes in `close()`).
   * Defaults added unless given: connect timeout 5 s, query/statement timeout 10 s, keep-alive.
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
 * Permissions: SELECT, INSERT, UPDATE on the table, plus CREATE on the schema the first time unless
 * the table was created beforehand ({@link postgresLeaseTableSql}).
 */
export class PostgresLeaseStore implements LeaseStore {
  readonly name = STORE;
  readonly limits: LeaseStoreLimits = {
    minLeaseDurationMs: 1_000,
    maxLeaseDurationMs: 24 * 3_600_000,
    reason: messages.backend.shortLeaseReason('PostgreSQL'),
  };

  private readonly table: string;
  private readonly schemaName: string;
  private readonly tableName: string;
  private readonly channel: string;
  private readonly createTable: boolean;
  private readonly queryTimeoutMs: number;
  private readonly userClient?: Pool | Client;
  private readonly connection?: PoolConfig;
  private pool?: Pool;
  private tableReady?: Promise<void>;
  private listener?: Listener;
  /** Clean-ups of abandoned acquires; close() lets them finish before ending the pool. */
  private readonly pending = new Set<Promise<unknown>>();
  private closing?: Promise<void>;
  private ended = false;

  constructor(options: PostgresLeaseStoreOptions) {
    if (!options?.client === !options?.connection) {
      throw new TypeError(
        messages.backend.clientOrConnection(STORE, 'a pg Pool or Client', 'a pg PoolConfig or connection string'),
      );
    }
    this.schemaName = identifier('schema', options.schema ?? DEFAULT_SCHEMA);
    this.tableName = identifier('table', options.table ?? DEFAULT_TABLE);
    this.table = qualified(this.schemaName, this.tableName);
    this.channel = identifier('channel', options.channel ?? this.tableName);
    this.createTable = options.createTable ?? true;
    this.queryTimeoutMs = options.queryTimeoutMs ?? 10_000;
    this.userClient = options.client;
    if (!options.client) {
      const config =
        typeof options.connection === 'string' ? { connectionString: options.connection } : options.connection;
      this.connection = {
        connectionTimeoutMillis: 5_000,
        statement_timeout: this.queryTimeoutMs,
        keepAlive: true,
        max: 4,
        application_name: 'nestjs-leader-election',
        ...config,
      };
    }
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const leaseId = randomUUID();
    // One statement: take the row if free or expired, else report who holds it. The second SELECT
    // sees the snapshot from before the INSERT, which is exactly "held by someone else".
    const text = `WITH taken AS (
        INSERT INTO ${this.table} AS l (election, holder, lease_id, term, expires_at)
        VALUES ($1, $2, $3, 1, clock_timestamp() + $4::double precision * interval '1 millisecond')
        ON CONFLICT (election) DO UPDATE
          SET holder = excluded.holder, lease_id = excluded.lease_id, term = l.term + 1, expires_at = excluded.expires_at
          WHERE l.expires_at <= clock_timestamp()
        RETURNING term)
      SELECT true AS acquired, term, $2::text AS holder FROM taken
      UNION ALL
      SELECT false, term, holder FROM ${this.table} WHERE election = $1 AND NOT EXISTS (SELECT 1 FROM taken)`;
    const rows = await this.run<{ acquired: boolean; term: string; holder: string }>(
      request.signal,
      text,
      [request.election, request.identity, leaseId, request.leaseDurationMs],
      // Aborted, yet the statement may still commit: hand back whatever it took, by our fresh id.
      () => this.releaseRow(request.election, leaseId, request.leaseDurationMs),
    );
    const row = rows[0];
    if (row?.acquired) {
      return {
        acquired: true,
        lease: { election: request.election, holder: request.identity, leaseId, term: Number(row.term) },
      };
    }
    return row ? { acquired: false, holder: row.holder, term: Number(row.term) } : { acquired: false };
  }

  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const rows = await this.run(
      options.signal,
      `UPDATE ${this.table} SET expires_at = clock_timestamp() + $4::double precision * interval '1 millisecond'
        WHERE election = $1 AND lease_id = $2 AND term = $3 AND expires_at > clock_timestamp()
        RETURNING term`,
      [lease.election, lease.leaseId, lease.term, options.leaseDurationMs],
    );
    if (rows.length === 0) throw new LeaseLostError(messages.leaseLost(lease.election));
  }

  async release(lease: Lease, options: CallOptions): Promise<void> {
    await this.run(options.signal, this.releaseSql, [lease.election, lease.leaseId, lease.term, this.channel]);
  }

  async read(election: string, options: CallOptions): Promise<LeaseInfo> {
    const rows = await this.run<{ holder: string; term: string; held: boolean }>(
      options.signal,
      `SELECT holder, term, expires_at > clock_timestamp() AS held FROM ${this.table} WHERE election = $1`,
      [election],
    );
    const row = rows[0];
    if (!row) return { held: false, term: 0 };
    return row.held
      ? { held: true, holder: row.holder, term: Number(row.term) }
      : { held: false, term: Number(row.term) };
  }

  watch(election: string, onMayBeFree: () => void): LeaseWatch {
    this.listener ??= new Listener(this.channel, () => this.listenerConnection());
    return this.listener.add(election, onMayBeFree);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.listener?.close();
      await settleWithin([...this.pending], CLOSE_GRACE_MS);
      this.ended = true;
      // Only our own pool: a client the user passed in stays theirs.
      await this.pool?.end().catch(() => undefined);
    })();
    return this.closing;
  }

  // ---- internals ------------------------------------------------------------------------------

  /** Conditional on lease id and (when known) term, so it never releases a later holder's row. */
  private get releaseSql(): string {
    return `WITH released AS (
        UPDATE ${this.table} SET expires_at = '-infinity'
        WHERE election = $1 AND lease_id = $2 AND ($3::bigint IS NULL OR term = $3::bigint) AND expires_at > clock_timestamp()
        RETURNING election)
      SELECT pg_notify($4, election) FROM released`;
  }

  /** Release of an acquire we stopped waiting for, by lease id alone; moot once the lease expired. */
  private releaseRow(election: string, leaseId: string, leaseDurationMs: number): Promise<unknown> {
    return this.run(AbortSignal.timeout(leaseDurationMs), this.releaseSql, [election, leaseId, null, this.channel]);
  }

  /**
   * Run one statement bounded by `signal`. pg cannot cancel a query from the client, so the call
   * settles on abort and the statement finishes in the background; `onAbandoned` then runs once it
   * has, whatever its outcome. A missing table is created once and the statement retried.
   */
  private async run<R extends QueryResultRow = QueryResultRow>(
    signal: AbortSignal,
    text: string,
    values: unknown[],
    onAbandoned?: () => Promise<unknown>,
  ): Promise<R[]> {
    throwIfAborted(signal);
    const query = { text, values, query_timeout: this.queryTimeoutMs };
    const work = (async () => {
      const db = await this.queryable();
      try {
        return (await db.query<R>(query)).rows;
      } catch (error) {
        if (!this.createTable || code(error) !== '42P01') throw error;
        await this.ensureTable(db);
        throwIfAborted(signal);
        return (await db.query<R>(query)).rows;
      }
    })();
    try {
      // Only an abandoned acquire needs undoing; other calls are simply left to finish.
      return await untilAbortedUndoing(signal, work, this.pending, onAbandoned);
    } catch (error) {
      throw this.classify(error);
    }
  }

  private ensureTable(db: Queryable): Promise<void> {
    this.tableReady ??= db
      .query({ text: postgresLeaseTableSql(this.tableName, this.schemaName), query_timeout: this.queryTimeoutMs })
      .then(
        () => undefined,
        (error: unknown) => {
          // Two instances creating the table at once: the loser sees a duplicate, which is success.
          if (code(error) === '23505' || code(error) === '42P07') return;
          this.tableReady = undefined;
          throw error;
        },
      );
    return this.tableReady;
  }

  private async queryable(): Promise<Queryable> {
    if (this.ended) throw new TransientLeaseStoreError(messages.backend.closed(STORE));
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

  private classify(error: unknown): LeaseStoreError {
    if (error instanceof TransientLeaseStoreError || error instanceof FatalLeaseStoreError) return error;
    const sqlState = code(error);
    switch (sqlState) {
      case '28P01':
      case '28000':
        return new FatalLeaseStoreError(messages.postgres.authFailed(sqlState), { cause: error });
      case '42501':
        return new FatalLeaseStoreError(messages.postgres.permissionDenied(this.table, this.createTable), {
          cause: error,
        });
      case '3D000':
        return new FatalLeaseStoreError(messages.postgres.databaseMissing, { cause: error });
      case '3F000':
        return new FatalLeaseStoreError(messages.postgres.schemaMissing(this.schemaName), { cause: error });
      case '42P01':
        return new FatalLeaseStoreError(messages.postgres.tableMissing(this.table), { cause: error });
      case '42703':
      case '42804':
      case '42P10':
        return new FatalLeaseStoreError(messages.postgres.incompatibleTable(this.table, sqlState), { cause: error });
    }
    if (error instanceof Error && /^SASL|password must be a string/.test(error.message)) {
      return new FatalLeaseStoreError(messages.postgres.authFailed('SASL'), { cause: error });
    }
    if (sqlState && /^[0-9A-Z]{5}$/.test(sqlState)) {
      return new TransientLeaseStoreError(messages.backend.failed(STORE, `SQLSTATE ${sqlState}`), { cause: error });
    }
    return new TransientLeaseStoreError(messages.backend.unreachable(STORE, networkCode(error)), { cause: error });
  }
}

// ---- LISTEN connection --------------------------------------------------------------------------

interface ListenConnection {
  client: Client;
  /** False for the user's own Client: we only add and remove our LISTEN on it. */
  owned: boolean;
}

/**
 * One LISTEN connection per store, shared by every watched election. It reconnects on its own
 * with a capped backoff; after a reconnect every watcher is woken once, since a release may have
 * been missed while it was down.
 */
class Listener {
  private readonly watchers = new Map<string, Set<() => void>>();
  private connection?: ListenConnection;
  private connecting?: Promise<void>;
  private retryTimer?: NodeJS.Timeout;
  private failures = 0;
  private connectedBefore = false;
  private closing = false;

  constructor(
    private readonly channel: string,
    private readonly open: () => Promise<ListenConnection>,
  ) {}

  add(election: string, onMayBeFree: () => void): LeaseWatch {
    const set = this.watchers.get(election) ?? new Set();
    this.watchers.set(election, set);
    set.add(onMayBeFree);
    this.start();
    return {
      close: async () => {
        set.delete(onMayBeFree);
        if (set.size === 0) this.watchers.delete(election);
      },
    };
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.retryTimer);
    await this.connecting?.catch(() => undefined);
    await this.disconnect();
  }

  private start(): void {
    if (this.connection || this.connecting || this.retryTimer || this.closing) return;
    this.connecting = this.connect()
      .then(() => {
        this.failures = 0;
        if (this.connectedBefore) this.wakeAll();
        this.connectedBefore = true;
      })
      .catch(() => this.retry())
      .finally(() => {
        this.connecting = undefined;
      });
  }

  private async connect(): Promise<void> {
    const connection = await this.open();
    const { client, owned } = connection;
    // Set first, so that a failure anywhere below is cleaned up by disconnect().
    this.connection = connection;
    client.on('notification', this.onNotification);
    if (owned) client.on('error', this.onBroken).on('end', this.onBroken);
    try {
      if (owned) await client.connect();
      await client.query(`LISTEN ${quote(this.channel)}`);
    } catch (error) {
      await this.disconnect();
      throw error;
    }
    if (this.closing) await this.disconnect();
  }

  private async disconnect(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    if (!connection) return;
    const { client, owned } = connection;
    client.off('notification', this.onNotification);
    client.off('error', this.onBroken);
    client.off('end', this.onBroken);
    if (owned) {
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    } else {
      await client.query(`UNLISTEN ${quote(this.channel)}`).catch(() => undefined);
    }
  }

  private readonly onNotification = (message: Notification): void => {
    if (message.channel !== this.channel) return;
    for (const listener of this.watchers.get(message.payload ?? '') ?? []) listener();
  };

  private readonly onBroken = (): void => {
    // While connecting, connect() itself fails and schedules the retry.
    if (this.closing || !this.connection || this.connecting) return;
    void this.disconnect().then(() => this.retry());
  };

  private retry(): void {
    if (this.closing || this.retryTimer) return;
    this.failures += 1;
    const delay = Math.min(500 * 2 ** (this.failures - 1), 10_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.start();
    }, delay);
    this.retryTimer.unref();
  }

  private wakeAll(): void {
    for (const set of this.watchers.values()) for (const listener of set) listener();
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

function quote(name: string): string {
  return `"${name}"`;
}

function qualified(schema: string, table: string): string {
  return `${quote(schema)}.${quote(table)}`;
}

function code(error: unknown): string | undefined {
  const value = (error as { code?: unknown } | undefined)?.code;
  return typeof value === 'string' ? value : undefined;
}

/** A code or class name that says what went wrong without echoing the driver's message. */
function networkCode(error: unknown): string {
  const value = code(error);
  if (value) return value;
  if (error instanceof Error) {
    if (/timeout/i.test(error.message)) return 'timeout';
    if (/terminated|closed|ended/i.test(error.message)) return 'connection closed';
    return error.name;
  }
  return 'unknown error';
}
