// Chaos (issue #30): the store itself fails over — Redis with two replicas and three Sentinels, the
// old primary cut off with the leader (a network partition; see redis-partition.ts for the
// topology). Without `replicaAcks` the ledger must show the overlap Redis's asynchronous
// replication allows; with it, none. Both: the old leader's state write with its old lease is
// refused by the new primary (LeaseLostError). The repeated runs behind the figures in
// docs/guides/stores.md: bench/experiments/redis-sentinel.ts.
import { ms, Results, SLACK_MS } from './harness.js';
import { type PartitionReport, runRedisPartition, T } from './redis-partition.js';

/**
 * Cut → the new leader acts, the library's part: the replica's copy of the lease expires ≤ one lease
 * after the cut, and the new primary must exist (and, with replicaAcks, have a replica online to
 * acknowledge the acquisition); from then a follower polls every retry × 1.15 and may first wait out
 * its reconnection backoff (≤ 2 s), plus a loaded machine's slack. Sentinel's own part (down after
 * 1 s, an agreement that a split vote retries after twice the failover timeout, repointing the other
 * replica) is measured, not bounded: it is Redis's, and under load it took up to 16 s.
 */
const newLeaderBound = (r: PartitionReport): number =>
  Math.max(T.leaseMs, r.replicaAcks ? r.replicaOnlineMs : r.promotedMs) + T.retryMs * 1.15 + 2_000 + SLACK_MS;

describe('chaos: the store fails over — Redis, 2 replicas and 3 Sentinels, the primary partitioned with the leader', () => {
  const results = new Results('store-failover-redis');
  afterAll(() => results.flush());

  const expectFailover = (r: PartitionReport) => {
    // The watcher saw Sentinel's failover through to a replica online (NaN fails these).
    expect(r.promotedMs).toBeGreaterThan(0);
    expect(r.replicaOnlineMs).toBeGreaterThanOrEqual(r.promotedMs);
    expect(r.newLeaderMs).toBeLessThan(newLeaderBound(r));
  };

  const row = (r: PartitionReport, name: string) => {
    results.add({
      scenario: name,
      measure: 'partition → new leader (Sentinel promoted; replica online); overlap',
      value: `${ms(r.newLeaderMs)} (${ms(r.promotedMs)}; ${ms(r.replicaOnlineMs)}); ${ms(r.overlapMs)}`,
      bound: `${ms(newLeaderBound(r))}; ${r.replicaAcks ? '0 ms' : 'expected > 0'}`,
      overlaps: r.overlaps,
      terms: r.summary.terms,
      storeCalls: 0,
      steps: r.summary.steps,
      wallS: 0,
    });
    console.log(`${name}: ${JSON.stringify({ ...r, summary: undefined })}`);
  };

  it('without replicaAcks: the old leader keeps renewing on the isolated primary while the promoted replica elects another — the ledger shows the overlap, the old leader was told its checkpoints were written and they are gone; its stale write is refused afterwards', async () => {
    const r = await runRedisPartition('redis-partition-plain', false);
    row(r, 'redis partition, no replicaAcks');
    expect(r.otherViolations).toEqual([]);
    expect(r.overlaps).toBeGreaterThanOrEqual(1);
    // Both acted until the old primary was demoted, at least the time the partition was held.
    expect(r.overlapMs).toBeGreaterThan(500);
    expect(r.oldLeaderEndMs).toBeGreaterThan(r.newLeaderMs);
    expect(r.lostWrites).toBeGreaterThanOrEqual(1);
    expect(r.terms.b).toBeGreaterThan(r.terms.a);
    expectFailover(r);
    expect(r.staleWrite).toBe('LeaseLostError');
    // The new primary has the new leader's checkpoint: the old leader's later ones were dropped.
    expect(r.finalCheckpointTerm).toBe(r.terms.b);
  }, 90_000);

  it('with replicaAcks { replicas: 1 }: the old leader stops at the deadline of its last acknowledged renewal, before the replica frees the lease — no overlap, no checkpoint written after the cut; its stale write is refused', async () => {
    const r = await runRedisPartition('redis-partition-acks', true);
    row(r, 'redis partition, replicaAcks 1');
    expect(r.summary.violations).toEqual([]);
    expect(r.overlaps).toBe(0);
    expect(r.overlapMs).toBe(0);
    // It ended by its deadline: at most renewDeadline after the cut (plus a stall).
    expect(r.oldLeaderEndMs).toBeLessThan(T.renewDeadlineMs + 1_000);
    expect(r.oldLeaderEndMs).toBeLessThan(r.newLeaderMs);
    // It did try to write after the cut (until its deadline): every one of those was refused.
    expect(r.writesAfterCut).toBeGreaterThanOrEqual(1);
    expect(r.lostWrites).toBe(0);
    expect(r.terms.b).toBeGreaterThan(r.terms.a);
    expectFailover(r);
    expect(r.staleWrite).toBe('LeaseLostError');
    expect(r.finalCheckpointTerm).toBe(r.terms.b);
  }, 90_000);
});
