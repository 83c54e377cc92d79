import {
  encodeJobHistory,
  historyOrFresh,
  type JobRun,
  jobHistoryKey,
  mergeJobRun,
  sameRun,
} from '../../election/job-history.js';
import { errorMessage, LeaseLostError, type LeaseStoreError } from '../../shared/errors.js';
import type { LeaderStateEntry, StateWrite } from '../../stores/lease-store.js';
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

/** Job histories one renewal carries at most (each at most 20 runs of a few hundred bytes). */
export const MAX_HISTORIES_PER_RENEWAL = 16;

/**
 * The leader's run records, buffered between renewals: a run's start and its finish are noted here
 * (the finish replaces the start), and each renewal carries every changed job's history once
 * ({@link load}: one fenced write per changed job, in the renewal's own store call where the store
 * folds). A job's stored history is read once per term (another leader may have written since),
 * before its first write. So a job running every 50 ms costs no store call of its own. Runs noted
 * while no term of ours can write them (the lease lost) wait for our next term; at most the last 20
 * per job are kept. Before a release, {@link flushAll} writes what is left with separate calls.
 */
export class JobHistoryBuffer {
  /** Per job, the runs not written yet (newest first). */
  private pending = new Map<string, JobRun[]>();
  /** Per job, its history as stored by us in `storedTerm` (we are its only writer during our term). */
  private readonly stored = new Map<string, JobRun[]>();
  private storedTerm?: number;
  private flushing?: Promise<void>;
  /** What the renewal in flight carries, per job: the runs, and the history they make. */
  private carried = new Map<string, { runs: JobRun[]; merged: JobRun[] }>();
  /** Settles when the renewal carrying `carried` is over (a store that does not fold writes beside the loop). */
  private landing?: { promise: Promise<void>; resolve: () => void };
  /** Jobs whose stored history is being read for `storedTerm`. */
  private readonly priming = new Set<string>();

  constructor(
    private readonly state: JobStateAccess,
    private readonly logger: { warn(message: string): void },
  ) {}

  /** Notes a run (its start, or its finish replacing the start); the job's stored history is read if not yet in this term. */
  add(run: JobRun): void {
    this.pending.set(run.job, mergeJobRun(this.pending.get(run.job) ?? [], run));
    const { term } = this.state;
    if (term === undefined) return;
    this.enterTerm(term);
    if (!this.stored.has(run.job)) this.prime(run.job, term);
  }

  /** True while runs wait to be written (or ride on a renewal under way). */
  get changed(): boolean {
    return this.pending.size > 0 || this.carried.size > 0;
  }

  /**
   * Just before a renewal of `term`: the histories it carries, one write per changed job whose stored
   * history is known in this term (the others' are read now, and ride on a later renewal).
   */
  load(term: number | undefined): StateWrite[] {
    if (term === undefined || this.state.term !== term) return [];
    this.enterTerm(term);
    const writes: StateWrite[] = [];
    for (const [job, runs] of this.pending) {
      // A renewal must never fail for its cargo (an etcd txn holds 128 operations, a request 1.5 MiB):
      // the rest waits for the next renewal (a written job goes to the back of the queue).
      if (writes.length >= MAX_HISTORIES_PER_RENEWAL) break;
      const history = this.stored.get(job);
      if (history === undefined) {
        this.prime(job, term);
        continue;
      }
      const merged = withRuns(history, runs);
      this.carried.set(job, { runs, merged });
      this.pending.delete(job);
      writes.push({ key: jobHistoryKey(job), value: encodeJobHistory(merged) });
    }
    if (writes.length > 0) {
      let resolve = () => {};
      const promise = new Promise<void>((done) => {
        resolve = done;
      });
      this.landing = { promise, resolve };
    }
    return writes;
  }

  /** The renewal that carried the last {@link load} is over: the writes in `failed` go back to the buffer. */
  unload(term: number, failed: Map<string, LeaseStoreError> | undefined): void {
    const carried = this.carried;
    this.carried = new Map();
    this.landing?.resolve();
    this.landing = undefined;
    for (const [job, { runs, merged }] of carried) {
      const error = failed?.get(jobHistoryKey(job));
      if (error === undefined) {
        if (this.storedTerm === term) this.stored.set(job, merged);
        continue;
      }
      this.requeue(job, runs);
      if (error.kind !== 'lost') {
        this.logger.warn(messages.historyWriteFailed(this.state.election, job, errorMessage(error)));
      }
    }
  }

  /** Writes what changed with separate calls (before a release); a flush under way is joined, not doubled. */
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
    // What a renewal carries right now lands first, or comes back to the buffer to be written here.
    await this.landing?.promise;
    await this.flushing;
    await this.flush();
  }

  /** Runs that failed to write, back in the buffer unless a newer record of the same run came meanwhile. */
  private requeue(job: string, runs: JobRun[]): void {
    const newer = this.pending.get(job) ?? [];
    const older = runs.filter((run) => !newer.some((other) => sameRun(other, run)));
    this.pending.set(job, withRuns(newer, older));
  }

  private enterTerm(term: number): void {
    if (this.storedTerm === term) return;
    this.stored.clear();
    this.storedTerm = term;
  }

  /** Reads `job`'s stored history for `term`, once (a failure: tried again at the next renewal). */
  private prime(job: string, term: number): void {
    if (this.priming.has(job)) return;
    this.priming.add(job);
    void this.storedHistory(job)
      .then(
        (history) => {
          if (this.storedTerm === term && !this.stored.has(job)) this.stored.set(job, history);
        },
        (error: unknown) => {
          if (this.state.term === term && !(error instanceof LeaseLostError)) {
            this.logger.warn(messages.historyWriteFailed(this.state.election, job, errorMessage(error)));
          }
        },
      )
      .finally(() => this.priming.delete(job));
  }

  private async storedHistory(job: string): Promise<JobRun[]> {
    const entry = await this.state.readState(jobHistoryKey(job));
    return historyOrFresh(this.state.election, job, entry?.value, (error) =>
      this.logger.warn(messages.historyReplaced(error.message)),
    );
  }

  private async writeChanged(): Promise<void> {
    const { term } = this.state;
    if (term === undefined) return;
    this.enterTerm(term);
    const batch = this.pending;
    this.pending = new Map();
    await Promise.all([...batch].map(([job, runs]) => this.write(job, runs, term)));
  }

  private async write(job: string, runs: JobRun[], term: number): Promise<void> {
    const { election } = this.state;
    const key = jobHistoryKey(job);
    try {
      const history = this.stored.get(job) ?? (await this.storedHistory(job));
      const merged = withRuns(history, runs);
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

/** `history` with `runs` (newest first) merged in, oldest first, so a finish replaces its own start. */
function withRuns(history: JobRun[], runs: JobRun[]): JobRun[] {
  return runs.reduceRight<JobRun[]>((all, run) => mergeJobRun(all, run), history);
}
