// @ts-check
// Figure 16's arithmetic: what bench/lib/traffic/traffic-run.ts counted in its window, turned into
// calls per replica-hour at the library's default timings, and projected to a fleet.
//
// The run shortens the election's periods (renew 2.5 s → 0.5 s, retry, standby poll and the app's
// state writes ÷ 5; lease and deadline ÷ 2.5) so a short window holds many of them; each counted call
// is put back on the default clock by what drives it (call-log.ts's classes):
//   leader, `lease` (renew, handover read, job board read, the app's state write — on the renew clock,
//     the state period scaled alike): per renewal counted in the window × 3,600 s / renewIntervalMs;
//   `tick` (the once-per-tick ledger; the cron fires every second in the run as at the defaults):
//     per tick the job ran in the window × 3,600 ticks/h;
//   `jobs` (job history, written at a renewal after a run finished): per min(renewals, ticks) of the
//     window × min(renewals, ticks) per hour at the defaults;
//   a follower's `lease` calls are its polls (one call each): their mean cycle in the window is the
//     library's nominal delay at the run's timings (follower-schedule.ts, as traffic-run.ts averages
//     it: the retry interval, or on a store with a watch the holder's hinted expiry) plus an
//     unscaled part, the call's own time and the timer's lateness; at the defaults a cycle is the
//     nominal delay at the defaults plus that same part. A standby polls every standbyPollMs alike;
//   `slot` (a standby trying for a candidate slot, every standbyPollMs): per hour ÷ the poll's scale;
//   `slot-renew` (an active follower's slot): per hour ÷ (default slot lease / measured slot lease);
//   wire messages served by no call (`background`: keep-alive pings…): per hour, unscaled.
// A wire round trip is scaled like the call that sent it (traffic-window.ts matches them).
import { AZURE_OTHER_PER_10K, billedOps, HOURS_PER_MONTH, sum } from '../rows/calls.mjs';

/** The fleet of the projection, as in figure 8: replicas, elections per replica, active followers with standby. */
export const FLEET = { replicas: 1_000, elections: 20, activeFollowers: 2 };
const HOUR_MS = 3_600_000;

/** @typedef {Record<string, number>} Counts */
/**
 * @typedef {object} MeasuredReplica
 * @property {string} role
 * @property {number} spanMs its window (a leader's: whole renewal cycles)
 * @property {number} ticks
 * @property {number} renewals
 * @property {number} leaseCallMs mean time of its election-loop calls (a follower: its polls)
 * @property {number} leadershipChanges
 * @property {Counts} failed per `class/method`, calls that rejected
 * @property {Record<string, Counts>} calls
 * @property {{ requests: Counts, background: Counts, byCall: Record<string, Counts>,
 *   costs: Record<string, Counts>, mixed: number, unanswered: Counts }} wire
 * @property {object} [bytes]
 */
/**
 * @typedef {object} StoreResult what traffic-run.ts emits
 * @property {string} store
 * @property {number} scale of the renew clock
 * @property {number} windowMs
 * @property {{ follower: Period, standby: Period }} pollDelayMs a follower's nominal mean delay between polls
 * @property {{ renewIntervalMs: number, tickMs: number }} defaults
 * @property {{ measured: number | null, defaults: number | null }} slotLeaseMs
 * @property {Array<{ feature: string, activeFollowers: number | null, error?: string, replicas: MeasuredReplica[] }>} runs
 */
/** @typedef {{ measured: number, defaults: number }} Period */
/**
 * @typedef {object} RoleHour one role's traffic per replica-hour at the defaults
 * @property {number} replicas how many replicas of the run had this role (averaged)
 * @property {number} calls every method call on the store object
 * @property {Counts} byMethod
 * @property {Counts} byClass
 * @property {number} wire round trips on the wire (Azure: HTTP requests)
 * @property {Counts} wireByLabel
 * @property {number} background wire round trips served by no call (included in `wire`)
 * @property {number} mixedShare of the window's round trips, the share sent while calls of different classes
 *   overlapped: their split between the classes (hence their scaling) is estimated
 * @property {{ billedOther: number, reads: number, writes: number }} [azure] Azure's requests by billing category
 * @property {{ nominalMs: number, cycleMs: number, callMs: number }} [poll] a follower's nominal delay between
 *   polls at the run's timings, its mean cycle measured (their difference is kept unscaled at the
 *   defaults) and the mean time of one poll (the part of that difference a slow server explains)
 */

