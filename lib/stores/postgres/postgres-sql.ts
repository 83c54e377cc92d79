// The SQL of PostgresLeaseStore, in one place. The server's clock (`clock_timestamp()`) is the only
// time source: expiry is never judged by a client's clock.

export const DEFAULT_TABLE = 'leader_election_leases';
export const DEFAULT_SCHEMA = 'public';

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
  expires_at timestamptz NOT NULL,
  state      jsonb       NOT NULL DEFAULT '{}'::jsonb
)`;
}

/**
 * Adds the leader-state column to a table made by a version before it (in place, idempotent;
 * PostgreSQL 11+ adds a column with a constant default without rewriting the table). The store runs
 * it on first state use when createTable is on; with `createTable: false`, run it in a migration.
 * Rows keep their leases; replicas of the previous version go on working beside it, since their
 * statements never name the column (a row they insert gets the default).
 */
export function postgresLeaseStateMigrationSql(table = DEFAULT_TABLE, schema = DEFAULT_SCHEMA): string {
  return `ALTER TABLE ${qualified(schema, table)} ADD COLUMN IF NOT EXISTS state jsonb NOT NULL DEFAULT '{}'::jsonb`;
}

/** {@link postgresLeaseTableSql} for the default table `public.leader_election_leases`. */
export const POSTGRES_LEASE_TABLE_SQL = postgresLeaseTableSql();

export interface PostgresStatements {
  /** $1 election, $2 holder, $3 lease id, $4 duration ms → (acquired, term, holder) or nothing. */
  acquire: string;
  /** $1 election, $2 lease id, $3 term, $4 duration ms → the term when renewed. */
  renew: string;
  /** $1 election, $2 lease id, $3 term (NULL: any), $4 channel → notifies when released. */
  release: string;
  /** $1 election → (holder, term, held). */
  read: string;
  /** $1 election, $2 lease id, $3 term, $4 key, $5 entry JSON → the term when written. */
  writeState: string;
  /** $1 election, $2 key → (entry) or nothing. */
  readState: string;
}

export function postgresStatements(table: string): PostgresStatements {
  return {
    // Take the row if free or expired, else report who holds it — when the statement's snapshot
    // shows it held. After waiting for a concurrent acquire, the snapshot is older than the row
    // that beat us (missing, or the released row before it): then it answers nothing, and the
    // caller asks afresh.
    acquire: `WITH taken AS (
        INSERT INTO ${table} AS l (election, holder, lease_id, term, expires_at)
        VALUES ($1, $2, $3, 1, clock_timestamp() + $4::double precision * interval '1 millisecond')
        ON CONFLICT (election) DO UPDATE
          SET holder = excluded.holder, lease_id = excluded.lease_id, term = l.term + 1, expires_at = excluded.expires_at
          WHERE l.expires_at <= clock_timestamp()
        RETURNING term)
      SELECT true AS acquired, term, $2::text AS holder, NULL::double precision AS expires_in_ms FROM taken
      UNION ALL
      SELECT false, term, holder, EXTRACT(EPOCH FROM expires_at - clock_timestamp()) * 1000 FROM ${table}
        WHERE election = $1 AND expires_at > clock_timestamp() AND NOT EXISTS (SELECT 1 FROM taken)`,
    renew: `UPDATE ${table} SET expires_at = clock_timestamp() + $4::double precision * interval '1 millisecond'
        WHERE election = $1 AND lease_id = $2 AND term = $3 AND expires_at > clock_timestamp()
        RETURNING term`,
    // Conditional on lease id and (when known) term, so it never releases a later holder's row.
    release: `WITH released AS (
        UPDATE ${table} SET expires_at = '-infinity'
        WHERE election = $1 AND lease_id = $2 AND ($3::bigint IS NULL OR term = $3::bigint) AND expires_at > clock_timestamp()
        RETURNING election)
      SELECT pg_notify($4, election) FROM released`,
    read: `SELECT holder, term, expires_at > clock_timestamp() AS held FROM ${table} WHERE election = $1`,
    // One statement: the row lock orders it against a concurrent takeover, and the condition is
    // the renew's (our lease id and term, unexpired by the server's clock).
    writeState: `UPDATE ${table} SET state = jsonb_set(coalesce(state, '{}'::jsonb), ARRAY[$4::text], $5::jsonb, true)
        WHERE election = $1 AND lease_id = $2 AND term = $3 AND expires_at > clock_timestamp()
        RETURNING term`,
    readState: `SELECT state -> $2::text AS entry FROM ${table} WHERE election = $1`,
  };
}

export function qualified(schema: string, table: string): string {
  return `"${schema}"."${table}"`;
}
