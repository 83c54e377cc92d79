import type { JobRun } from '../../election/job-history.js';

// One definition of a run: the election layer's stored record is the public type.
export type { JobRun };

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
