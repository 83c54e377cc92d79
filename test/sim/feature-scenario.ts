import { Rng } from './rng.js';
import { MAX_DRIFT } from './scenario.js';
import type { NetworkFaults } from './sim-store.js';

/**
 * One schedule of the feature world: replicas that each run several elections through the handle
 * layer (drain, in-flight work, stuck work, health), spread, standby slots, once-per-tick jobs on
 * skewed wall clocks, operators' handover requests, runtime add/remove of elections and stop().
 * Everything is drawn from `seed` (no fast-check: the shape is fixed, only values vary).
 */
export interface FeatureScenario {
  seed: number;
  nodes: number;
  timings: { leaseDurationMs: number; renewDeadlineMs: number; renewIntervalMs: number; retryIntervalMs: number };
  elections: number;
  standby?: { activeFollowers: number; standbyPollMs: number };
  spread: boolean;
  shutdownTimeoutMs: number;
  stuckAfterMs: number;
  resignWhenStuck: boolean;
  /** Leader-only calls: mean gap and longest duration (ms); a stuck one runs `stuckMs`. */
  work: { gapMs: number; maxMs: number; stuck: number; stuckMs: number };
  /** Once-per-tick jobs: election index, `Class.method` key (two may collide), cron period (s). */
  jobs: Array<{ election: number; label: string; periodS: number }>;
  rates: number[];
  /** Wall-clock offset of each replica (ms): ticks fire at different true instants. */
  skewMs: number[];
  net: NetworkFaults;
  /** Calm until then (true time), faults until `faultMs`, calm for `quietMs` more. */
  warmupMs: number;
  faultMs: number;
  quietMs: number;
  events: FeatureEvent[];
  /**
   * The preferred leader (issue #28), in some runs: each replica's `priority` (ties on purpose). After
   * the quiet phase the world stays calm (no operator, no new work) until the placement has been
   * settled for `holdMs` (nothing may move meanwhile), at most `settleMs`, before every replica
   * stops (priority-check.ts).
   */
  priority?: { priorities: number[]; settleMs: number; holdMs: number };
  /**
   * Job control (issue #28), in some runs with jobs: operators pause, resume and run jobs now from
   * any replica, through the service's calls (job-control.ts); every replica's runtimes then keep
   * the job board in the store.
   */
  jobControl?: { commands: JobCommand[] };
}

/** An operator's job command, issued on replica `node` for job `job` (an index into `jobs`). */
export interface JobCommand {
  at: number;
  node: number;
  job: number;
  op: 'pause' | 'resume' | 'run-now';
}

export type FeatureEvent =
  | { kind: 'partition'; at: number; node: number; ms: number; mode: 'error' | 'blackhole' }
  | { kind: 'pause'; at: number; node: number; ms: number }
  | { kind: 'crash' | 'stop'; at: number; node: number; restartAfterMs: number }
  /** stop() while the replica's connection is black-holed (bytes stop, the socket stays open). */
  | { kind: 'stop-blackholed'; at: number; node: number; restartAfterMs: number }
  /** A leader takes a handover request while long work runs, then loses the store during the drain. */
  | { kind: 'cut-drain'; at: number; election: number; ms: number }
  /** `election` -1: one of the elections of the replica that leads the most (spread's target too). */
  | { kind: 'operator'; at: number; node: number; election: number; to: number | undefined }
  /** A directed request of `election` to the replica of its last `cut-drain`, from any replica. */
  | { kind: 'operator-back'; at: number; election: number }
  | { kind: 'add' | 'remove'; at: number; election: number };

