// The SQL of PostgresLeaseStore, in one place. The server's clock (`clock_timestamp()`) is the only
// time source: expiry is never judged by a client's clock.
import { REPLICA_REASONS, SPREAD_REASON } from '../lease-store.spread-rule.js';

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
  state      jsonb       NOT NULL DEFAULT '{}'::jsonb,
${HANDOVER_COLUMNS.map(([name, type]) => `  ${name.padEnd(14)} ${type}`).join(',\n')},
  ${RECORDS_COLUMN[0].padEnd(14)} ${RECORDS_COLUMN[1]}
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

/**
 * The shared-records column, `{ [key]: { value, version } }`: not null with a constant default, like
 * `state`, so a row the previous version inserts (never naming it) has no records.
 */
const RECORDS_COLUMN = ['records', `jsonb NOT NULL DEFAULT '{}'::jsonb`] as const;

/**
 * Adds the shared-records column to a table made by a version before it (in place, idempotent; a
 * catalog change without a table rewrite, PostgreSQL 11+). The store runs it on first record call
 * when createTable is on; with `createTable: false`, run it in a migration (until then record calls
 * fail naming this function; leases and everything else work as before). Replicas of the previous
 * version go on working beside it: they never name the column, and their acquire, renew and release
 * leave it as it is.
 */
export function postgresRecordsMigrationSql(table = DEFAULT_TABLE, schema = DEFAULT_SCHEMA): string {
  return `ALTER TABLE ${qualified(schema, table)} ADD COLUMN IF NOT EXISTS ${RECORDS_COLUMN.join(' ')}`;
}

/**
 * The handover columns, all nullable without a default, so the previous version's statements (which
 * never name them) go on working: `meta` (the holder's LeaseMeta), `meta_lease_id` (the lease whose
 * holder wrote meta and the reservation: both count only while it is the row's `lease_id`, since a
 * replica of the previous version takes the row without clearing them), `reserved_for` and
 * `reserved_until` (a directed handover's reservation of the released row, server time), and
 * `handover` (the pending HandoverRequest).
 */
const HANDOVER_COLUMNS = [
  ['meta', 'jsonb'],
  ['meta_lease_id', 'uuid'],
  ['reserved_for', 'text'],
  ['reserved_until', 'timestamptz'],
  ['handover', 'jsonb'],
] as const;

/**
 * Adds the handover columns to a table made by a version before them, in place (idempotent; nullable
 * columns without a default are a catalog change, no table rewrite). The store runs it on first use
 * when createTable is on; with `createTable: false`, run it in a migration (until then leases work as
 * in the previous version and the handover request calls fail naming this function). Replicas of the
 * previous version go on working beside it: they never name the columns.
 */
export function postgresHandoverMigrationSql(table = DEFAULT_TABLE, schema = DEFAULT_SCHEMA): string {
  const columns = HANDOVER_COLUMNS.map(([name, type]) => `ADD COLUMN IF NOT EXISTS ${name} ${type}`);
  return `ALTER TABLE ${qualified(schema, table)} ${columns.join(', ')}`;
}

export interface PostgresStatements {
  /**
   * $1 election, $2 holder, $3 lease id, $4 duration ms, $5 meta JSON (or NULL) → (acquired, term,
   * held, holder, expires_in_ms, meta, reserved_for) or nothing. Refuses others while a reservation lasts.
   */
  acquire: string;
  /** $1 election, $2 lease id, $3 term, $4 duration ms → the term when renewed. */
  renew: string;
  /** {@link renew}, replacing the meta: $5 meta JSON. */
  renewMeta: string;
  /**
   * The folded renewal (renewWith): {@link renew}'s $1-$4, then for each part present, in this
   * order: the meta JSON (as {@link renewMeta}), the state entries as one JSON object
   * `{ [key]: entry }` (each merged as {@link writeState} writes it), the record keys (text[]) →
   * (term[, handover][, records: `{ [key]: entry }` of the asked keys present, or NULL]).
   */
  renewWith(parts: FoldedRenewalParts): string;
  /** $1 election, $2 lease id, $3 term (NULL: any), $4 channel → notifies when released. */
  release: string;
  /** {@link release} reserving the freed row: $5 identity, $6 reservation ms. */
  releaseReserved: string;
  /** $1 election → (term, held, holder, meta, reserved_for, expires_in_ms). */
  read: string;
  /** $1 election, $2 lease id, $3 term, $4 key, $5 entry JSON → the term when written. */
  writeState: string;
  /** $1 election, $2 key → (entry) or nothing. */
  readState: string;
  /** $1 election, $2 request JSON, $3 a fresh lease id for a row created free (term 0) → (written) or nothing (refused). */
  requestHandover: string;
  /** $1 election → (handover) or nothing. */
  readHandover: string;
  /** $1 election, $2 request id. */
  clearHandover: string;
  /** → (election) for every row. */
  listElections: string;
  /** The previous version's statements, for a table without the handover columns: same parameters. */
  legacy: { acquire: string; read: string };
}

