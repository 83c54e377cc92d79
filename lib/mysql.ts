// nestjs-leader-election/mysql: the MySQL / MariaDB lease store. Its driver `mysql2` (an optional peer dependency) is
// loaded when this entry is imported; the main entry never imports it, so apps on other stores need no driver.
export {
  MYSQL_LEASE_TABLE_SQL,
  MySqlLeaseStore,
  type MySqlLeaseStoreOptions,
  mysqlLeaseTableSql,
} from './stores/mysql.store.js';