export function featureScenarioOf(seed: number): FeatureScenario {
  const rng = new Rng(seed ^ 0x5bd1e995);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(rng.next() * values.length)] as T;
  const int = (min: number, max: number) => Math.floor(rng.between(min, max + 1));
  // Now and then a lease over an hour (SQL, Redis and etcd accept up to 24 h): cheap on a simulated clock.
  const lease = rng.chance(0.1) ? 7_200_000 : pick([2_000, 3_000, 15_000]);
  const renewDeadlineMs = Math.round(lease * (1 - rng.between(0.3, 0.4)));
  const renewIntervalMs = Math.round(renewDeadlineMs / rng.between(3, 5));
  const retryIntervalMs = Math.round(lease * rng.between(0.1, 0.3));
  const nodes = int(3, 4);
  // Spread needs a replica leading 2 more than another: more elections than replicas.
  const standby = rng.chance(0.3)
    ? {
        activeFollowers: int(1, 2),
        // Near the hour the option allows: the reservation of a directed handover must still be written.
        standbyPollMs: rng.chance(0.5)
          ? 3_600_000
          : Math.min(3_600_000, Math.round(retryIntervalMs * rng.between(2, 5))),
      }
    : undefined;
  const elections = int(3, 6);
  const jobs: FeatureScenario['jobs'] = [];
  const longPeriod = lease > 100_000;
  for (let e = 0; e < elections; e++) {
    for (let j = int(0, 1); j > 0; j--) jobs.push({ election: e, label: `Job${e}x${j}.run`, periodS: period() });
  }
  // Two providers both named `Jobs` with `run()`, once per tick, in one election.
  if (rng.chance(0.3)) {
    const election = int(0, elections - 1);
    const periodS = period();
    jobs.push({ election, label: 'Jobs.run', periodS });
    jobs.push({ election, label: 'Jobs.run', periodS: rng.chance(0.5) ? periodS : period() });
  }
  function period(): number {
    return longPeriod ? 600 : pick([1, 2, 5]);
  }
  // Calm first (everyone starts; spread moves elections off the first replica to start, racing
  // operators' requests), then faults, then calm again until every replica stops.
  const warmupMs = Math.round(lease * rng.between(3, 6));
  const faultMs = warmupMs + Math.round(lease * rng.between(6, 14));
  const quietMs = Math.round(lease * rng.between(10, 20));
  const callTimeout = renewDeadlineMs - renewIntervalMs;
  const events: FeatureEvent[] = [];
  const at = () => Math.round(rng.between(warmupMs, faultMs));
  for (let i = int(1, 6); i > 0; i--) {
    const node = int(0, nodes - 1);
    const kind = pick(['partition', 'pause', 'crash', 'stop', 'stop-blackholed', 'cut-drain', 'cut-drain'] as const);
    if (kind === 'partition')
      events.push({
        kind,
        at: at(),
        node,
        ms: Math.round(10 + rng.next() * 2 * lease),
        mode: pick(['error', 'blackhole']),
      });
    else if (kind === 'pause') events.push({ kind, at: at(), node, ms: Math.round(10 + rng.next() * lease) });
    else if (kind === 'cut-drain') {
      const election = int(0, elections - 1);
      events.push({ kind, at: at(), election, ms: Math.round(renewDeadlineMs * rng.between(1.1, 2)) });
      // Later, an operator hands that election back to the replica whose handover was abandoned.
      events.push({ kind: 'operator-back', at: faultMs + Math.round(rng.between(0.1, 0.5) * quietMs), election });
    } else events.push({ kind, at: at(), node, restartAfterMs: Math.round(rng.next() * lease) });
  }
  // Operators act throughout; the ones in the quiet phase are held to the request bound.
  for (let i = int(3, 8); i > 0; i--) {
    const to = rng.chance(0.7) ? int(0, nodes - 1) : undefined;
    const phase = rng.next();
    const when = phase < 0.2 ? at() : faultMs + Math.round(rng.between(0.1, 0.6) * quietMs);
    events.push({ kind: 'operator', at: when, node: int(0, nodes - 1), election: int(0, elections - 1), to });
  }
  // While spread moves elections off the first replica to start (it won them all), operators ask
  // that very replica for one of its elections: spread asks it too, in the same request slot.
  for (let i = int(2, 4); i > 0; i--) {
    const when = Math.round(rng.between(1.5 * retryIntervalMs, Math.min(warmupMs, 1.5 * lease)));
    const to = rng.chance(0.9) ? int(0, nodes - 1) : undefined;
    events.push({ kind: 'operator', at: when, node: int(0, nodes - 1), election: -1, to });
  }
  if (rng.chance(0.4)) events.push({ kind: 'add', at: at(), election: elections });
  if (rng.chance(0.3)) events.push({ kind: 'remove', at: at(), election: int(1, elections - 1) });
  events.sort((a, b) => a.at - b.at);
  const priority = priorityOf(seed, nodes, lease, standby !== undefined);
  const jobControl = jobControlOf(seed, { nodes, jobs, lease, warmupMs, faultMs, quietMs, standby: !!standby });
  return {
    seed,
    nodes,
    timings: { leaseDurationMs: lease, renewDeadlineMs, renewIntervalMs, retryIntervalMs },
    warmupMs,
    elections,
    ...(standby ? { standby } : {}),
    spread: rng.chance(0.85),
    // Half the time a drain that can outlast the term (the abandoned handover of defect 1).
    shutdownTimeoutMs: Math.round(
      rng.chance(0.5) ? renewDeadlineMs * rng.between(1.2, 2) : renewIntervalMs * rng.between(0.5, 2),
    ),
    stuckAfterMs: Math.round(renewIntervalMs * 2),
    resignWhenStuck: rng.chance(0.5),
    work: {
      gapMs: Math.round(renewIntervalMs * rng.between(0.3, 2)),
      maxMs: Math.round(renewIntervalMs * 1.5),
      stuck: rng.chance(0.4) ? 0.03 : 0,
      stuckMs: Math.round(renewIntervalMs * rng.between(3, 6)),
    },
    jobs,
    rates: Array.from({ length: nodes }, () => 1 + rng.between(-MAX_DRIFT, MAX_DRIFT)),
    skewMs: Array.from({ length: nodes }, () => Math.round(rng.between(-300, 300))),
    net: {
      latencyMs: int(0, 20),
      error: rng.between(0, 0.1),
      lostReply: rng.between(0, 0.05),
      duplicate: rng.between(0, 0.05),
      slow: rng.between(0, 0.03),
      slowMs: Math.round(rng.between(0.5, 2) * callTimeout),
      deaf: 0,
      lostPush: rng.between(0, 0.3),
    },
    faultMs,
    quietMs,
    events,
    ...(priority ? { priority } : {}),
    ...(jobControl ? { jobControl } : {}),
  };
}

