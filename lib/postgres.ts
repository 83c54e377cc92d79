/**
 * The PostgreSQL lease store (needs the optional peer `pg`).
 * @module @leaderlease/nestjs/postgres
 */
// @leaderlease/nestjs/postgres: the PostgreSQL lease store. Its driver `pg` is an optional peer
// dependency: only importing this subpath loads it, the root entry never does.
export {
  PostgresLeaseStore,
  type PostgresLeaseStoreOptions,
  postgresHandoverMigrationSql,
  postgresLeaseStateMigrationSql,
  postgresLeaseTableSql,
  postgresRecordsMigrationSql,
} from './stores/postgres/postgres.store.js';
