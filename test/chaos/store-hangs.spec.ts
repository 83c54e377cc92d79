// Chaos (issue #24): "the store hangs, then answers", on every networked store. Three replicas
// (test/chaos/fixture/hang-app.ts) reach the real server through one HoldingProxy; the store stops
// answering for 2× the lease (every byte held both ways, sockets open), then delivers everything
// queued. Asserted: (1) no two replicas act at once (the ledger); (2) no burst of stale runs — the
// once-a-second cron jobs (plain @LeaderOnly and once-per-tick) run neither the missed ticks all at
// once when the store returns, nor anything after their term; (3) one leader acts again within a
// bound derived from the timings. A job that waits for leadership instead of skipping (as the
// official @nestjs/locks does: it ran 13 queued ticks in one millisecond on Redis) fails (2).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { dropPostgresTables, etcdEndpoint, MYSQL_URL, PG_URL, REDIS_URL, uniqueName } from '../setup/servers.js';
import { HoldingProxy } from '../support/holding-proxy.js';
import type { LedgerEntry } from '../support/ledger.js';
import { portOf, withPort } from '../support/reply-losing-proxy.js';
import { connectionStringFor, SLACK_MS, scenario, sharedAzurite, sleep, T } from './harness.js';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), 'fixture/hang-app.ts');

interface Timings {
  leaseMs: number;
  renewDeadlineMs: number;
  renewIntervalMs: number;
  retryMs: number;
}

/** Short leases where the store allows them (Azure's shortest is 15 s: it uses the harness's). */
const SHORT: Timings = { leaseMs: 3_000, renewDeadlineMs: 2_000, renewIntervalMs: 500, retryMs: 300 };
const AZURE: Timings = {
  leaseMs: T.leaseMs,
  renewDeadlineMs: T.renewDeadlineMs,
  renewIntervalMs: T.renewIntervalMs,
  retryMs: T.retryMs,
};

/** A follower's call (acquire) gives up after renewDeadline − renewInterval (election-loop.ts `callTimeoutMs`). */
const callTimeoutMs = (t: Timings) => t.renewDeadlineMs - t.renewIntervalMs;
/** Followers poll at least every max(retry, lease) ±15 % on a store whose watch hints the holder's expiry. */
const pollMaxMs = (t: Timings) => Math.max(t.retryMs, t.leaseMs) * 1.15;
/**
 * From the store answering again to a leader acting: a lease won by a queued acquire whose caller
 * had given up (and whose give-back may reach the server first, on another connection) blocks
 * until it expires — one lease; then a follower's next poll and its call win; plus a loaded
 * machine's slack.
 */
const resumeBoundMs = (t: Timings) => t.leaseMs + pollMaxMs(t) + callTimeoutMs(t) + SLACK_MS;
/** A run stamped this long after the last possible deadline is stale (the stamp follows the check). */
const STAMP_SLACK_MS = 250;
/** At most this many runs of one once-a-second job in any BURST_WINDOW_MS, across replicas. */
const BURST_MAX = 2;
const BURST_WINDOW_MS = 100;
const CRON_JOBS = ['tick', 'once'] as const;

interface HangStore {
  name: string;
  kind: string;
  timings: Timings;
  /** The real server's port. */
  port(): Promise<number>;
  /** What the fixture connects to: the proxy at `port`. */
  connection(port: number): string;
  namespace: string;
  cleanup?(): Promise<void>;
}

const pgTable = uniqueName('hang');
const mysqlTable = uniqueName('hang');
const prefix = uniqueName('hang');
let azurite: Awaited<ReturnType<typeof sharedAzurite>> | undefined;

const STORES: HangStore[] = [
  {
    name: 'PostgreSQL',
    kind: 'postgres',
    timings: SHORT,
    port: async () => portOf(PG_URL, 5432),
    connection: (port) => withPort(PG_URL, port),
    namespace: pgTable,
    cleanup: () => dropPostgresTables(pgTable),
  },
  {
    name: 'MariaDB',
    kind: 'mysql',
    timings: SHORT,
    port: async () => portOf(MYSQL_URL, 3306),
    connection: (port) => withPort(MYSQL_URL, port),
    namespace: mysqlTable,
    cleanup: async () => {
      const connection = await mysql.createConnection(MYSQL_URL);
      await connection.query(`DROP TABLE IF EXISTS \`${mysqlTable}\``);
      await connection.end();
    },
  },
  {
    name: 'Redis',
    kind: 'redis',
    timings: SHORT,
    port: async () => portOf(REDIS_URL, 6379),
    connection: (port) => withPort(REDIS_URL, port),
    namespace: prefix,
  },
  {
    name: 'etcd',
    kind: 'etcd',
    timings: SHORT,
    port: async () => portOf(etcdEndpoint(), 2379),
    // etcd3 takes `http://host:port` without a path.
    connection: (port) => withPort(etcdEndpoint(), port).replace(/\/$/, ''),
    namespace: prefix,
  },
  {
    name: 'Azure Blob (Azurite)',
    kind: 'azure',
    timings: AZURE,
    port: async () => {
      azurite ??= await sharedAzurite();
      return azurite.port;
    },
    connection: (port) => connectionStringFor(port),
    namespace: 'chaos-hangs',
  },
];