/**
 * Per feature run: each role's traffic per replica-hour at the defaults, and the leader's own window
 * (what issue 29's "done when" counts: calls against renewals and ticks).
 * @param {StoreResult} result
 */
export function projectStore(result) {
  return result.runs.map((run) => {
    /** @type {Record<string, RoleHour>} */
    const roles = {};
    for (const role of new Set(run.replicas.map((r) => r.role))) {
      roles[role] = mean(run.replicas.filter((r) => r.role === role).map((r) => replicaHour(r, result)));
    }
    const leader = run.replicas.find((r) => r.role === 'leader');
    return {
      feature: run.feature,
      activeFollowers: run.activeFollowers,
      error: run.error ?? (leader ? undefined : 'no leader in the window'),
      stable: run.replicas.every((r) => r.leadershipChanges === 0),
      failedCalls: run.replicas.reduce((total, r) => total + sum(r.failed ?? {}), 0),
      roles,
      leaderWindow: leader ? leaderWindow(leader) : undefined,
    };
  });
}

/**
 * @param {MeasuredReplica} replica
 * @param {StoreResult} result
 * @returns {RoleHour}
 */
function replicaHour(replica, result) {
  const hours = (replica.spanMs ?? result.windowMs) / HOUR_MS;
  const leading = replica.role === 'leader';
  const renewalsPerHour = HOUR_MS / result.defaults.renewIntervalMs;
  const ticksPerHour = HOUR_MS / result.defaults.tickMs;
  const flushesPerHour = Math.min(renewalsPerHour, ticksPerHour);
  const { measured, defaults } = result.slotLeaseMs;
  const slotFactor = measured && defaults ? defaults / measured : result.scale;
  /** @param {string} cls the multiplier from a window count of class `cls` to per hour at the defaults */
  const perHour = (cls) => {
    // A leader's once-per-tick calls per tick its job ran × the cron's ticks per hour: a loaded
    // machine's cron may skip a second, the defaults' does not.
    if (cls === 'tick' && leading && replica.ticks) return ticksPerHour / replica.ticks;
    if (cls === 'tick' || cls === 'background') return 1 / hours;
    if (cls === 'slot-renew') return 1 / hours / slotFactor;
    if (!leading) {
      if (cls === 'lease' && polls(replica) > 0) return pollsPerHour(replica, result) / polls(replica);
      const { standby } = result.pollDelayMs;
      return 1 / hours / (cls === 'slot' ? standby.defaults / standby.measured : result.scale);
    }
    if (cls === 'jobs') {
      const flushes = Math.min(replica.renewals, replica.ticks || replica.renewals);
      return flushes ? flushesPerHour / flushes : 0;
    }
    return replica.renewals ? renewalsPerHour / replica.renewals : Number.NaN;
  };
  const { wire } = replica;
  /** @type {Counts} */
  const byMethod = {};
  /** @type {Counts} */
  const byClass = {};
  for (const [cls, counts] of Object.entries(replica.calls)) {
    for (const [method, count] of Object.entries(counts)) {
      const hourly = count * perHour(cls);
      byMethod[method] = (byMethod[method] ?? 0) + hourly;
      byClass[cls] = (byClass[cls] ?? 0) + hourly;
    }
  }
  /** @type {Counts} */
  const wireByLabel = {};
  const sources = [
    ...Object.entries(wire.byCall).map(([kind, counts]) => /** @type {const} */ ([kind.split('/')[0] ?? '', counts])),
    /** @type {const} */ (['background', wire.background]),
  ];
  for (const [cls, counts] of sources) {
    for (const [label, count] of Object.entries(counts)) {
      wireByLabel[label] = (wireByLabel[label] ?? 0) + count * perHour(cls);
    }
  }
  const background = sum(wire.background) * perHour('background');
  const nominal = result.pollDelayMs[replica.role === 'standby' ? 'standby' : 'follower'];
  return {
    replicas: 1,
    calls: sum(byMethod),
    byMethod,
    byClass,
    wire: sum(wireByLabel),
    wireByLabel,
    background,
    mixedShare: sum(wire.requests) ? wire.mixed / sum(wire.requests) : 0,
    ...(leading || polls(replica) === 0
      ? {}
      : {
          poll: {
            nominalMs: nominal.measured,
            cycleMs: replica.spanMs / polls(replica),
            callMs: replica.leaseCallMs ?? 0,
          },
        }),
    ...(result.store === 'azure' ? { azure: azureCategories(wireByLabel) } : {}),
  };
}

