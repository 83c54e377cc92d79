// nestjs-leader-election/postgres: the PostgreSQL lease store. Its driver `pg` is an optional peer
// dependency, loaded only when a store first talks to the server.
export {
  POSTGRES_LEASE_TABLE_SQL,
  PostgresLeaseStore,
  type PostgresLeaseStoreOptions,
  postgresLeaseTableSql,
} from './stores/postgres.store.js';
