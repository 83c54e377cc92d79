import { FatalLeaseStoreError, type LeaseStoreError, TransientLeaseStoreError } from '../../shared/errors.js';
import { storeMessages } from '../store.messages.js';
import { errorCode } from '../store-support.js';
import { mysqlMessages } from './mysql.messages.js';

const STORE = 'MySqlLeaseStore';

/** The one place MySQL failures become typed outcomes: by error code, never by the driver's message. */
export function classifyMySqlError(error: unknown, table: string, createTable: boolean): LeaseStoreError {
  const code = errorCode(error);
  const fatal = (message: string) => new FatalLeaseStoreError(message, { cause: error });
  switch (code) {
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR':
    case 'ER_NOT_SUPPORTED_AUTH_MODE':
    case 'ER_ACCOUNT_HAS_BEEN_LOCKED':
    case 'ER_MUST_CHANGE_PASSWORD_LOGIN':
    case 'AUTH_SWITCH_PLUGIN_ERROR':
      return fatal(mysqlMessages.authFailed(code));
    case 'ER_DBACCESS_DENIED_ERROR':
      return fatal(mysqlMessages.databaseDenied);
    case 'ER_BAD_DB_ERROR':
      return fatal(mysqlMessages.databaseMissing);
    case 'ER_NO_DB_ERROR':
      return fatal(mysqlMessages.noDatabase);
    case 'ER_TABLEACCESS_DENIED_ERROR':
    case 'ER_COLUMNACCESS_DENIED_ERROR':
    case 'ER_SPECIFIC_ACCESS_DENIED_ERROR':
      return fatal(mysqlMessages.permissionDenied(table, code, createTable));
    case 'ER_NO_SUCH_TABLE':
      return fatal(mysqlMessages.tableMissing(table));
    case 'ER_BAD_FIELD_ERROR':
    case 'ER_WRONG_VALUE_COUNT_ON_ROW':
    case 'ER_TRUNCATED_WRONG_VALUE':
      return fatal(mysqlMessages.incompatibleTable(table, code));
  }
  // Server errors carry a numeric errno; anything else is the client failing to talk to it.
  if (code && typeof (error as { errno?: unknown }).errno === 'number' && code.startsWith('ER_')) {
    return new TransientLeaseStoreError(storeMessages.backend.failed(STORE, code), { cause: error });
  }
  return new TransientLeaseStoreError(storeMessages.backend.unreachable(STORE, code ?? errorName(error)), {
    cause: error,
  });
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'unknown error';
}
