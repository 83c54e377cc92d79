// The SQL of MySqlLeaseStore, in one place, for MySQL 8 and MariaDB 10.5+ alike (no syntax only one of
// them has: no ADD COLUMN IF NOT EXISTS, no `AS new` row alias, no CAST … AS JSON). The server's
// UTC clock (`UTC_TIMESTAMP(3)`, constant within a statement) is the only time source.
import { REPLICA_REASONS, SPREAD_REASON } from '../lease-store.spread-rule.js';

export const DEFAULT_TABLE = 'leader_election_leases';

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
${HANDOVER_COLUMNS.map(([name, type]) => `  ${name.padEnd(14)} ${type} NULL,`).join('\n')}
  ${RECORDS_COLUMN[0].padEnd(14)} ${RECORDS_COLUMN[1]},
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

/**
 * The shared-records column, `{ [key]: { value, version } }`: nullable without a default, like
 * `state` (MySQL allows no literal default on JSON), so a row the previous version inserts (never
 * naming it) has no records.
 */
const RECORDS_COLUMN = ['records', 'JSON NULL'] as const;

/**
 * Adds the shared-records column to a table made by a version before it, in place. The store runs
 * it on first record call when createTable is on (a "Duplicate column name" from a concurrent run
 * counts as done); with `createTable: false`, run it once in a migration (until then record calls
 * fail naming this function; leases and everything else work as before; on MariaDB,
 * `ADD COLUMN IF NOT EXISTS` makes a second run a no-op). Replicas of the previous version go on
 * working beside it: they never name the column, and their acquire, renew and release leave it as
 * it is.
 */
export function mysqlRecordsMigrationSql(table = DEFAULT_TABLE): string {
  return `ALTER TABLE ${quote(table)} ADD COLUMN ${RECORDS_COLUMN.join(' ')}`;
}

/**
 * The handover columns, all nullable without a default, so the previous version's statements (which
 * never name them) go on working: `meta` (the holder's LeaseMeta), `meta_lease_id` (the lease whose
 * holder wrote meta and the reservation: both count only while it is the row's `lease_id`, since a
 * replica of the previous version takes the row without clearing them), `reserved_for` and
 * `reserved_until` (a directed handover's reservation of the released row, UTC), and `handover`
 * (the pending HandoverRequest).
 */
const HANDOVER_COLUMNS = [
  ['meta', 'JSON'],
  ['meta_lease_id', 'CHAR(36)'],
  ['reserved_for', 'VARCHAR(256)'],
  ['reserved_until', 'DATETIME(3)'],
  ['handover', 'JSON'],
] as const;

/**
 * Adds the handover columns to a table made by a version before them, in place, in one statement
 * (so a second run, by hand or by a replica racing this one, fails as a whole with "Duplicate column
 * name", changing nothing; the store counts that as done). MySQL 8 has no ADD COLUMN IF NOT EXISTS;
 * on MariaDB you may add it to each clause to make a second run a no-op. The store runs it on first
 * use when createTable is on; with `createTable: false`, run it once in a migration (until then
 * leases work as in the previous version and the handover request calls fail naming this function).
 */
export function mysqlHandoverMigrationSql(table = DEFAULT_TABLE): string {
  const columns = HANDOVER_COLUMNS.map(([name, type]) => `ADD COLUMN ${name} ${type} NULL`);
  return `ALTER TABLE ${quote(table)} ${columns.join(', ')}`;
}

/** The statements of one acquire attempt: read, take, check. */
export interface MySqlAcquireStatements {
  /** election → the row as readers see it (term, held, holder, meta, reserved_for, expires_in_ms). */
  read: string;
  /** election, holder, lease id, duration ms[, meta JSON, lease id] → takes a free row. */
  take: string;
  /** lease id, election → {@link read}'s columns and `mine`. */
  mine: string;
}

