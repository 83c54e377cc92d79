import { callTimeoutMs, type ElectorTimings } from '../../election/elector-options.js';
import { pauseJobCommand, readJobBoard, resumeJobCommand, runNowCommand } from '../../election/job-board.calls.js';
import { readJobHistory } from '../../election/job-history.js';
import { type Clock, timeoutSignal } from '../../shared/clock.js';
import type { LeaseStore } from '../../stores/lease-store.js';
import { leadershipMessages } from '../leadership.messages.js';
import type { JobControl } from './job.control.js';
import { describeSchedule, type JobDefinition, nextRunAt } from './job.definition.js';
import type { JobCommandOptions, JobInfo, JobRun } from './job.types.js';
import { UnknownJobError } from './unknown-job.error.js';

const messages = leadershipMessages.jobs;

/** One election as job control sees it. */
export interface JobElection {
  readonly election: string;
  readonly identity: string;
  readonly timings: Readonly<ElectorTimings>;
  readonly jobs: JobControl;
}

/** The application's elections (its registry). */
export interface JobElections {
  get(name?: string): JobElection;
  values(): Iterable<JobElection>;
}

/**
 * The service's job-control calls (any replica, leader or not): commands go to the job board of the
 * job's election, reads come from the board and the leader's history. A name is checked against
 * this replica's own jobs before anything is sent. Each call is bounded like a follower's store call
 * (and by the caller's `signal`).
 */
export class JobOperations {
  constructor(
    private readonly elections: JobElections,
    private readonly clock: Clock,
  ) {}

  /** The jobs of `election` (default: of every election), with their pause and last run from the store. */
  async jobs(election?: string): Promise<JobInfo[]> {
    const elections = election === undefined ? [...this.elections.values()] : [this.elections.get(election)];
    const lists = await Promise.all(elections.filter((e) => e.jobs.all().length > 0).map((e) => this.list(e)));
    return lists.flat();
  }

  async pauseJob(name: string, options: JobCommandOptions & { reason?: string } = {}): Promise<void> {
    const { election, job, store } = this.find(name, options.election);
    const command = { ...this.origin(election, options), job: job.name, reason: options.reason };
    await this.bounded(election, options.signal, (signal) =>
      pauseJobCommand(store, election.election, command, signal),
    );
  }

  async resumeJob(name: string, options: JobCommandOptions = {}): Promise<void> {
    const { election, job, store } = this.find(name, options.election);
    const command = { ...this.origin(election, options), job: job.name };
    await this.bounded(election, options.signal, (signal) =>
      resumeJobCommand(store, election.election, command, signal),
    );
  }

  /** Resolves with the recorded command's id: the `commandId` of the run it causes. */
  async runJobNow(name: string, options: JobCommandOptions = {}): Promise<string> {
    const { election, job, store } = this.find(name, options.election);
    const command = { ...this.origin(election, options), job: job.name };
    const recorded = await this.bounded(election, options.signal, (signal) =>
      runNowCommand(store, election.election, command, signal),
    );
    return recorded.id;
  }

  async jobHistory(name: string, options: Pick<JobCommandOptions, 'election' | 'signal'> = {}): Promise<JobRun[]> {
    const { election, job, store } = this.find(name, options.election);
    return this.bounded(election, options.signal, (signal) =>
      readJobHistory(store, election.election, job.name, signal),
    );
  }

  /** Who asks (this replica unless `by`), and when: the module's clock, so a test's fake clock dates the commands too. */
  private origin(election: JobElection, options: JobCommandOptions): { by: string; at: number } {
    return { by: options.by ?? election.identity, at: this.clock.wallNow() };
  }

  private async list(election: JobElection): Promise<JobInfo[]> {
    const store = election.jobs.requireStore();
    const jobs = election.jobs.all();
    return this.bounded(election, undefined, async (signal) => {
      const [{ board }, ...histories] = await Promise.all([
        readJobBoard(store, election.election, signal),
        ...jobs.map((job) => readJobHistory(store, election.election, job.name, signal)),
      ]);
      const now = this.clock.wallNow();
      return Promise.all(
        jobs.map(async (job, index) => {
          const runs = (histories[index] ?? []) as JobRun[];
          const pause = Object.hasOwn(board.paused, job.name) ? board.paused[job.name] : undefined;
          const lastScheduled = runs.find((run) => run.trigger === 'schedule')?.startedAt;
          const next = await nextRunAt(job, now, lastScheduled);
          const info: JobInfo = {
            name: job.name,
            election: election.election,
            schedule: describeSchedule(job.schedule),
            paused: pause !== undefined,
          };
          if (pause) info.pause = pause;
          if (next !== undefined) info.nextRunAt = next;
          if (runs[0]) info.lastRun = runs[0];
          return info;
        }),
      );
    });
  }

  /**
   * The job `name` in `election` (default: whichever election runs it); UnknownJobError when this
   * replica runs none of that name. Throws at once (no store call) when the store cannot take commands.
   */
  private find(name: string, electionName?: string): { election: JobElection; job: JobDefinition; store: LeaseStore } {
    const candidates = electionName === undefined ? [...this.elections.values()] : [this.elections.get(electionName)];
    const found = candidates.filter((election) => election.jobs.get(name) !== undefined);
    if (found.length === 0) {
      const known = candidates.flatMap((election) => election.jobs.all().map((job) => job.name));
      throw new UnknownJobError(String(name), electionName, messages.unknownJob(String(name), electionName, known));
    }
    if (found.length > 1)
      throw new Error(
        messages.ambiguousJob(
          name,
          found.map((election) => election.election),
        ),
      );
    const election = found[0] as JobElection;
    return { election, job: election.jobs.get(name) as JobDefinition, store: election.jobs.requireStore() };
  }

  /** `call` with a signal that aborts after a follower's call timeout, or when `signal` does. */
  private async bounded<T>(
    election: JobElection,
    signal: AbortSignal | undefined,
    call: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const bound = timeoutSignal(this.clock, callTimeoutMs(election.timings), signal);
    try {
      return await call(bound.signal);
    } finally {
      bound.dispose();
    }
  }
}
