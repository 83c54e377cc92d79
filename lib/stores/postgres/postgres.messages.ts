/**
 * The texts of PostgresLeaseStore. None may include a connection string, key or password: they are built
 * from option names and SQLSTATEs only, never from the driver's own message (it may quote the connection).
 */
export const postgresMessages = {
  authFailed: (code: string) =>
    `PostgresLeaseStore: the server refused the login (${code}): check the user, password and database of the connection and the server's pg_hba.conf entry for this client`,
  permissionDenied: (table: string, createTable: boolean) =>
    `PostgresLeaseStore: permission denied (SQLSTATE 42501) on ${table}: GRANT SELECT, INSERT, UPDATE ON the table and USAGE on its schema to the role${createTable ? ', plus CREATE on the schema for the store to create the table (or create it beforehand with postgresLeaseTableSql() and pass createTable: false)' : ''}`,
  databaseMissing:
    'PostgresLeaseStore: the database named in the connection does not exist (SQLSTATE 3D000): create it or fix the database name',
  schemaMissing: (schema: string) =>
    `PostgresLeaseStore: schema "${schema}" does not exist (SQLSTATE 3F000): create it or change the schema option`,
  tableMissing: (table: string) =>
    `PostgresLeaseStore: table ${table} does not exist (SQLSTATE 42P01) and createTable is false: create it with postgresLeaseTableSql()`,
  incompatibleTable: (table: string, code: string) =>
    `PostgresLeaseStore: table ${table} does not have the expected columns (SQLSTATE ${code}): compare it with postgresLeaseTableSql() or use another table name`,
  valueRefused: (code: string) =>
    `PostgresLeaseStore: the server refused a value the store sent (SQLSTATE ${code}, a data exception), e.g. an identity, advertise value or handover field with U+0000, which no PostgreSQL text or jsonb value can hold; sending it again would fail the same way`,
  targetSessionAttrs: (option: string, allowed: readonly string[]) =>
    `PostgresLeaseStore: ${option} has an unknown target_session_attrs: use one of ${allowed.join(', ')} (read-write for a primary with standbys)`,
  emptyHost: (option: string) =>
    `PostgresLeaseStore: ${option} lists an empty host: write the hosts as host1:5432,host2:5432`,
  wrongRole: (target: string) =>
    `PostgresLeaseStore: the host answered, but not as target_session_attrs=${target} asks (a standby or a read-only server): trying the next host`,
} as const;
