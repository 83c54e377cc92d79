// nestjs-leader-election/mysql: the MySQL / MariaDB lease store. Its driver `mysql2` is an optional
// peer dependency, loaded only when a store first talks to the server.
export {
  MYSQL_LEASE_TABLE_SQL,
  MySqlLeaseStore,
  type MySqlLeaseStoreOptions,
  mysqlLeaseTableSql,
} from './stores/mysql.store.js';
