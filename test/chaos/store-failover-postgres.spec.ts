// Chaos (issue #30): the store itself fails over — a fresh PostgreSQL primary and streaming
// standby on loopback (scripts/lib/pg-cluster.mjs), the store given both hosts in one libpq-style
// connection string with target_session_attrs=read-write. Three replicas
// (test/chaos/fixture/hang-app.ts) write the shared ledger; the primary crashes (pg_ctl stop -m
// immediate), and the standby is promoted a moment later, as an HA manager (Patroni) would.
// Asserted, with asynchronous and with synchronous replication: no two replicas act at once, one
// leads again within the bound, and the LISTEN connection follows to the new primary (a release
// there wakes a watcher that was watching before the failover).
// The repeated runs behind the figures in docs/guides/stores.md: bench/experiments/store-failover.mjs.
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PostgresLeaseStore } from '../../lib/postgres.js';
import { type PgCluster, startPgCluster } from '../../scripts/lib/pg-cluster.mjs';
import { chaosFile, ms, type Scenario, SLACK_MS, scenario, sleep } from './harness.js';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), 'fixture/hang-app.ts');

const T = { leaseMs: 3_000, renewDeadlineMs: 2_000, renewIntervalMs: 500, retryMs: 400 };
/** How long "the HA manager" takes to promote the standby after the primary is gone. */
const PROMOTE_AFTER_MS = 1_000;
/** A follower's acquire gives up after renewDeadline − renewInterval (election-loop.ts `callTimeoutMs`). */
const CALL_TIMEOUT_MS = T.renewDeadlineMs - T.renewIntervalMs;
/**
 * Leaderless after the primary's crash, derived: the standby is promoted after PROMOTE_AFTER_MS; the
 * row there still holds the old lease for ≤ one lease (its last replicated renewal + lease); an
 * expiry is not pushed, so followers find it free by polling (≤ lease × 1.15); their call takes ≤ one
 * call timeout; plus a loaded machine's slack. ≈ 14 s; measured well under it (bench figures).
 */
const FAILOVER_BOUND_MS = PROMOTE_AFTER_MS + T.leaseMs + T.leaseMs * 1.15 + CALL_TIMEOUT_MS + SLACK_MS;
/**
 * The LISTEN connection back on the new primary: it redials with a backoff of 0.5, 1, 2, 4 … s
 * while no host accepts writes (≈ PROMOTE_AFTER_MS), so within ~2× that outage plus slack.
 */
const PUSH_BACK_BOUND_MS = 4 * PROMOTE_AFTER_MS + SLACK_MS;
/** A release wakes a watcher this fast when its LISTEN works (a poll would take ≥ 2.55 s). */
const WAKE_MS = 1_000;

/** A watcher of one election through the host list, from before the failover on. */
class WatchProbe {
  readonly table = `probe_${randomBytes(4).toString('hex')}`;
  readonly election = 'probe';
  wakes = 0;
  private readonly store: PostgresLeaseStore;
  private readonly watch: { close(): Promise<void> };

  constructor(cluster: PgCluster) {
    this.store = new PostgresLeaseStore({ connection: cluster.url, table: this.table });
    this.watch = this.store.watch(this.election, () => {
      this.wakes += 1;
    });
  }

  /**
   * Acquires and releases the election on the new primary (a store of its own) until a release
   * wakes the watcher within {@link WAKE_MS}; resolves with when that release was sent.
   */
  async pushWorks(writerUrl: string, giveUpMs: number): Promise<number> {
    const writer = new PostgresLeaseStore({ connection: writerUrl, table: this.table });
    const signal = () => AbortSignal.timeout(2_000);
    const giveUpAt = Date.now() + giveUpMs;
    try {
      for (;;) {
        const result = await writer
          .acquire({ election: this.election, identity: 'probe', leaseDurationMs: 2_000, signal: signal() })
          .catch(() => undefined);
        if (result?.acquired) {
          const before = this.wakes;
          const releasedAt = Date.now();
          await writer.release(result.lease, { signal: signal() }).catch(() => undefined);
          while (Date.now() - releasedAt < WAKE_MS) {
            if (this.wakes > before) return releasedAt;
            await sleep(20);
          }
        }
        if (Date.now() > giveUpAt) return Number.POSITIVE_INFINITY;
        await sleep(250);
      }
    } finally {
      await writer.close();
    }
  }