type Step = Extract<LedgerEntry, { t: 'step' }>;

/** The most entries of `times` (sorted) within any window of `windowMs`. */
function densest(times: number[], windowMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; j < times.length; j++) {
    while (times[j] - times[i] >= windowMs) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

afterAll(async () => {
  await azurite?.stop();
});

// One block: Jest runs the concurrent tests of a block together, but describe.each's blocks one
// after another (about 100 s here instead of 45).
describe('chaos: the store hangs for 2× the lease, then answers', () => {
  it.concurrent.each(STORES)(
    '$name: no two replicas act at once, no burst of stale runs, a leader acts again within the bound',
    async (store) => {
      const t = store.timings;
      const proxy = await HoldingProxy.start(await store.port());
      await scenario(
        `hang-${store.kind}`,
        0,
        async (s) => {
          await s.start(3, {
            fixture: FIXTURE,
            noProxy: true,
            env: {
              STORE: store.kind,
              CONNECTION: store.connection(proxy.port),
              NAMESPACE: store.namespace,
              LEASE_MS: String(t.leaseMs),
              RENEW_DEADLINE_MS: String(t.renewDeadlineMs),
              RENEW_INTERVAL_MS: String(t.renewIntervalMs),
              RETRY_MS: String(t.retryMs),
            },
          });
          const steps = (job?: string) =>
            s.ledger().filter((e): e is Step => e.t === 'step' && (job === undefined || e.job === job));
          await s.waitForLeader(30_000);
          // Both cron jobs run before the hang: their silence or burst after it means something.
          await s.waitFor('two runs of each cron job', () => CRON_JOBS.every((job) => steps(job).length >= 2), 10_000);

          const holdAt = proxy.hold();
          await sleep(2 * t.leaseMs);
          const releaseAt = proxy.release();
          const heldChunks = proxy.heldChunks;
          const next = await s.waitForTerm(
            'a leader after the store answers again',
            releaseAt,
            resumeBoundMs(t) + 5_000,
          );
          await s.waitFor(
            'two runs of each cron job after the hang',
            () => CRON_JOBS.every((job) => steps(job).filter((e) => e.at > releaseAt).length >= 2),
            10_000,
          );
          // Queued answers and ticks would have burst out by now; the jobs keep their pace meanwhile.
          await sleep(2_000);
          const until = Date.now();
          const summary = await s.finish();

          const violations = [...summary.violations];
          const all = steps().filter((e) => e.at <= until);
          // No renewal sent after holdAt can be answered before releaseAt: every term ends by then.
          const lastDeadline = holdAt + t.renewDeadlineMs;
          for (const e of all.filter((x) => x.at > lastDeadline + STAMP_SLACK_MS && x.at <= releaseAt)) {
            violations.push(
              `${e.id} ran ${e.job} (term ${e.term}) at ${e.at}, ${e.at - lastDeadline} ms after every term had to end`,
            );
          }
          const pace: Record<string, string> = {};
          for (const job of CRON_JOBS) {
            const times = all
              .filter((e) => e.job === job)
              .map((e) => e.at)
              .sort((a, b) => a - b);
            const most = densest(times, BURST_WINDOW_MS);
            if (most > BURST_MAX) violations.push(`${job}: ${most} runs within ${BURST_WINDOW_MS} ms (a burst)`);
            // Once a second, plus a tick at each edge: anything more is a missed tick run late.
            const after = times.filter((at) => at > releaseAt).length;
            const allowed = Math.floor((until - releaseAt) / 1_000) + 2;
            if (after > allowed)
              violations.push(
                `${job}: ${after} runs in the ${until - releaseAt} ms after the store answered (at most ${allowed})`,
              );
            pace[job] = `${after} runs in ${((until - releaseAt) / 1000).toFixed(1)} s`;
          }
          const firstAct = all.filter((e) => e.at > releaseAt).sort((a, b) => a.at - b.at)[0];
          const electedAfter = next.at - releaseAt;
          const actedAfter = (firstAct?.at ?? Number.POSITIVE_INFINITY) - releaseAt;
          console.log(
            `store hangs, ${store.name}: held ${2 * t.leaseMs} ms (${heldChunks} chunks queued); after it answered: ` +
              `${next.id} elected in ${electedAfter} ms, first leader-only run in ${actedAfter} ms ` +
              `(bound ${Math.round(resumeBoundMs(t))} ms); ${Object.entries(pace)
                .map(([job, p]) => `${job} ${p}`)
                .join(', ')}; ` +
              `terms ${summary.terms}, leader-only steps ${summary.steps}`,
          );

          expect(violations).toEqual([]);
          expect(heldChunks).toBeGreaterThan(0);
          expect(electedAfter).toBeLessThanOrEqual(resumeBoundMs(t));
          expect(actedAfter).toBeLessThanOrEqual(resumeBoundMs(t));
        },
        async () => {
          await proxy.close();
          await store.cleanup?.().catch(() => undefined);
        },
      );
    },
    180_000,
  );
});
