// @ts-check
// Figure 6: ELECTORS electors on one lease, PER_PROCESS per process (bench/apps/contender.ts), all
// started at one wall-clock instant; the leader is made to resign every RESIGN_EVERY_MS so the
// others race again. Measures the time to the first leader, the most leaders acting at once
// (intervals from each `elected` to its `revoked` or last validUntil, across processes on one
// clock), and the store calls per second of the whole group.

import { uniqueElection } from '../lib/impls.mjs';
import { Child, sleep } from '../lib/proc.mjs';

/**
 * @param {string} store
 * @param {import('../lib/impls.mjs').Timings} timings
 * @param {{ electors?: number, perProcess?: number, runMs?: number, resignEveryMs?: number,
 *   log?: (message: string) => void }} [options]
 */
export async function contention(
  store,
  timings,
  { electors = 50, perProcess = 5, runMs = 10_000, resignEveryMs = 2_500, log } = {},
) {
  const election = uniqueElection(`contention-${store}`);
  const processes = Math.ceil(electors / perProcess);
  /** @type {Child[]} */
  const children = [];
  try {
    for (let p = 0; p < processes; p++) {
      children.push(
        new Child(`contender:${store}:${p}`, 'bench/apps/contender.ts', {
          STORE: store,
          ELECTION: election,
          ELECTORS: String(Math.min(perProcess, electors - p * perProcess)),
          PROCESS: String(p),
          LEASE_MS: String(timings.leaseMs),
          RENEW_DEADLINE_MS: String(timings.renewDeadlineMs),
          RENEW_MS: String(timings.renewMs),
          RETRY_MS: String(timings.retryMs),
          // One small pool per process (PostgreSQL): 10 processes stay far below max_connections.
          PG_POOL_MAX: '2',
        }),
      );
    }
    await Promise.all(children.map((c) => c.waitFor((e) => e.type === 'ready', 60_000, 'ready')));
    const goAt = Date.now() + 500;
    for (const child of children) child.send(`go ${goAt}`);
    await sleep(500);
    const countsAt = async () => {
      const marks = children.map((c) => c.events.length);
      for (const child of children) child.send('counts');
      const replies = await Promise.all(
        children.map((c, i) => c.waitFor((e) => e.type === 'counts', 10_000, 'counts', marks[i])),
      );
      return replies.reduce((sum, reply) => sum + reply.total, 0);
    };
    const handovers = Math.floor(runMs / resignEveryMs) - 1;
    for (let i = 0; i < handovers; i++) {
      await sleep(resignEveryMs);
      for (const child of children) child.send('resign');
    }
    await sleep(runMs - handovers * resignEveryMs);
    const endAt = Date.now();
    const calls = await countsAt();
    const events = children.flatMap((c) => c.events);
    const elected = events.filter((e) => e.type === 'elected').sort((a, b) => a.at - b.at);
    return {
      electors,
      processes,
      firstLeaderMs: elected.length ? elected[0].at - goAt : null,
      terms: elected.length,
      maxSimultaneous: maxOverlap(events, endAt),
      callsPerSecond: calls / ((endAt - goAt) / 1_000),
      calls,
      runMs: endAt - goAt,
    };
  } finally {
    for (const child of children) child.send('stop');
    await Promise.all(children.map((c) => c.stop(5_000)));
    log?.(`contention ${store}: done`);
  }
}

/** Most acting intervals overlapping at one instant. An interval: elected → min(revoked, last validUntil). */
/**
 * @param {import('../lib/proc.mjs').BenchEvent[]} events
 * @param {number} endAt
 */
export function maxOverlap(events, endAt) {
  const terms = new Map();
  for (const event of events) {
    const key = `${event.id}#${event.term}`;
    if (event.type === 'elected') terms.set(key, { start: event.at, until: event.validUntil, end: undefined });
    const term = terms.get(key);
    if (!term) continue;
    if (event.type === 'renewed') term.until = Math.max(term.until ?? 0, event.validUntil ?? 0);
    if (event.type === 'revoked') term.end = event.at;
  }
  const edges = [];
  for (const term of terms.values()) {
    const end = Math.min(term.end ?? endAt, term.until ?? endAt);
    if (end <= term.start) continue;
    edges.push([term.start, 1], [end, -1]);
  }
  // Ends before starts at the same instant: touching intervals are not simultaneous.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let current = 0;
  let max = 0;
  for (const [, delta] of edges) {
    current += delta;
    max = Math.max(max, current);
  }
  return max;
}
