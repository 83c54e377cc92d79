// A child process for process-exit.spec.ts: an Elector on a store, elected, stopped — then
// nothing. With the store's own connections idle (PostgreSQL or Redis from `connection`) or the
// user's own client closed (Redis from `client`), the process must exit by itself.
import { Redis } from 'ioredis';
import { Elector } from '../../lib/election/elector.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { PostgresLeaseStore } from '../../lib/stores/postgres/postgres.store.js';
import { RedisLeaseStore } from '../../lib/stores/redis/redis.store.js';

const [kind, url, namespace, election] = process.argv.slice(2) as [string, string, string, string];
let userClient: Redis | undefined;
let store: LeaseStore;
if (kind === 'postgres') {
  store = new PostgresLeaseStore({ connection: url, table: namespace });
} else if (kind === 'redis-connection') {
  store = new RedisLeaseStore({ connection: url, keyPrefix: namespace });
} else {
  userClient = new Redis(url);
  store = new RedisLeaseStore({ client: userClient, keyPrefix: namespace });
}
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
const elector = new Elector({ store, election, identity: 'child', leaseDurationMs: 2_000, logger: quiet });
const elected = new Promise<void>((resolve) => {
  elector.events$.subscribe((event) => {
    if (event.type === 'elected') resolve();
  });
});
await elector.start();
await elected;
process.stdout.write('elected\n');
await elector.stop({ release: true });
process.stdout.write('stopped\n');
// Ours to close: the user's client. The store itself is deliberately not closed.
await userClient?.quit();
