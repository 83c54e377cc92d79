import type { JobRun as StoredJobRun } from '../../election/job-history.js';

/**
 * One run of a job, as the leader that ran it recorded it in the store: what `jobHistory()` lists
 * (newest first) and `jobs()` shows as `lastRun`.
 */
export interface JobRun {
  /** The job's name. */
  job: string;
  /** When it started: epoch ms, on the leader's wall clock. */
  startedAt: number;
  /** When it ended (epoch ms); absent while `running`. */
  finishedAt?: number;
  /** How long it ran (ms); absent while `running`. */
  durationMs?: number;
  /**
   * `running` until its end is recorded (for good when its leader lost its lease first), then `ok`,
   * `error`, or `aborted` (it failed after its term's signal aborted).
   */
  outcome: 'ok' | 'error' | 'aborted' | 'running';
  /** The identity of the replica that ran it: the leader of `term`. */
  by: string;
  /** The term (fencing token) it ran in. */
  term: number;
  /** A once-per-tick job's scheduled fire time (epoch ms). */
  tick?: number;
  /** A scheduled run, or one an operator asked for (`runJobNow`, the CLI's `jobs run`). */
  trigger: 'schedule' | 'run-now';
  /** The id of the run-now command that caused it (what `runJobNow` resolved with). */
  commandId?: string;
  /** The error's message, at most 200 characters. */
  error?: string;
}

/** One job as `jobs()` lists it: this replica's registry, with what the store says about it. */
export interface JobInfo {
  /** The schedule's name (`@Cron(expr, { name })`, `@Interval(name, ms)`), else `Class.method`. */
  name: string;
  /** The election whose leader runs it. */
  election: string;
  /** For people: `cron 0 * * * * *`, `interval 5000 ms`, `timeout 1000 ms`. */
  schedule: string;
  /** Paused on the job board: the leader skips its scheduled runs (a run now still runs). */
  paused: boolean;
  /** While paused: who paused it, when and why. */
  pause?: {
    /** Why, as the operator gave it. */
    reason?: string;
    /** Who: a replica's identity, the `by` option, or `cli:<user>@<host>`. */
    by: string;
    /** When: epoch ms, on the requester's clock. */
    at: number;
  };
  /**
   * When the schedule next fires (epoch ms), computed on this replica: a cron job's next fire time,
   * an interval job's last scheduled start plus its interval; absent for a timeout or when unknown.
   * A paused job skips it.
   */
  nextRunAt?: number;
  /** Its latest run, as the leader that ran it recorded it (`by` names that leader, on every replica). */
  lastRun?: JobRun;
}

/** Options of the job-control calls of `LeaderElectionService` (`pauseJob`, `resumeJob`, `runJobNow`, `jobHistory`). */
export interface JobCommandOptions {
  /** The job's election, when several elections have a job of that name (default: whichever has it). */
  election?: string;
  /** Who asks, as the leader logs it (default: this replica's identity); a user name for an admin endpoint. */
  by?: string;
  /** Gives up when it aborts (each call is bounded like a follower's store call anyway). */
  signal?: AbortSignal;
}

// The public run is the stored one, documented: the two may not drift apart.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const sameShape: Same<JobRun, StoredJobRun> = true;
void sameShape;
