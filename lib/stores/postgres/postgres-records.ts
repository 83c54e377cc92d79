import { randomUUID } from 'node:crypto';
import type { QueryResultRow } from 'pg';
import type { SqlRecordsProtocol } from '../sql-records-support.js';
import type { Step } from '../store-support.js';

/**
 * Shared records in PostgresLeaseStore: the `records` jsonb column of the lease row, each write ONE
 * statement whose condition is judged under the row lock (a concurrent write waits, and the
 * condition is then checked again against the row it committed).
 */

type Query = <R extends QueryResultRow = QueryResultRow>(step: Step, text: string, values: unknown[]) => Promise<R[]>;

export function postgresRecordsStatements(table: string) {
  return {
    /**
     * $1 election, $2 key, $3 entry JSON, $4 a fresh lease id for a row created here → (written),
     * or nothing when the record exists. A row made here is free and was never won (term 0), as
     * every version reads it, with a lease id nobody holds: an acquire takes it like any free row,
     * and the acquire's own upsert (racing this one under the same unique key) never names records.
     */
    create: `INSERT INTO ${table} AS l (election, holder, lease_id, term, expires_at, records)
        VALUES ($1, '', $4, 0, '-infinity', jsonb_build_object($2::text, $3::jsonb))
        ON CONFLICT (election) DO UPDATE
          SET records = jsonb_set(coalesce(l.records, '{}'::jsonb), ARRAY[$2::text], $3::jsonb, true)
          WHERE l.records -> $2::text IS NULL
        RETURNING 1 AS written`,
    /** $1 election, $2 key, $3 entry JSON, $4 the version the record must have → (written) or nothing. */
    replace: `UPDATE ${table} SET records = jsonb_set(records, ARRAY[$2::text], $3::jsonb, true)
        WHERE election = $1 AND records -> $2::text ->> 'version' = $4::text
        RETURNING 1 AS written`,
    /** $1 election, $2 key → (entry) or nothing. */
    read: `SELECT records -> $2::text AS entry FROM ${table} WHERE election = $1`,
  };
}

export function postgresRecordsProtocol(table: string, query: Query): SqlRecordsProtocol {
  const sql = postgresRecordsStatements(table);
  return {
    read: async (step, election, key) => (await query<{ entry: unknown }>(step, sql.read, [election, key]))[0]?.entry,
    write: async (step, election, key, entry, ifVersion) => {
      const rows =
        ifVersion === null
          ? await query(step, sql.create, [election, key, entry, randomUUID()])
          : await query(step, sql.replace, [election, key, entry, ifVersion]);
      return rows.length > 0;
    },
  };
}
