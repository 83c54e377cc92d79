// Every real backend as the e2e specs use it: a fresh store client per call (one per replica), its
// own table or key prefix, and the lease each spec runs it with (Azure's shortest is 15 s).
import mysql from 'mysql2/promise';
import pg from 'pg';
import { EtcdLeaseStore } from '../../lib/etcd.js';
import { MySqlLeaseStore } from '../../lib/mysql.js';
import { PostgresLeaseStore } from '../../lib/postgres.js';
import { RedisLeaseStore } from '../../lib/redis.js';
import { AzureBlobLeaseStore } from '../../lib/stores/azure/azure-blob.store.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { etcdEndpoint, MYSQL_URL, PG_URL, REDIS_URL, uniqueName } from '../setup/servers.js';

export interface Backend {
  name: string;
  leaseDurationMs: number;
  store(): LeaseStore;
  cleanup?(): Promise<void>;
}

const pgTable = uniqueName('e2e');
const mysqlTable = uniqueName('e2e');
const prefix = `${uniqueName('e2e')}:`;

export const backends: Backend[] = [
  {
    name: 'Azure Blob (Azurite)',
    leaseDurationMs: 15_000,
    store: () =>
      new AzureBlobLeaseStore({ connectionString: process.env.AZURITE_CONNECTION_STRING, container: 'e2e-stores' }),
  },
  {
    name: 'PostgreSQL',
    leaseDurationMs: 2_000,
    store: () => new PostgresLeaseStore({ connection: PG_URL, table: pgTable }),
    cleanup: async () => {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP TABLE IF EXISTS "${pgTable}"`);
      await client.end();
    },
  },
  {
    name: 'MySQL/MariaDB',
    leaseDurationMs: 2_000,
    store: () => new MySqlLeaseStore({ connection: MYSQL_URL, table: mysqlTable }),
    cleanup: async () => {
      const connection = await mysql.createConnection(MYSQL_URL);
      await connection.query(`DROP TABLE IF EXISTS \`${mysqlTable}\``);
      await connection.end();
    },
  },
  {
    name: 'Redis',
    leaseDurationMs: 2_000,
    store: () => new RedisLeaseStore({ connection: REDIS_URL, keyPrefix: prefix }),
  },
  {
    name: 'etcd',
    leaseDurationMs: 2_000,
    store: () => new EtcdLeaseStore({ connection: etcdEndpoint(), keyPrefix: prefix.replace(':', '/') }),
  },
];