export interface MySqlStatements extends MySqlAcquireStatements {
  /** Previous-version statements for a table without the handover columns (no meta, no reservation). */
  legacy: MySqlAcquireStatements;
  /** duration ms, then {@link MINE}'s parameters. */
  renew: string;
  /** meta JSON, duration ms, then {@link MINE}'s parameters. */
  renewMeta: string;
  /**
   * The folded renewal (renewWith): {@link renew} carrying the meta (as {@link renewMeta}) and
   * `writes` state entries (each merged as {@link writeState} writes it). Parameters: meta JSON
   * (with `meta`), a key path and entry JSON per write, duration ms, then {@link MINE}'s.
   */
  renewWith(parts: { meta: boolean; writes: number }): string;
  /**
   * What a folded renewal brings back, read right after it: lease id, term, a key path per record,
   * election → (mine: the lease is ours and unexpired[, handover][, r0, r1, … each record's entry]).
   */
  renewed(parts: { handover: boolean; records: number }): string;
  /** {@link MINE}'s parameters: the lease is still ours. */
  stillMine: string;
  /** election, lease id, term (NULL: any) twice. */
  release: string;
  /** identity, reservation ms, then {@link release}'s parameters. */
  releaseReserved: string;
  /** JSON path of the key, entry JSON, then {@link MINE}'s parameters. */
  writeState: string;
  /** JSON path of the key, election. */
  readState: string;
  /** election, request JSON (an operator's request, any reason but spread or priority: it replaces what is pending). */
  requestHandover: string;
  /** A replica's own request (spread, priority): request JSON, election, its term → 1 affected row when written. */
  requestSpread: string;
  /** election, request JSON → 1 affected row when the row was missing (written), else 0. */
  insertSpread: string;
  /** election. */
  readHandover: string;
  /** election, request id. */
  clearHandover: string;
  listElections: string;
}

const NOW = 'UTC_TIMESTAMP(3)';
/** The lease is ours: election, lease id, term, unexpired. */
const MINE = `election = ? AND lease_id = ? AND term = ? AND expires_at > ${NOW}`;
const RELEASED = `'1970-01-01 00:00:00'`;
/**
 * The acquire's condition: free or expired, and not reserved for someone else. Meta and the
 * reservation count only when written by the holder of the row's current lease id.
 */
const TAKEABLE = `expires_at <= ${NOW} AND (reserved_for IS NULL OR reserved_for = VALUES(holder)
  OR reserved_until <= ${NOW} OR NOT (meta_lease_id <=> lease_id))`;

