import type { JobRun, JobRunOutcome } from '../../election/job-history.js';
import { runErrorText } from '../../election/job-history.js';
import type { Clock } from '../../shared/clock.js';
import { isPromiseLike } from '../in-flight.tracker.js';
import type { JobDefinition } from './job.definition.js';

/** What a run record names: the replica and its term, on its clocks. */
export interface RunRecorderHost {
  readonly identity: string;
  readonly term: number | undefined;
  /** Aborts when the term ends: a run failing after that was aborted, not broken. */
  readonly signal: AbortSignal;
  readonly clock: Clock;
}

/** How a run came about. */
export type RunTrigger = Pick<JobRun, 'trigger' | 'commandId' | 'tick'>;

/**
 * Records the runs of an election's jobs as the leader makes them: the start (`running`) when the
 * call begins, the finish (`ok`, `error`, or `aborted` when it failed after its term's signal
 * aborted) with its duration when the call returns, throws or its promise settles. Notes both in
 * the history buffer, which writes them at the next renewal.
 */
export class JobRuns {
  /** Per job, the start of its last run here: a run is told from another by its start (sameRun). */
  private readonly lastStart = new Map<string, number>();

  constructor(
    private readonly host: RunRecorderHost,
    private readonly history: { add(run: JobRun): void },
  ) {}

  /** Runs `call` as a run of `job`, recorded; returns its result unchanged (a promise stays the same promise). */
  track<T>(job: JobDefinition, trigger: RunTrigger, call: () => T): T {
    const { host } = this;
    const { term, signal, clock } = host;
    if (term === undefined) return call();
    const started = clock.now();
    // Two runs of a job starting in one millisecond (overlapping calls) would be one record: the
    // later one is said to start a millisecond after.
    const startedAt = Math.max(clock.wallNow(), (this.lastStart.get(job.name) ?? 0) + 1);
    this.lastStart.set(job.name, startedAt);
    const run: JobRun = {
      job: job.name,
      startedAt,
      outcome: 'running',
      by: host.identity,
      term,
      ...(trigger.tick === undefined ? {} : { tick: trigger.tick }),
      trigger: trigger.trigger,
      ...(trigger.commandId === undefined ? {} : { commandId: trigger.commandId }),
    };
    this.history.add(run);
    const finish = (outcome: JobRunOutcome, error?: unknown) => {
      const durationMs = Math.max(0, Math.round(clock.now() - started));
      const failure = error === undefined ? {} : { error: runErrorText(error) };
      this.history.add({ ...run, finishedAt: clock.wallNow(), durationMs, outcome, ...failure });
    };
    const failed = (error: unknown) => finish(signal.aborted ? 'aborted' : 'error', error ?? 'rejected');
    let result: T;
    try {
      result = call();
    } catch (error) {
      failed(error);
      throw error;
    }
    if (isPromiseLike(result)) result.then(() => finish('ok'), failed);
    else finish('ok');
    return result;
  }
}
