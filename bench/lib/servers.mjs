// @ts-check
// The servers of a bench run: Azurite and etcd started on free ports (scripts/lib, as the tests do), the
// machine's PostgreSQL / MariaDB / Redis probed. A store whose server is missing shows an error in
// the report; the others still run.
import pg from 'pg';
import { startAzurite } from '../../scripts/lib/azurite.mjs';
import { startEtcd } from '../../scripts/lib/etcd.mjs';
import { canConnect } from '../../scripts/lib/ports.mjs';
// `.js` names of `.ts` files, as the swc loader (and tsc) resolve them.
import { MYSQL_URL, PG_URL, REDIS_URL } from '../../test/setup/servers.js';

export const ALL_STORES = ['azure', 'postgres', 'mysql', 'redis', 'etcd'];

/**
 * Starts or probes every server; their addresses go to `process.env`, which the bench's children inherit.
 * @param {(message: string) => void} log
 * @param {string[]} errors
 * @returns {Promise<{ available: Set<string>, stop: () => Promise<void> }>}
 */
export async function startServers(log, errors) {
  /** @type {Set<string>} */
  const available = new Set();
  /** @type {Array<{ stop(): Promise<void> }>} */
  const started = [];
  /** @type {Record<string, string>} */
  const serverEnv = { PG_URL, MYSQL_URL, REDIS_URL };
  await Promise.all([
    startAzurite().then(
      (azurite) => {
        started.push(azurite);
        available.add('azure');
        serverEnv.AZURE_CONNECTION_STRING = azurite.connectionString;
        log(`Azurite on ${azurite.port}`);
      },
      (error) => errors.push(`Azurite did not start, no Azure figures: ${error.message}`),
    ),
    startEtcd().then(
      (etcd) => {
        started.push(etcd);
        available.add('etcd');
        serverEnv.ETCD_ENDPOINT = etcd.endpoint;
        log(`etcd at ${etcd.endpoint}`);
      },
      (error) => errors.push(`etcd did not start, no etcd figures: ${error.message}`),
    ),
    ...[
      ['postgres', PG_URL],
      ['mysql', MYSQL_URL],
      ['redis', REDIS_URL],
    ].map(async ([store, url]) => {
      if (await reachable(url)) available.add(store);
      else errors.push(`${store}: nothing listens at ${new URL(url).host}, no ${store} figures`);
    }),
  ]);
  Object.assign(process.env, serverEnv);
  return { available, stop: async () => void (await Promise.allSettled(started.map((service) => service.stop()))) };
}

/** @type {Record<string, number>} */
const DEFAULT_PORTS = { 'postgres:': 5432, 'mysql:': 3306, 'redis:': 6379 };

/**
 * Whether something accepts TCP connections at the URL's host and port.
 * @param {string} url
 */
function reachable(url) {
  const { hostname, port, protocol } = new URL(url);
  return canConnect(Number(port) || DEFAULT_PORTS[protocol], { host: hostname, timeoutMs: 2_000 });
}

/**
 * Fresh schemas for the peer's parallel chains: its cleanup job deletes every expired row of its table.
 * @param {number} count
 */
export async function prepareNleSchemas(count) {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const names = Array.from({ length: count }, (_, i) => `bench_nle_${i}`);
    for (const name of names) {
      await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await client.query(`CREATE SCHEMA ${name}`);
    }
    return names;
  } finally {
    await client.end();
  }
}
