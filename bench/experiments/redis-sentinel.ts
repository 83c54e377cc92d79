// Issue #30, Redis: the Sentinel split brain repeated, with and without `replicaAcks` (the short
// version is test/chaos/store-failover-redis.spec.ts, in npm test).
//
//   node --import ./test/support/swc-register.mjs bench/experiments/redis-sentinel.ts [--runs 5] [--only acks|plain]
//
// Each run: a fresh primary, 2 replicas and 3 Sentinels on loopback; replica `a` leads with the
// primary reachable directly, the primary is cut off from everyone else (test/chaos/redis-partition.ts),
// Sentinel promotes a replica, `b` leads there, the partition heals 1 s later. Lease 3 s, deadline
// 2 s, renew every 0.5 s, Sentinel down-after 1 s, WAIT timeout 200 ms. Prints the figures and writes
// them to bench/results/redis-sentinel.json. Exit code 1 when a run with replicaAcks overlapped.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DOWN_AFTER_MS,
  type PartitionReport,
  runRedisPartition,
  T,
  WAIT_MS,
} from '../../test/chaos/redis-partition.js';

const args = process.argv.slice(2);
const at = args.indexOf('--runs');
const runs = at >= 0 ? Number(args[at + 1]) : 5;
// `--only acks` or `--only plain`: one mode (a quick look; the JSON then has the other mode empty).
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? (args[onlyAt + 1] as 'plain' | 'acks') : undefined;

const stats = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const pick = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { min: sorted[0], median: pick(0.5), max: sorted.at(-1) };
};

const startedAt = Date.now();
const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
const reports: Record<'plain' | 'acks', PartitionReport[]> = { plain: [], acks: [] };
for (let i = 1; i <= runs; i++) {
  for (const mode of only ? [only] : (['plain', 'acks'] as const)) {
    const r = await runRedisPartition(`redis-sentinel-bench-${mode}-${i}`, mode === 'acks');
    reports[mode].push(r);
    console.log(
      `${mode} #${i}: overlap ${r.overlapMs} ms, new leader after ${r.newLeaderMs} ms (Sentinel promoted ${r.promotedMs} ms, replica online ${r.replicaOnlineMs} ms), old leader ended after ${r.oldLeaderEndMs} ms, ` +
        `lost writes ${r.lostWrites}/${r.writesAfterCut}, stale write ${r.staleWrite}, demoted ${r.demotedMs} ms after the heal` +
        (r.overlapViolations.length ? `, ledger: ${r.overlapViolations.join('; ')}` : '') +
        (r.otherViolations.length ? `, violations: ${r.otherViolations.join('; ')}` : '') +
        (r.overlaps > 0 ? `\n  old primary: ${r.oldPrimaryLog.join('\n  ')}` : ''),
    );
  }
}
const summary = (list: PartitionReport[]) => ({
  runs: list.length,
  runsWithOverlap: list.filter((r) => r.overlaps > 0).length,
  overlapMs: stats(list.map((r) => r.overlapMs)),
  newLeaderMs: stats(list.map((r) => r.newLeaderMs)),
  sentinelPromotedMs: stats(list.map((r) => r.promotedMs)),
  replicaOnlineMs: stats(list.map((r) => r.replicaOnlineMs)),
  oldLeaderEndMs: stats(list.map((r) => r.oldLeaderEndMs)),
  demotedAfterHealMs: stats(list.map((r) => r.demotedMs)),
  lostWrites: stats(list.map((r) => r.lostWrites)),
  staleWrites: [...new Set(list.map((r) => r.staleWrite))],
  otherViolations: list.flatMap((r) => r.otherViolations),
});
const result = {
  at: new Date().toISOString(),
  what: 'Redis primary + 2 replicas + 3 Sentinels; the primary partitioned with the leader; 1 s after the new leader acts the partition heals',
  timings: { ...T, sentinelDownAfterMs: DOWN_AFTER_MS, waitTimeoutMs: WAIT_MS, partitionHeldAfterNewLeaderMs: 1_000 },
  machine: { loadAtStart, wallS: 0 },
  withoutReplicaAcks: summary(reports.plain),
  withReplicaAcks: summary(reports.acks),
};
result.machine.wallS = Math.round((Date.now() - startedAt) / 1000);
const out = join(dirname(fileURLToPath(import.meta.url)), '../results/redis-sentinel.json');
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
console.log(`written to ${out}`);
if (result.withReplicaAcks.runsWithOverlap > 0) process.exitCode = 1;
