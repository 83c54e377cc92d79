// nestjs-leader-election/postgres: the PostgreSQL lease store. Its driver `pg` (an optional peer dependency) is
// loaded when this entry is imported; the main entry never imports it, so apps on other stores need no driver.
export {
  POSTGRES_LEASE_TABLE_SQL,
  PostgresLeaseStore,
  type PostgresLeaseStoreOptions,
  postgresLeaseTableSql,
} from './stores/postgres.store.js';
