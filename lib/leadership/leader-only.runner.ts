import type { ElectionHandle } from './election.handle.js';
import type { ElectionRegistry } from './election.registry.js';
import type { ElectionRuntime } from './election-runtime.js';
import type { JobDefinition } from './jobs/job.definition.js';
import type { RunTrigger } from './jobs/job.runs.js';
import { leadershipMessages as messages } from './leadership.messages.js';
import type { LeaderOnlyTick, OncePerTickRunner } from './once-per-tick.runner.js';

const SCHEDULED: RunTrigger = { trigger: 'schedule' };

/**
 * What a `@LeaderOnly` method's calls share: built once, when the decorator is applied, so the hot
 * path (a skipped call above all) allocates nothing of its own. Only this file reads or writes its
 * skip-log fields.
 */
export interface LeaderOnlySite {
  label: string;
  /** The election that decides (undefined: the app's default election). */
  election: string | undefined;
  /** An `async` method: a skipped call answers with a promise of undefined. */
  isAsync: boolean;
  tick: LeaderOnlyTick | undefined;
  /** Whether the method is an HTTP route (read once, at the first call that asks). */
  isRoute(): boolean;
  /** The election and its change count at the last logged skip: repeats are not logged. */
  skipLoggedFor: object | undefined;
  skipLoggedAt: number;
}

/** A site of the decorator's making, with no skip logged yet. */
export function leaderOnlySite(
  site: Pick<LeaderOnlySite, 'label' | 'election' | 'isAsync' | 'tick' | 'isRoute'>,
): LeaderOnlySite {
  return { ...site, skipLoggedFor: undefined, skipLoggedAt: -1 };
}

/** What an application attaches to each instance that has `@LeaderOnly` methods (its binding). */
export interface LeaderOnlyBinding {
  /** Runs `method` on `self` with `args` if this app leads the site's election; otherwise skips (or refuses a route). */
  invoke(site: LeaderOnlySite, method: (...args: unknown[]) => unknown, self: unknown, args: unknown[]): unknown;
}

/** Where a skip is said: at debug level, and only when that level is on. */
export interface SkipLog {
  debugEnabled(): boolean;
  debug(message: string): void;
}

/**
 * The one place a `@LeaderOnly` call is decided: its election's runtime answers "leading?", and the
 * call runs there (tracked, counted, watched), goes through the once-per-tick runner, or is skipped
 * here. Nothing calls back up: the answer travels to the decorator's wrapper as the return value.
 */
export class LeaderOnlyRunner implements LeaderOnlyBinding {
  constructor(
    private readonly elections: ElectionRegistry,
    private readonly ticks: OncePerTickRunner,
    /** The 503 a route reached without the guard's consent throws (should leadership end between them). */
    private readonly refuseRoute: (election: ElectionHandle) => Error,
    private readonly log: SkipLog,
  ) {}

  invoke(site: LeaderOnlySite, method: (...args: unknown[]) => unknown, self: unknown, args: unknown[]): unknown {
    const runtime = this.elections.get(site.election);
    if (!runtime.isLeader()) return this.skip(runtime, site);
    const job = runtime.jobs.of(method);
    if (job !== undefined) return this.runJob(runtime, site, job, method, self, args);
    const { tick } = site;
    if (!tick) return runtime.work.runCall(site.label, method, self, args);
    return this.ticks.run(runtime, tick, method, self, args);
  }

  /**
   * A scheduled job's call on the leader: through job control's gate (paused: skipped and counted,
   * decided from the board already read in this term), and recorded in the job's history when it runs.
   */
  private runJob(
    runtime: ElectionRuntime,
    site: LeaderOnlySite,
    job: JobDefinition,
    method: (...args: unknown[]) => unknown,
    self: unknown,
    args: unknown[],
  ): unknown {
    const { jobs } = runtime;
    const gate = jobs.gate(job);
    const { tick } = site;
    if (gate === true) {
      if (tick) return this.ticks.run(runtime, tick, method, self, args, job);
      return jobs.runs.track(job, SCHEDULED, () => runtime.work.runCall(site.label, method, self, args));
    }
    // The term's first read of the board is under way: decide again once it is in (a promise, then).
    if (typeof gate === 'object') return gate.then(() => this.invoke(site, method, self, args));
    if (jobs.skipped(job, gate) && this.log.debugEnabled()) {
      const pause = jobs.pauseOf(job);
      const at = pause ? new Date(pause.at).toISOString() : undefined;
      this.log.debug(messages.jobs.pausedSkip(site.label, job.name, runtime.election, pause?.by, at, pause?.reason));
    }
    // A paused tick is recorded as handled, so it is neither counted lost nor caught up later.
    if (tick) return gate === 'paused' ? this.ticks.skipPaused(runtime, tick) : Promise.resolve(undefined);
    return site.isAsync ? Promise.resolve(undefined) : undefined;
  }

  /**
   * A call made while not leading: counted, refused with a 503 on a route, otherwise skipped and
   * logged at debug level once per change of the election's state. A follower skips every tick:
   * repeats are counted, not logged, so the hot path does not even ask the logger (Nest's level
   * check scans its level list: half a skip's cost on some hosts).
   */
  private skip(runtime: ElectionRuntime, site: LeaderOnlySite): unknown {
    runtime.work.countSkipped(site.label);
    if (site.isRoute()) throw this.refuseRoute(runtime);
    if (site.skipLoggedFor !== runtime || site.skipLoggedAt !== runtime.changes) {
      site.skipLoggedFor = runtime;
      site.skipLoggedAt = runtime.changes;
      if (this.log.debugEnabled())
        this.log.debug(messages.jobSkipped(site.label, runtime.election, runtime.isSteppingDown));
    }
    return site.isAsync || site.tick ? Promise.resolve(undefined) : undefined;
  }
}