  async close(): Promise<void> {
    await this.watch.close();
    await this.store.close();
  }
}

async function failover(s: Scenario, cluster: PgCluster, watcher: WatchProbe) {
  await s.start(3, {
    fixture: FIXTURE,
    noProxy: true,
    env: {
      STORE: 'postgres',
      CONNECTION: cluster.url,
      NAMESPACE: `failover_${randomBytes(4).toString('hex')}`,
      LEASE_MS: String(T.leaseMs),
      RENEW_DEADLINE_MS: String(T.renewDeadlineMs),
      RENEW_INTERVAL_MS: String(T.renewIntervalMs),
      RETRY_MS: String(T.retryMs),
    },
  });
  await s.waitForLeader(30_000);
  // The watcher's LISTEN works before the failover (the baseline the spec compares with).
  const pushBefore = await watcher.pushWorks(cluster.primary.url, 10_000);
  await sleep(2_000);
  const stopAt = await cluster.stop(cluster.primary, 'immediate');
  await sleep(PROMOTE_AFTER_MS);
  const promotedAt = await cluster.promote();
  const next = await s.waitFor(
    'a leader acting after the failover',
    () => s.check().intervals.find((i) => i.end > promotedAt),
    FAILOVER_BOUND_MS + 5_000,
  );
  const pushAt = await watcher.pushWorks(cluster.standby.url, PUSH_BACK_BOUND_MS + 5_000);
  await sleep(Math.max(0, promotedAt + 8_000 - Date.now()));
  const gap = s.check().longestGapMs(stopAt, Date.now());
  return { stopAt, promotedAt, next, gap, pushBefore, pushAfter: pushAt - promotedAt };
}

async function onCluster(
  name: string,
  synchronous: boolean,
  body: (s: Scenario, c: PgCluster, w: WatchProbe) => Promise<void>,
) {
  const cluster = await startPgCluster({ synchronous });
  const watcher = new WatchProbe(cluster);
  await scenario(
    name,
    0,
    (s) => body(s, cluster, watcher),
    async () => {
      await watcher.close().catch(() => undefined);
      await cluster.dispose();
    },
  );
}

describe('chaos: the store fails over — PostgreSQL primary + streaming standby', () => {
  const { results } = chaosFile('store-failover-postgres');

  it.concurrent.each([
    { replication: 'asynchronous', synchronous: false },
    { replication: 'synchronous (synchronous_commit=on, synchronous_standby_names=*)', synchronous: true },
  ])(
    `$replication: the primary crashes, the standby is promoted ${PROMOTE_AFTER_MS} ms later → 0 overlaps, a leader within ${ms(FAILOVER_BOUND_MS)}, LISTEN on the new primary`,
    async ({ synchronous }) => {
      const name = synchronous ? 'pg-failover-sync' : 'pg-failover-async';
      await onCluster(name, synchronous, async (s, cluster, watcher) => {
        const { stopAt, promotedAt, gap, pushBefore, pushAfter } = await failover(s, cluster, watcher);
        const summary = await s.finish();
        results.from(
          s,
          summary,
          `primary crashed, standby promoted after ${ms(promotedAt - stopAt)} → leaderless`,
          ms(gap),
          `≤ ${ms(FAILOVER_BOUND_MS)}`,
        );
        results.from(
          s,
          summary,
          'LISTEN wakes a watcher again, after the promotion',
          ms(pushAfter),
          `≤ ${ms(PUSH_BACK_BOUND_MS)}`,
        );

        expect(summary.violations).toEqual([]);
        expect(pushBefore).toBeLessThan(Number.POSITIVE_INFINITY);
        expect(gap).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
        expect(pushAfter).toBeLessThanOrEqual(PUSH_BACK_BOUND_MS);
      });
    },
    120_000,
  );
});