/** @param {MeasuredReplica} replica a follower's polls in the window: its calls of the election loop */
const polls = (replica) => sum(replica.calls.lease ?? {});

/**
 * A follower's polls per hour at the defaults: its nominal delay there plus the unscaled part of
 * its measured cycle (see the header).
 * @param {MeasuredReplica} replica
 * @param {StoreResult} result
 */
function pollsPerHour(replica, result) {
  const nominal = result.pollDelayMs[replica.role === 'standby' ? 'standby' : 'follower'];
  const lag = replica.spanMs / polls(replica) - nominal.measured;
  return HOUR_MS / (nominal.defaults + lag);
}

/**
 * Azure's requests by how they are billed: "other" (Lease Blob, Get Blob Properties, Set Blob
 * Metadata: figure 5's billedOps), reads (Get Blob) and writes (Put Blob) apart.
 * @param {Counts} byLabel
 */
function azureCategories(byLabel) {
  return { billedOther: billedOps(byLabel), reads: byLabel['read:GET'] ?? 0, writes: byLabel.upload ?? 0 };
}

/** @param {MeasuredReplica} leader */
function leaderWindow(leader) {
  const calls = Object.values(leader.calls).reduce((total, counts) => total + sum(counts), 0);
  return {
    calls,
    renewals: leader.renewals,
    ticks: leader.ticks,
    beyondRenewalsAndTicks: calls - leader.renewals - leader.ticks,
    callsPerRenewal: leader.renewals ? sum(leader.calls.lease ?? {}) / leader.renewals : null,
    tickCallsPerTick: leader.ticks ? sum(leader.calls.tick ?? {}) / leader.ticks : null,
  };
}

/**
 * The mean of several replicas of one role.
 * @param {RoleHour[]} list
 * @returns {RoleHour}
 */
function mean(list) {
  const n = list.length;
  /** @param {(r: RoleHour) => Counts} pick */
  const counts = (pick) => {
    /** @type {Counts} */
    const out = {};
    for (const r of list) for (const [k, v] of Object.entries(pick(r))) out[k] = (out[k] ?? 0) + v / n;
    return out;
  };
  /** @param {(r: RoleHour) => number} pick */
  const avg = (pick) => list.reduce((total, r) => total + pick(r), 0) / n;
  const first = list[0];
  return {
    replicas: n,
    calls: avg((r) => r.calls),
    byMethod: counts((r) => r.byMethod),
    byClass: counts((r) => r.byClass),
    wire: avg((r) => r.wire),
    wireByLabel: counts((r) => r.wireByLabel),
    background: avg((r) => r.background),
    mixedShare: avg((r) => r.mixedShare),
    ...(first?.poll
      ? {
          poll: {
            nominalMs: first.poll.nominalMs,
            cycleMs: avg((r) => r.poll?.cycleMs ?? Number.NaN),
            callMs: avg((r) => r.poll?.callMs ?? 0),
          },
        }
      : {}),
    ...(first?.azure
      ? {
          azure: {
            billedOther: avg((r) => r.azure?.billedOther ?? 0),
            reads: avg((r) => r.azure?.reads ?? 0),
            writes: avg((r) => r.azure?.writes ?? 0),
          },
        }
      : {}),
  };
}

/**
 * The fleet of {@link FLEET}: E × (L + (R − 1) × F) per hour, and with standby followers
 * E × (L + A × active + (R − 1 − A) × standby); Azure's "other" operations priced as in figure 8.
 * @param {Record<string, RoleHour>} roles
 * @param {(role: RoleHour) => number} measure
 */
export function fleetPerHour(roles, measure) {
  const { replicas: R, elections: E, activeFollowers: A } = FLEET;
  const { leader, follower, active, standby } = roles;
  if (!leader) return null;
  if (follower) return E * (measure(leader) + (R - 1) * measure(follower));
  if (active && standby) return E * (measure(leader) + A * measure(active) + (R - 1 - A) * measure(standby));
  return null;
}

/** @param {number} billedPerHour */
export const azureMonthlyUsd = (billedPerHour) => (billedPerHour * HOURS_PER_MONTH * AZURE_OTHER_PER_10K) / 10_000;