/**
 * Priorities for about half the runs with leases of seconds, from their own draws (a run without
 * them replays as before priorities existed): small values, so replicas tie often (equal priorities
 * must never move), now and then a negative one. Settled, the placement is held for 5 leases; it
 * must settle within 25 (measured: within 0.7 of a lease of the quiet phase's end in every run of the
 * default campaign; a rule that keeps a follower from asking leaves it unsettled). With standby followers it need not settle (a standby hears of a holder only every
 * `standbyPollMs`): the calm lasts the 5 leases only, for the no-flapping check.
 */
function priorityOf(seed: number, nodes: number, lease: number, standby: boolean): FeatureScenario['priority'] {
  const rng = new Rng(seed ^ 0x2c1b3c6d);
  if (!rng.chance(0.5) || lease > 100_000) return undefined;
  const values = [-1, 0, 0, 1, 2, 2, 5];
  const priorities = Array.from({ length: nodes }, () => values[Math.floor(rng.next() * values.length)] as number);
  const holdMs = 5 * lease;
  return { priorities, settleMs: standby ? holdMs : 25 * lease, holdMs };
}

/**
 * Job commands for about half the runs with jobs, from their own draws (a run without them replays
 * as before job control existed). A few strike anywhere in the fault phase (safety only: a run-now
 * runs at most once, only on a leader); in the quiet phase, once the faults' leases have expired, a
 * pause held for a few leases then (mostly) resumed, and run-nows — of that job while paused too
 * (a run-now runs a paused job). Sometimes a pause in the warm-up, so leaders elected later must
 * honour a pause recorded before their term.
 */
function jobControlOf(
  seed: number,
  s: {
    nodes: number;
    jobs: FeatureScenario['jobs'];
    lease: number;
    warmupMs: number;
    faultMs: number;
    quietMs: number;
    standby: boolean;
  },
): FeatureScenario['jobControl'] {
  const rng = new Rng(seed ^ 0x6a09e667);
  if (s.jobs.length === 0 || !rng.chance(0.5)) return undefined;
  const int = (min: number, max: number) => Math.floor(rng.between(min, max + 1));
  const job = () => int(0, s.jobs.length - 1);
  const node = () => int(0, s.nodes - 1);
  const commands: JobCommand[] = [];
  const op = () => (['pause', 'resume', 'run-now'] as const)[int(0, 2)] as JobCommand['op'];
  if (rng.chance(0.3))
    commands.push({ at: Math.round(rng.between(0.3, 0.9) * s.warmupMs), node: node(), job: job(), op: 'pause' });
  for (let i = int(0, 4); i > 0; i--)
    commands.push({ at: Math.round(rng.between(s.warmupMs, s.faultMs)), node: node(), job: job(), op: op() });
  // Quiet: after the leases of replicas lost in the faults expired (four leases with standby).
  const settled = s.faultMs + (s.standby ? 4.2 : 1.2) * s.lease;
  const quietAt = (from: number, to: number) =>
    Math.round(settled + rng.between(from, to) * (s.faultMs + s.quietMs - settled));
  const paused = job();
  const pauseAt = quietAt(0, 0.3);
  commands.push({ at: pauseAt, node: node(), job: paused, op: 'pause' });
  if (rng.chance(0.8))
    commands.push({ at: Math.round(pauseAt + rng.between(2, 5) * s.lease), node: node(), job: paused, op: 'resume' });
  // A job paused since the warm-up or the faults is resumed too, now and then.
  if (rng.chance(0.5)) commands.push({ at: quietAt(0, 0.5), node: node(), job: job(), op: 'resume' });
  for (let i = int(1, 3); i > 0; i--)
    commands.push({ at: quietAt(0, 0.5), node: node(), job: rng.chance(0.4) ? paused : job(), op: 'run-now' });
  commands.sort((a, b) => a.at - b.at);
  return { commands };
}
