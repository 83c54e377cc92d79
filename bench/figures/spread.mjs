// @ts-check
// Figures 10–12: several elections per app (issue 14), with real processes of
// bench/apps/fleet-replica.ts (a Nest app, `elections` with spread on).
//
// - balance:  N replicas × E elections spawned at once on fresh elections → from the moment the
//             last one is up until every election has one leader and no replica leads more than
//             ⌈E/N⌉, and that holds for a stability window (the time reported ends where it began).
// - flapping: the same fleet, once balanced, watched for a while: every leadership change counts
//             (spread must make no handover in a balanced cluster).
// - handover: 3 replicas on one election; the replica that neither leads nor is named requests a
//             directed handover → the named replica's elector reports `elected`.
import { sleep } from '../lib/proc.mjs';
import { ReplicaFleet, untilStablyBalanced } from '../lib/replica-fleet.mjs';

/** @typedef {import('../lib/impls.mjs').Timings} Timings */
/** @typedef {(message: string) => void} Log */

const BOOT_TIMEOUT_MS = 60_000;

/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/**
 * Long enough that a spread request on its way would have shown: two of spread's quiet periods
 * (renew + 2 retries: the holder's next renewal reads it, the requester waits that long before asking
 * again), at least 3 s.
 * @param {Timings} t
 */
export const stabilityMs = (t) => Math.max(3_000, 2 * (t.renewMs + 2 * t.retryMs));

/**
 * `runs` cold starts of N × E, one after the other. With `watchMs`, the first run's fleet is then
 * watched that long for leadership changes (figure 12).
 * @param {string} store
 * @param {Timings} timings
 * @param {{ replicas: number, elections: number }} size
 * @param {{ runs: number, watchMs?: number, log: Log, onUp?: () => void }} options `onUp`: the first fleet is up
 */
export async function balanceRuns(store, timings, size, { runs, watchMs, log, onUp }) {
  /** @type {number[]} */
  const samples = [];
  /** @type {string[]} */
  const failures = [];
  /** @type {Awaited<ReturnType<typeof watchForChanges>> | undefined} */
  let watch;
  const stableMs = stabilityMs(timings);
  for (let run = 0; run < runs; run++) {
    const fleet = new ReplicaFleet(store, timings, size);
    try {
      const upAt = await fleet.allUp(BOOT_TIMEOUT_MS);
      if (run === 0) onUp?.();
      const balancedAt = await untilStablyBalanced(fleet, stableMs, 30 * stableMs);
      samples.push(Math.max(0, balancedAt - upAt));
      log(`  ${store} ${size.replicas}×${size.elections}: balanced ${balancedAt - upAt} ms after all up`);
      if (run === 0 && watchMs) watch = await watchForChanges(fleet, balancedAt, watchMs, log);
    } catch (error) {
      failures.push(messageOf(error));
    } finally {
      await fleet.kill();
    }
  }
  return { samples, failures, stableMs, watch };
}

/**
 * Counts every leadership change of a balanced fleet over `watchMs` from `balancedAt`.
 * @param {ReplicaFleet} fleet
 * @param {number} balancedAt
 * @param {number} watchMs
 * @param {Log} log
 */
async function watchForChanges(fleet, balancedAt, watchMs, log) {
  log(`  watching a balanced ${fleet.replicas.length}×${fleet.elections.length} fleet for ${watchMs / 1000} s…`);
  await sleep(Math.max(0, balancedAt + watchMs - Date.now()));
  const until = balancedAt + watchMs;
  const changes = fleet.changes().filter((c) => c.at > balancedAt && c.at <= until);
  /** @type {Record<string, number>} */
  const reasons = {};
  for (const c of changes) if (c.type === 'revoked') reasons[c.reason ?? '?'] = (reasons[c.reason ?? '?'] ?? 0) + 1;
  const exited = fleet.replicas.filter((r) => !r.running).map((r) => r.name);
  return {
    watchedMs: watchMs,
    elected: changes.filter((c) => c.type === 'elected').length,
    revoked: changes.filter((c) => c.type === 'revoked').length,
    reasons,
    exited,
    loads: fleet.loads(),
  };
}

/**
 * `n` directed handovers on one election among 3 replicas, each requested by the replica that
 * neither leads nor is named; timed from the request's start (before its read of who leads) to the
 * named replica's `elected`.
 * @param {string} store
 * @param {Timings} timings
 * @param {{ n: number, log: Log }} options
 */
export async function handoverRuns(store, timings, { n, log }) {
  /** @type {number[]} */
  const samples = [];
  /** @type {string[]} */
  const failures = [];
  const fleet = new ReplicaFleet(store, timings, { replicas: 3, elections: 1 });
  const election = /** @type {string} */ (fleet.elections[0]);
  const timeoutMs = 3 * (timings.leaseMs + timings.retryMs) + 5_000;
  try {
    await fleet.allUp(BOOT_TIMEOUT_MS);
    // Named: the replica idle longest; asking: the previous leader. A replica is named again only two
    // handovers after it released, past its sit-out (2 retries), so no trial waits for one.
    /** @type {string | undefined} */
    let previous;
    for (let trial = 0; trial < n; trial++) {
      const leader = await currentLeader(fleet, election, timeoutMs);
      const from = /** @type {string} */ (
        previous !== undefined && previous !== leader ? previous : fleet.identities.find((id) => id !== leader)
      );
      const to = /** @type {string} */ (fleet.identities.find((id) => id !== leader && id !== from));
      const requester = fleet.replica(from);
      const target = fleet.replica(to);
      const mark = requester.events.length;
      const targetMark = target.events.length;
      requester.send(`handover ${election} ${to}`);
      try {
        const sent = await requester.waitFor((e) => e.type === 'handover-sent', 5_000, 'handover-sent', mark);
        const outcome = await requester.waitFor(
          (e) => e.type === 'handover-recorded' || e.type === 'handover-failed',
          timeoutMs,
          'handover recorded',
          mark,
        );
        if (outcome.type === 'handover-failed') throw new Error(`request failed: ${outcome.error}`);
        const elected = await target.waitFor(
          (e) => e.type === 'elected' && e.election === election,
          timeoutMs,
          `elected after a handover to ${to.slice(-2)}`,
          targetMark,
        );
        samples.push(elected.at - sent.at);
      } catch (error) {
        failures.push(messageOf(error));
      }
      previous = leader;
      // The new leader's first renewal, and the old one's release, settle before the next request.
      await sleep(timings.retryMs);
    }
    log(`  ${store}: ${samples.length}/${n} handovers`);
  } catch (error) {
    failures.push(messageOf(error));
  } finally {
    await fleet.kill();
  }
  return { samples, failures };
}

/**
 * The one replica leading `election` now (waits for one).
 * @param {ReplicaFleet} fleet
 * @param {string} election
 * @param {number} timeoutMs
 */
async function currentLeader(fleet, election, timeoutMs) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const holders = fleet.leadersAfter(fleet.changes()).get(election);
    if (holders?.size === 1) return /** @type {string} */ ([...holders][0]);
    await sleep(50);
  }
  throw new Error(`no single leader of ${election} within ${timeoutMs} ms`);
}
