/**
 * The texts of MySqlLeaseStore. None may include a connection string, key or password: they are built
 * from option names and error codes only, never from the driver's own message (it may quote the connection).
 */
export const mysqlMessages = {
  authFailed: (code: string) =>
    `MySqlLeaseStore: the server refused the login (${code}): check the user and password of the connection and that the account may connect from this host`,
  databaseDenied:
    'MySqlLeaseStore: the account may not use the database of the connection (ER_DBACCESS_DENIED_ERROR): GRANT SELECT, INSERT, UPDATE (and CREATE, for the store to create its table) ON <database>.* to it',
  databaseMissing:
    'MySqlLeaseStore: the database named in the connection does not exist (ER_BAD_DB_ERROR): create it or fix the database name',
  noDatabase:
    'MySqlLeaseStore: the connection selects no database (ER_NO_DB_ERROR): add the database to the connection settings or URL',
  permissionDenied: (table: string, code: string, createTable: boolean) =>
    `MySqlLeaseStore: permission denied on table ${table} (${code}): GRANT SELECT, INSERT, UPDATE ON the table to the account${createTable ? ', plus CREATE on the database for the store to create the table (or create it beforehand with mysqlLeaseTableSql() and pass createTable: false)' : ''}`,
  tableMissing: (table: string) =>
    `MySqlLeaseStore: table ${table} does not exist (ER_NO_SUCH_TABLE) and createTable is false: create it with mysqlLeaseTableSql()`,
  incompatibleTable: (table: string, code: string) =>
    `MySqlLeaseStore: table ${table} does not have the expected columns (${code}): compare it with mysqlLeaseTableSql() or use another table name`,
} as const;
