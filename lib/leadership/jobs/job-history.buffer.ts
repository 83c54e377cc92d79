import {
  encodeJobHistory,
  historyOrFresh,
  type JobRun,
  jobHistoryKey,
  mergeJobRun,
  sameRun,
} from '../../election/job-history.js';
import { errorMessage, LeaseLostError } from '../../shared/errors.js';
import type { LeaderStateEntry } from '../../stores/lease-store.js';
import { leadershipMessages } from '../leadership.messages.js';

const messages = leadershipMessages.jobs;

/** The election's leader state, as the history is kept in it. */
export interface JobStateAccess {
  readonly election: string;
  /** The term we lead (stepping down included), else undefined. */
  readonly term: number | undefined;
  readState<T = unknown>(key?: string): Promise<LeaderStateEntry<T> | undefined>;
  /** The library's own fenced write (the public writeState refuses `jobs:` keys). */
  writeTickRecord(value: unknown, key: string): Promise<void>;
}

/**
 * The leader's run records, buffered between renewals: a run's start and its finish are noted here
 * (the finish replaces the start), and {@link flush} writes each changed job's history once — one
 * read of it at its first write in a term (another leader may have written since), then one fenced
 * write per changed job. So a job running every 50 ms costs one write per renew interval, not two
 * per run. Runs noted while no term of ours can write them (the lease lost) wait for our next term;
 * at most the last 20 per job are kept.
 */
export class JobHistoryBuffer {
  /** Per job, the runs not written yet (newest first). */
  private pending = new Map<string, JobRun[]>();
  /** Per job, its history as stored by us in `storedTerm` (we are its only writer during our term). */
  private readonly stored = new Map<string, JobRun[]>();
  private storedTerm?: number;
  private flushing?: Promise<void>;

  constructor(
    private readonly state: JobStateAccess,
    private readonly logger: { warn(message: string): void },
  ) {}

  /** Notes a run (its start, or its finish replacing the start). */
  add(run: JobRun): void {
    this.pending.set(run.job, mergeJobRun(this.pending.get(run.job) ?? [], run));
  }

  /** True while runs wait to be written. */
  get changed(): boolean {
    return this.pending.size > 0;
  }

  /** Writes what changed; a flush under way is joined, not doubled (a renewal never queues a second one). */
  flush(): Promise<void> {
    if (!this.flushing && this.pending.size > 0) {
      const flushing = this.writeChanged().finally(() => {
        if (this.flushing === flushing) this.flushing = undefined;
      });
      this.flushing = flushing;
    }
    return this.flushing ?? Promise.resolve();
  }

  /** Before a release: the flush under way, then one more for the runs that finished meanwhile. */
  async flushAll(): Promise<void> {
    await this.flushing;
    await this.flush();
  }

  /** Runs that failed to write, back in the buffer unless a newer record of the same run came meanwhile. */
  private requeue(job: string, runs: JobRun[]): void {
    const newer = this.pending.get(job) ?? [];
    const older = runs.filter((run) => !newer.some((other) => sameRun(other, run)));
    this.pending.set(
      job,
      older.reduceRight<JobRun[]>((all, run) => mergeJobRun(all, run), newer),
    );
  }

  private async writeChanged(): Promise<void> {
    const { term } = this.state;
    if (term === undefined) return;
    if (this.storedTerm !== term) {
      this.stored.clear();
      this.storedTerm = term;
    }
    const batch = this.pending;
    this.pending = new Map();
    await Promise.all([...batch].map(([job, runs]) => this.write(job, runs, term)));
  }

  private async write(job: string, runs: JobRun[], term: number): Promise<void> {
    const { election } = this.state;
    const key = jobHistoryKey(job);
    try {
      let history = this.stored.get(job);
      if (history === undefined) {
        const entry = await this.state.readState(key);
        history = historyOrFresh(election, job, entry?.value, (error) =>
          this.logger.warn(messages.historyReplaced(error.message)),
        );
      }
      // Oldest first, so a finish replaces its own start.
      const merged = runs.reduceRight<JobRun[]>((all, run) => mergeJobRun(all, run), history);
      await this.state.writeTickRecord(encodeJobHistory(merged), key);
      if (this.storedTerm === term) this.stored.set(job, merged);
    } catch (error) {
      // Kept for the next flush (a later renewal, or our next term): merged with what came meanwhile.
      this.requeue(job, runs);
      if (!(error instanceof LeaseLostError)) {
        this.logger.warn(messages.historyWriteFailed(election, job, errorMessage(error)));
      }
    }
  }
}