export function mysqlStatements(table: string): MySqlStatements {
  const view = `term, holder, expires_at > ${NOW} AS held,
    IF(meta_lease_id <=> lease_id, meta, NULL) AS meta,
    IF(meta_lease_id <=> lease_id AND reserved_until > ${NOW}, reserved_for, NULL) AS reserved_for,
    TIMESTAMPDIFF(MICROSECOND, ${NOW}, IF(expires_at > ${NOW}, expires_at, reserved_until)) / 1000 AS expires_in_ms`;
  const legacyView = `term, holder, expires_at > ${NOW} AS held`;
  const release = (set: string) => `UPDATE ${table} SET ${set}expires_at = ${RELEASED}
    WHERE election = ? AND lease_id = ? AND (? IS NULL OR term = ?) AND expires_at > ${NOW}`;
  const renew = (set: string) =>
    `UPDATE ${table} SET ${set}expires_at = TIMESTAMPADD(MICROSECOND, ? * 1000, ${NOW}) WHERE ${MINE}`;
  // Tags the meta as this lease's; a held row has no reservation, so a stale one (left by a
  // previous-version acquire, which does not clear it) must not become this lease's either.
  const setMeta = 'meta = ?, meta_lease_id = lease_id, reserved_for = NULL, reserved_until = NULL, ';
  return {
    // Polling followers mostly find the lease held: one plain read answers that without a lock.
    read: `SELECT ${view} FROM ${table} WHERE election = ?`,
    // MySQL evaluates the assignments left to right, each seeing the ones before: the reservation
    // is cleared first (which leaves TAKEABLE as it was), `expires_at` assigned last, so every
    // condition sees the old expiry. Correct under old-value semantics too.
    take: `INSERT INTO ${table} (election, holder, lease_id, term, expires_at, meta, meta_lease_id)
      VALUES (?, ?, ?, 1, TIMESTAMPADD(MICROSECOND, ? * 1000, ${NOW}), ?, ?)
      ON DUPLICATE KEY UPDATE
        reserved_for = IF(${TAKEABLE}, NULL, reserved_for),
        reserved_until = IF(${TAKEABLE}, NULL, reserved_until),
        holder = IF(${TAKEABLE}, VALUES(holder), holder),
        meta = IF(${TAKEABLE}, VALUES(meta), meta),
        term = IF(${TAKEABLE}, term + 1, term),
        lease_id = IF(${TAKEABLE}, VALUES(lease_id), lease_id),
        meta_lease_id = IF(${TAKEABLE}, VALUES(lease_id), meta_lease_id),
        expires_at = IF(${TAKEABLE}, VALUES(expires_at), expires_at)`,
    // Our lease id is fresh: finding it in the row is the proof we took it (affectedRows is not,
    // as its meaning depends on the connection's FOUND_ROWS flag).
    mine: `SELECT ${view}, lease_id = ? AS mine FROM ${table} WHERE election = ?`,
    legacy: {
      read: `SELECT ${legacyView} FROM ${table} WHERE election = ?`,
      take: `INSERT INTO ${table} (election, holder, lease_id, term, expires_at)
        VALUES (?, ?, ?, 1, TIMESTAMPADD(MICROSECOND, ? * 1000, ${NOW}))
        ON DUPLICATE KEY UPDATE
          holder = IF(expires_at <= ${NOW}, VALUES(holder), holder),
          lease_id = IF(expires_at <= ${NOW}, VALUES(lease_id), lease_id),
          term = IF(expires_at <= ${NOW}, term + 1, term),
          expires_at = IF(expires_at <= ${NOW}, VALUES(expires_at), expires_at)`,
      mine: `SELECT ${legacyView}, lease_id = ? AS mine FROM ${table} WHERE election = ?`,
    },
    renew: renew(''),
    renewMeta: renew(setMeta),
    // One UPDATE, so the writes are all-or-none under the renewal's own condition; JSON_SET takes
    // the path/value pairs in order, as writeState's single one.
    renewWith: ({ meta, writes }) => {
      const pairs = Array.from({ length: writes }, () => `?, JSON_EXTRACT(?, '$')`).join(', ');
      return renew(`${meta ? setMeta : ''}${writes > 0 ? `state = JSON_SET(COALESCE(state, '{}'), ${pairs}), ` : ''}`);
    },
    renewed: ({ handover, records }) => {
      const entries = Array.from({ length: records }, (_, i) => `, JSON_EXTRACT(records, ?) AS r${i}`).join('');
      return `SELECT lease_id = ? AND term = ? AND expires_at > ${NOW} AS mine${handover ? ', handover' : ''}${entries}
        FROM ${table} WHERE election = ?`;
    },
    stillMine: `SELECT 1 AS ok FROM ${table} WHERE ${MINE}`,
    // Conditional on lease id and (when known) term, so it never releases a later holder's row.
    release: release(''),
    releaseReserved: release(
      `reserved_for = ?, reserved_until = TIMESTAMPADD(MICROSECOND, ? * 1000, ${NOW}), meta_lease_id = lease_id, `,
    ),
    // JSON_EXTRACT(?, '$') makes the parameter a JSON value on both MySQL and MariaDB (which has
    // no CAST … AS JSON); the key needs no escaping, stateKey() allows no quote or backslash.
    writeState: `UPDATE ${table} SET state = JSON_SET(COALESCE(state, '{}'), ?, JSON_EXTRACT(?, '$')) WHERE ${MINE}`,
    readState: `SELECT JSON_EXTRACT(state, ?) AS entry FROM ${table} WHERE election = ?`,
    // A row made here is free and was never won (term 0), as every version reads it; the lease id
    // is one nobody holds.
    requestHandover: `INSERT INTO ${table} (election, holder, lease_id, term, expires_at, handover)
      VALUES (?, '', UUID(), 0, ${RELEASED}, ?) ON DUPLICATE KEY UPDATE handover = VALUES(handover)`,
    // The slot rule (spreadRequestYields) for a replica's request, judged under the row lock: an
    // UPDATE that leaves an operator's pending request for its term or a later one in place
    // (0 rows), then, only when no row matched, an INSERT IGNORE for an election without a row.
    // Two statements rather than one upsert: an upsert's affected-row count cannot tell "left in
    // place" from "inserted" when the client sets CLIENT_FOUND_ROWS (mysql2's default).
    requestSpread: `UPDATE ${table} SET handover = ? WHERE election = ? AND NOT COALESCE(handover IS NOT NULL
        AND CAST(COALESCE(JSON_UNQUOTE(JSON_EXTRACT(handover, '$.reason')), '${SPREAD_REASON}') AS BINARY)
          NOT IN (${REPLICA_REASONS.map((reason) => `CAST('${reason}' AS BINARY)`).join(', ')})
        AND CASE WHEN JSON_TYPE(JSON_EXTRACT(handover, '$.term')) IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE')
          THEN JSON_EXTRACT(handover, '$.term') + 0 >= ? ELSE FALSE END, FALSE)`,
    insertSpread: `INSERT IGNORE INTO ${table} (election, holder, lease_id, term, expires_at, handover)
      VALUES (?, '', UUID(), 0, ${RELEASED}, ?)`,
    readHandover: `SELECT handover FROM ${table} WHERE election = ?`,
    // Compared as bytes: ids are case-sensitive, whatever the connection's collation.
    clearHandover: `UPDATE ${table} SET handover = NULL
      WHERE election = ? AND CAST(JSON_UNQUOTE(JSON_EXTRACT(handover, '$.id')) AS BINARY) = CAST(? AS BINARY)`,
    listElections: `SELECT election FROM ${table}`,
  };
}

export function quote(name: string): string {
  return `\`${name}\``;
}
