/**
 * The MySQL / MariaDB lease store (needs the optional peer `mysql2`).
 * @module @leaderlease/nestjs/mysql
 */
// @leaderlease/nestjs/mysql: the MySQL / MariaDB lease store. Its driver `mysql2` is an optional peer
// dependency: only importing this subpath loads it, the root entry never does.
export {
  MySqlLeaseStore,
  type MySqlLeaseStoreOptions,
  mysqlHandoverMigrationSql,
  mysqlLeaseStateMigrationSql,
  mysqlLeaseTableSql,
  mysqlRecordsMigrationSql,
} from './stores/mysql/mysql.store.js';
