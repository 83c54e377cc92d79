import 'reflect-metadata';
import { type INestApplication, Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { EtcdLeaseStore } from '../../lib/etcd.js';
import { LeaderElectionService } from '../../lib/leader-election.service.js';
import { LeaderOnly } from '../../lib/leader-only.decorator.js';
import { MySqlLeaseStore } from '../../lib/mysql.js';
import { PostgresLeaseStore } from '../../lib/postgres.js';
import { RedisLeaseStore } from '../../lib/redis.js';
import { AzureBlobLeaseStore } from '../../lib/stores/azure/azure-blob.store.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { etcdEndpoint, MYSQL_URL, PG_URL, REDIS_URL, uniqueName } from '../setup/servers.js';
import { closeAll, createApp, electionOf, SLACK_MS, waitFor } from './helpers.js';

// The Nest "one job runner + handover" scenario on every real backend: two apps, each with its own
// store client, one @Interval job; exactly one app runs it, and closing it hands the job over.

const RETRY_MS = 500;
/**
 * close() (drain and release: round trips), the follower's next poll (retry +15 %), its acquire,
 * the next 50 ms tick, and lag on a loaded machine: below the shortest lease (2000 ms).
 */
const HANDOVER_BOUND_MS = RETRY_MS * 1.15 + 50 + 700;
const runs: Array<{ app: string; at: number }> = [];

@Injectable()
class Jobs {
  constructor(private readonly election: LeaderElectionService) {}

  @Interval(50)
  @LeaderOnly()
  tick(): void {
    runs.push({ app: this.election.identity, at: Date.now() });
  }
}

interface Backend {
  name: string;
  leaseDurationMs: number;
  store(): LeaseStore;
  cleanup?(): Promise<void>;
}

const pgTable = uniqueName('e2e');
const mysqlTable = uniqueName('e2e');
const prefix = `${uniqueName('e2e')}:`;

const backends: Backend[] = [
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

describe.each(backends)('Nest on $name: one job runner, then handover', (backend) => {
  const apps: INestApplication[] = [];

  afterAll(async () => {
    await closeAll(apps);
    await backend.cleanup?.();
  });

  it('runs the job on exactly one app, and on the other once it closes', async () => {
    const election = uniqueName('jobs').replace(/_/g, '-');
    const start = (identity: string) =>
      createApp({
        election: {
          store: backend.store(),
          election,
          identity,
          leaseDurationMs: backend.leaseDurationMs,
          retryIntervalMs: RETRY_MS,
          closeStoreOnShutdown: true,
          shutdownTimeoutMs: 1_000,
        },
        providers: [Jobs],
      });
    const [a, b] = [await start(`${election}-a`), await start(`${election}-b`)];
    apps.push(a, b);
    const mine = () => runs.filter((run) => run.app.startsWith(election));

    await waitFor('the job to run a few times', () => mine().length >= 5, 5_000);
    const leader = electionOf(a).isLeader() ? a : b;
    const follower = leader === a ? b : a;
    expect(new Set(mine().map((run) => run.app))).toEqual(new Set([electionOf(leader).identity]));
    expect(electionOf(follower).isLeader()).toBe(false);

    const closedAt = Date.now();
    await leader.close();
    const closeResolvedAt = Date.now();
    apps.splice(apps.indexOf(leader), 1);
    await waitFor(
      'the other app to run the job',
      () => mine().some((run) => run.app === electionOf(follower).identity),
      RETRY_MS * 1.2 + SLACK_MS + 1_000,
    );
    const takeover = mine().find((run) => run.app === electionOf(follower).identity)!.at - closedAt;
    // Graceful handover: within one retry interval (push-capable stores: about one round trip),
    // well inside the lease: a close that did not release would only hand over at expiry.
    expect(takeover).toBeLessThan(HANDOVER_BOUND_MS);
    expect(HANDOVER_BOUND_MS).toBeLessThan(backend.leaseDurationMs);
    // The closed app ran nothing once its close resolved, nor once the other app had started.
    const firstOfOther = mine().find((run) => run.app === electionOf(follower).identity)!.at;
    const lateRuns = mine().filter(
      (run) => run.app === electionOf(leader).identity && (run.at > closeResolvedAt || run.at >= firstOfOther),
    );
    expect(lateRuns).toEqual([]);
  });
});
