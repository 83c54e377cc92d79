import { FatalLeaseStoreError, type LeaseStoreError, TransientLeaseStoreError } from '../../shared/errors.js';
import { storeMessages } from '../store.messages.js';
import { errorCode } from '../store-support.js';
import { postgresMessages } from './postgres.messages.js';

const STORE = 'PostgresLeaseStore';

/**
 * The one place PostgreSQL failures become typed outcomes: by SQLSTATE, never by the driver's
 * message (which may quote the connection string).
 */
export function classifyPostgresError(
  error: unknown,
  table: string,
  schema: string,
  createTable: boolean,
): LeaseStoreError {
  const sqlState = errorCode(error);
  switch (sqlState) {
    case '28P01':
    case '28000':
      return new FatalLeaseStoreError(postgresMessages.authFailed(sqlState), { cause: error });
    case '42501':
      return new FatalLeaseStoreError(postgresMessages.permissionDenied(table, createTable), {
        cause: error,
      });
    case '3D000':
      return new FatalLeaseStoreError(postgresMessages.databaseMissing, { cause: error });
    case '3F000':
      return new FatalLeaseStoreError(postgresMessages.schemaMissing(schema), { cause: error });
    case '42P01':
      return new FatalLeaseStoreError(postgresMessages.tableMissing(table), { cause: error });
    case '42703':
    case '42804':
    case '42P10':
      return new FatalLeaseStoreError(postgresMessages.incompatibleTable(table, sqlState), { cause: error });
  }
  // Class 22, data exception: the server refused a value we sent (U+0000 in text is 22021, in jsonb
  // 22P05). Sending it again fails the same way, so it is a configuration error, not a retry.
  if (sqlState?.startsWith('22') && /^[0-9A-Z]{5}$/.test(sqlState)) {
    return new FatalLeaseStoreError(postgresMessages.valueRefused(sqlState), { cause: error });
  }
  if (error instanceof Error && /^SASL|password must be a string/.test(error.message)) {
    return new FatalLeaseStoreError(postgresMessages.authFailed('SASL'), { cause: error });
  }
  if (sqlState && /^[0-9A-Z]{5}$/.test(sqlState)) {
    return new TransientLeaseStoreError(storeMessages.backend.failed(STORE, `SQLSTATE ${sqlState}`), { cause: error });
  }
  return new TransientLeaseStoreError(storeMessages.backend.unreachable(STORE, networkCode(error)), { cause: error });
}

/** A code or class name that says what went wrong without echoing the driver's message. */
function networkCode(error: unknown): string {
  const value = errorCode(error);
  if (value) return value;
  if (error instanceof Error) {
    if (/timeout/i.test(error.message)) return 'timeout';
    if (/terminated|closed|ended/i.test(error.message)) return 'connection closed';
    return error.name;
  }
  return 'unknown error';
}
