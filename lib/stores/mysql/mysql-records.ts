import type { SqlRecordsProtocol } from '../sql-records-support.js';
import { errorCode } from '../store-support.js';
import { affectedRows } from './mysql-client.js';

/**
 * Shared records in MySqlLeaseStore: the `records` JSON column of the lease row. Each statement's
 * condition is judged under the row lock (InnoDB's UPDATE reads the latest committed row, after
 * waiting for a concurrent write). Written or not is read from the affected-row count, which is
 * exact here with or without CLIENT_FOUND_ROWS: a write always changes the value (a new version).
 */

type Query = (sql: string, values: unknown[]) => Promise<unknown>;

/** 1970: a row made here is free, as the release leaves one. */
const RELEASED = `'1970-01-01 00:00:00'`;

// JSON_EXTRACT(?, '$') makes the parameter a JSON value on both MySQL and MariaDB; a key needs no
// escaping inside `$."…"`, recordKey() allows no quote or backslash.
export function mysqlRecordsStatements(table: string) {
  return {
    /** Key path, entry JSON, election, version path, the version the record must have. */
    replace: `UPDATE ${table} SET records = JSON_SET(records, ?, JSON_EXTRACT(?, '$'))
      WHERE election = ? AND CAST(JSON_UNQUOTE(JSON_EXTRACT(records, ?)) AS BINARY) = CAST(? AS BINARY)`,
    /** Key path, entry JSON, election, key path: written into an existing row when the key is absent. */
    add: `UPDATE ${table} SET records = JSON_SET(COALESCE(records, '{}'), ?, JSON_EXTRACT(?, '$'))
      WHERE election = ? AND NOT COALESCE(JSON_CONTAINS_PATH(records, 'one', ?), FALSE)`,
    /**
     * Election, key path, entry JSON: the row, created free and never won (term 0), as every
     * version reads it, with a lease id nobody holds. Fails with ER_DUP_ENTRY when the row exists.
     */
    insert: `INSERT INTO ${table} (election, holder, lease_id, term, expires_at, records)
      VALUES (?, '', UUID(), 0, ${RELEASED}, JSON_SET('{}', ?, JSON_EXTRACT(?, '$')))`,
    /** Key path, election → (entry) or nothing. */
    read: `SELECT JSON_EXTRACT(records, ?) AS entry FROM ${table} WHERE election = ?`,
  };
}

export function mysqlRecordsProtocol(table: string, query: Query): SqlRecordsProtocol {
  const sql = mysqlRecordsStatements(table);
  return {
    read: async (_step, election, key) => {
      const [row] = (await query(sql.read, [`$."${key}"`, election])) as { entry: unknown }[];
      return row?.entry;
    },
    write: async (step, election, key, entry, ifVersion) => {
      const path = `$."${key}"`;
      if (ifVersion !== null) {
        return affectedRows(await query(sql.replace, [path, entry, election, `${path}.version`, ifVersion])) > 0;
      }
      const add = async () => affectedRows(await query(sql.add, [path, entry, election, path])) > 0;
      // Most elections have a row: the UPDATE answers at once. 0 rows means the record exists or
      // the row is missing: a plain INSERT tells them apart (IGNORE would also swallow other errors).
      if (await add()) return true;
      step();
      try {
        await query(sql.insert, [election, path, entry]);
        return true;
      } catch (error) {
        if (errorCode(error) !== 'ER_DUP_ENTRY') throw error;
      }
      // The row exists now (made by an acquire or another write meanwhile; rows are never deleted),
      // so this UPDATE's answer is the final one.
      step();
      return add();
    },
  };
}
