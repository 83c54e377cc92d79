import { ABORT_GRACE_MS } from '../../lib/leadership/leadership-options.js';
import { TICK_RECORD_RETRY_MS } from '../../lib/leadership/tick.ledger.js';
import type { FeatureScenario } from './feature-scenario.js';
import { MAX_DRIFT } from './scenario.js';

/**
 * The liveness bounds of the feature world, derived from the scenario's timings (true time; every
 * replica's clock runs within ±1 % of it, so a local duration d takes at most d / (1 − 1.1 %)).
 *
 * - callTimeout ct = renewDeadline − renewInterval: the bound of every follower call and release.
 * - drain = shutdownTimeout (in-flight work) + grace min(1 s, shutdownTimeout) (work that still runs
 *   after the abort) + ct (the release): how long an honoured handover or a stop holds the lease.
 * - poll = retryInterval × 1.15 (jitter), or standbyPollMs × 1.15 with standby followers (a standby
 *   heir polls that rarely; the reservation of a directed handover lasts that long).
 * - acting leader (a): once recovered, an election with at least one live replica and no acting
 *   leader, whose lease is not held or reserved by a replica that is gone, gets one within
 *   renewInterval (the holder notices a request or a stuck call at its next renewal) + drain + poll
 *   + ct (the winning acquire). Recovery from the faults: one lease (leases of replicas lost in the
 *   fault phase expire), plus three leases with standby (a dead replica's candidate slot expires).
 * - act or report (b): a replica whose elector holds the lease acts (`isLeader()`) or reports
 *   unhealthy within one renewInterval; while draining for a handover honoured in that same term,
 *   within drain.
 * - request (c): an operator's request is seen at the leader's next renewal (renewInterval + ct for
 *   the read), may wait for a drain already running (+ renewInterval + drain), is honoured (drain),
 *   and its heir acquires (poll + ct); or it is replaced by another operator's request.
 * - stop (e): drain (in-flight work, grace, release) + ct for the call in flight + ct for late answers
 *   + ct for the candidate slot's give-back + ct for the watch cancel.
 * - job command applied (g): the leader reads the job board at the start of its term and after every
 *   renewal, so a pause or resume recorded in the store decides its scheduled calls from the read
 *   after the next renewal on: renewInterval, plus the renewal's and the read's round trips.
 * - run now (g): read at the leader's next renewal (renewInterval + a round trip), claimed (a read and
 *   a compare-and-set, retried within one ct), then run at once; or leadership moves first — the
 *   acting-leader bound (a) — and the new leader reads and claims at its election (+ 2 ct).
 * Each bound adds round trips (2 × latency) and late timers per step, and the probe period.
 */
export function featureBounds(s: FeatureScenario) {
  const { leaseDurationMs: lease, renewDeadlineMs, renewIntervalMs, retryIntervalMs } = s.timings;
  const drift = 1 / (1 - 1.1 * MAX_DRIFT);
  const ct = renewDeadlineMs - renewIntervalMs;
  const grace = Math.min(ABORT_GRACE_MS, s.shutdownTimeoutMs);
  const steps = 8 * (2 * s.net.latencyMs + Math.min(20, 0.02 * lease) + 2);
  const probe = Math.max(5, Math.min(renewIntervalMs / 4, retryIntervalMs / 3)) * 1.5;
  const poll = (s.standby ? Math.max(retryIntervalMs, s.standby.standbyPollMs) : retryIntervalMs) * 1.15;
  const drainMs = (s.shutdownTimeoutMs + grace + ct) * drift + steps + probe;
  return {
    drainMs,
    actOrReportMs: renewIntervalMs * drift + steps + probe,
    leaderMs: (renewIntervalMs + s.shutdownTimeoutMs + grace + 2 * ct + poll) * drift + steps + probe,
    recoveryMs: (lease + (s.standby ? 3 * lease : 0)) * drift,
    requestMs: (3 * renewIntervalMs + 2 * (s.shutdownTimeoutMs + grace) + 3 * ct + poll) * drift + steps + probe,
    stopMs: (s.shutdownTimeoutMs + grace + 5 * ct) * drift + steps + probe,
    applyMs: renewIntervalMs * drift + steps,
    runNowMs: (2 * renewIntervalMs + s.shutdownTimeoutMs + grace + 4 * ct + poll) * drift + steps + probe,
    /**
     * (d) A once-per-tick run starts at most ¾ period after its timer fired (later, it is the next
     * tick's), plus its claim: a read and a write (each within ct), retried within the tick's budget
     * min(TICK_RECORD_RETRY_MS, period / 2), queued behind the previous tick's claim (another read
     * and write). The ledger fixes the fire time before that wait, so with slow store calls a run
     * may start this late, not later (a burst of queued stale runs would).
     */
    tickLateMs: (periodMs: number) =>
      (0.75 * periodMs + Math.min(TICK_RECORD_RETRY_MS, periodMs / 2) + 4 * ct) * drift + steps,
  };
}