/** What a folded renewal carries and asks: each part adds to {@link PostgresStatements.renewWith}. */
export interface FoldedRenewalParts {
  meta: boolean;
  state: boolean;
  handover: boolean;
  records: boolean;
}

const IN_MS = `$4::double precision * interval '1 millisecond'`;

export function postgresStatements(table: string): PostgresStatements {
  // The row as every reader sees it, judged at one instant of the server's clock: meta and the
  // reservation count only when written by the holder of the row's current lease id.
  const view = `SELECT s.term, s.held, CASE WHEN s.held THEN s.holder END AS holder,
        CASE WHEN s.held AND s.tagged THEN s.meta END AS meta,
        CASE WHEN NOT s.held AND s.tagged AND s.reserved_until > s.now THEN s.reserved_for END AS reserved_for,
        EXTRACT(EPOCH FROM (CASE WHEN s.held THEN s.expires_at ELSE s.reserved_until END) - s.now) * 1000 AS expires_in_ms
      FROM (SELECT l.term, l.holder, l.expires_at, l.meta, l.reserved_for, l.reserved_until, c.now,
              l.expires_at > c.now AS held, coalesce(l.meta_lease_id = l.lease_id, false) AS tagged
            FROM ${table} l CROSS JOIN (SELECT clock_timestamp() AS now) c WHERE l.election = $1) s`;
  const release = (set: string) => `WITH released AS (
        UPDATE ${table} SET expires_at = '-infinity'${set}
        WHERE election = $1 AND lease_id = $2 AND ($3::bigint IS NULL OR term = $3::bigint) AND expires_at > clock_timestamp()
        RETURNING election)
      SELECT pg_notify($4, election) FROM released`;
  const renew = (set: string, returning = '') => `UPDATE ${table} SET expires_at = clock_timestamp() + ${IN_MS}${set}
        WHERE election = $1 AND lease_id = $2 AND term = $3 AND expires_at > clock_timestamp()
        RETURNING term${returning}`;
  // Tags the meta as this lease's; a held row has no reservation, so a stale one (left by a
  // previous-version acquire, which does not clear it) must not become this lease's either.
  const setMeta = (param: string) =>
    `, meta = ${param}::jsonb, meta_lease_id = lease_id, reserved_for = NULL, reserved_until = NULL`;
  return {
    // Take the row if free or expired (and not reserved for someone else), else report who holds
    // or reserved it — when the statement's snapshot shows that. After waiting for a concurrent
    // acquire, the snapshot is older than the row that beat us (missing, or the released row
    // before it): then it answers nothing, and the caller asks afresh.
    acquire: `WITH taken AS (
        INSERT INTO ${table} AS l (election, holder, lease_id, term, expires_at, meta, meta_lease_id)
        VALUES ($1, $2, $3, 1, clock_timestamp() + ${IN_MS}, $5::jsonb, $3)
        ON CONFLICT (election) DO UPDATE
          SET holder = excluded.holder, lease_id = excluded.lease_id, term = l.term + 1, expires_at = excluded.expires_at,
            meta = excluded.meta, meta_lease_id = excluded.lease_id, reserved_for = NULL, reserved_until = NULL
          WHERE l.expires_at <= clock_timestamp()
            AND (l.reserved_for IS NULL OR l.reserved_for = excluded.holder OR l.reserved_until <= clock_timestamp()
              OR l.meta_lease_id IS DISTINCT FROM l.lease_id)
        RETURNING term)
      SELECT true AS acquired, term, true AS held, $2::text AS holder, NULL::double precision AS expires_in_ms,
          NULL::jsonb AS meta, NULL::text AS reserved_for FROM taken
      UNION ALL
      SELECT false, v.term, v.held, v.holder, v.expires_in_ms, v.meta, v.reserved_for FROM (${view}) v
        WHERE (v.held OR v.reserved_for <> $2) AND NOT EXISTS (SELECT 1 FROM taken)`,
    renew: renew(''),
    renewMeta: renew(setMeta('$5')),
    // One statement, so the writes are all-or-none under the renewal's own condition; RETURNING
    // reads the row as the renewal left it (under its row lock): nothing can land in between.
    renewWith: (parts) => {
      let n = 4;
      const param = () => `$${++n}`;
      let set = parts.meta ? setMeta(param()) : '';
      // `||` replaces top-level keys: per key what writeState's jsonb_set does.
      if (parts.state) set += `, state = coalesce(state, '{}'::jsonb) || ${param()}::jsonb`;
      let returning = parts.handover ? ', handover' : '';
      if (parts.records) {
        returning += `, (SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(records) e
          WHERE e.key = ANY(${param()}::text[])) AS records`;
      }
      return renew(set, returning);
    },
    // Conditional on lease id and (when known) term, so it never releases a later holder's row.
    release: release(''),
    releaseReserved: release(
      `, reserved_for = $5::text, reserved_until = clock_timestamp() + $6::double precision * interval '1 millisecond', meta_lease_id = lease_id`,
    ),
    read: view,
    // One statement: the row lock orders it against a concurrent takeover, and the condition is
    // the renew's (our lease id and term, unexpired by the server's clock).
    writeState: `UPDATE ${table} SET state = jsonb_set(coalesce(state, '{}'::jsonb), ARRAY[$4::text], $5::jsonb, true)
        WHERE election = $1 AND lease_id = $2 AND term = $3 AND expires_at > clock_timestamp()
        RETURNING term`,
    readState: `SELECT state -> $2::text AS entry FROM ${table} WHERE election = $1`,
    // A row made here is free and was never won (term 0), as every version reads it; the lease id
    // is one nobody holds.
    // The slot rule (spreadRequestYields), judged under the row lock: a replica's own request
    // (spread, priority) leaves an operator's pending request for its term or a later one in place,
    // and returns no row.
    requestHandover: `INSERT INTO ${table} AS l (election, holder, lease_id, term, expires_at, handover)
        VALUES ($1, '', $3, 0, '-infinity', $2::jsonb)
        ON CONFLICT (election) DO UPDATE SET handover = excluded.handover
          WHERE NOT (excluded.handover ->> 'reason' IN (${REPLICA_REASONS.map((reason) => `'${reason}'`).join(', ')})
            AND coalesce(l.handover ->> 'reason', '${SPREAD_REASON}') NOT IN (${REPLICA_REASONS.map((reason) => `'${reason}'`).join(', ')})
            AND CASE WHEN jsonb_typeof(l.handover -> 'term') = 'number'
              THEN (l.handover ->> 'term')::numeric >= (excluded.handover ->> 'term')::numeric ELSE false END)
        RETURNING 1 AS written`,
    readHandover: `SELECT handover FROM ${table} WHERE election = $1`,
    clearHandover: `UPDATE ${table} SET handover = NULL WHERE election = $1 AND handover ->> 'id' = $2::text`,
    listElections: `SELECT election FROM ${table}`,
    legacy: {
      acquire: `WITH taken AS (
        INSERT INTO ${table} AS l (election, holder, lease_id, term, expires_at)
        VALUES ($1, $2, $3, 1, clock_timestamp() + ${IN_MS})
        ON CONFLICT (election) DO UPDATE
          SET holder = excluded.holder, lease_id = excluded.lease_id, term = l.term + 1, expires_at = excluded.expires_at
          WHERE l.expires_at <= clock_timestamp()
        RETURNING term)
      SELECT true AS acquired, term, true AS held, $2::text AS holder, NULL::double precision AS expires_in_ms FROM taken
      UNION ALL
      SELECT false, term, true, holder, EXTRACT(EPOCH FROM expires_at - clock_timestamp()) * 1000 FROM ${table}
        WHERE election = $1 AND expires_at > clock_timestamp() AND NOT EXISTS (SELECT 1 FROM taken)`,
      read: `SELECT holder, term, expires_at > clock_timestamp() AS held FROM ${table} WHERE election = $1`,
    },
  };
}

export function qualified(schema: string, table: string): string {
  return `"${schema}"."${table}"`;
}
