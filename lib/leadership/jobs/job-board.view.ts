import type { ElectorTimings } from '../../election/elector-options.js';
import { callTimeoutMs } from '../../election/elector-options.js';
import { readJobBoard } from '../../election/job-board.calls.js';
import { decodeJobBoard, JOB_BOARD_KEY, type JobBoard } from '../../election/job-board.js';
import type { RenewalOutcome } from '../../election/renewal.js';
import { type Clock, timeoutSignal } from '../../shared/clock.js';
import { errorMessage } from '../../shared/errors.js';
import type { LeaseStore } from '../../stores/lease-store.js';
import { leadershipMessages } from '../leadership.messages.js';

const messages = leadershipMessages.jobs;

/** What the view reads of its election. */
export interface BoardHost {
  readonly election: string;
  /** The term we lead, else undefined. */
  readonly term: number | undefined;
  /** Aborts when the term ends: a read outliving it is abandoned. */
  readonly signal: AbortSignal;
  readonly timings: Readonly<ElectorTimings>;
  readonly clock: Clock;
}

/**
 * The leader's knowledge of its election's job board, per term: read when the term starts (before
 * any job of the election runs in it), then brought back by the leader's renewals (every read turn:
 * see election/renewal.ts); a read bounded like a follower's call and by the term. What the gate
 * decides by is the board read in the CURRENT term only, so a pause recorded while another replica
 * led is never missed, and a skip never waits for the store once the term's first read is in. Logs each command it sees applied: who, what, when.
 */
export class JobBoardView {
  /** The board as last read in `term`. */
  private current?: { term: number; board: JobBoard; readAt: number };
  /** The board this replica applied last, in any term: what a new read is compared with for the log. */
  private applied?: JobBoard;
  private reading?: { term: number; promise: Promise<JobBoard | undefined> };
  /** The term whose last read failed; with no read of it that succeeded, its jobs are skipped until one does. */
  private failedTerm?: number;
  /** Jobs already warned of being skipped since the last failed read. */
  private readonly warned = new Set<string>();

  constructor(
    private readonly host: BoardHost,
    private readonly store: LeaseStore,
    private readonly logger: { log(message: string): void; error(message: string): void; warn(message: string): void },
    /** Whether this replica runs the job: only its own jobs' commands are logged. */
    private readonly runs: (job: string) => boolean,
  ) {}

  /** The board read in `term`; undefined when none was (yet, or the term is not ours). */
  in(term: number | undefined): JobBoard | undefined {
    const { current } = this;
    return current !== undefined && current.term === term ? current.board : undefined;
  }

  /** True when the last read in `term` failed and none succeeded since. */
  failedIn(term: number | undefined): boolean {
    return term !== undefined && this.failedTerm === term;
  }

  /** When the board was last read in `term` (epoch ms), else undefined. */
  readAt(term: number | undefined): number | undefined {
    return this.current?.term === term ? this.current?.readAt : undefined;
  }

  /**
   * Reads the board for `term` (joins a read of that term already under way). Resolves with the
   * board, or undefined when the read failed (logged: the election's jobs are skipped until a read
   * succeeds) or the term ended meanwhile. Never rejects.
   */
  read(term: number): Promise<JobBoard | undefined> {
    if (this.reading?.term === term) return this.reading.promise;
    const promise = this.readNow(term).finally(() => {
      if (this.reading?.promise === promise) this.reading = undefined;
    });
    this.reading = { term, promise };
    return promise;
  }

  /** A skip because the board could not be read: warned of once per job per failed read. */
  warnUnread(job: string): void {
    if (this.warned.has(job)) return;
    this.warned.add(job);
    this.logger.warn(messages.skippedUnread(job, this.host.election));
  }

  /**
   * What a renewal brought back (issue 29: the board rides on the leader's renewals): the board's
   * record (null: none written yet), applied as a read of `term` would be, or the separate read's
   * failure. Nothing new when the board was not asked for or the renewal itself failed.
   */
  received(term: number, outcome: RenewalOutcome): JobBoard | undefined {
    const record = outcome.records?.[JOB_BOARD_KEY];
    if (record !== undefined) return this.applyRead(term, decodeJobBoard(this.host.election, record?.value));
    if (outcome.readError) this.readFailed(term, outcome.readError);
    return undefined;
  }

  private async readNow(term: number): Promise<JobBoard | undefined> {
    const { host } = this;
    const { signal, dispose } = timeoutSignal(host.clock, callTimeoutMs(host.timings), host.signal);
    try {
      const { board } = await readJobBoard(this.store, host.election, signal);
      return this.applyRead(term, board);
    } catch (error) {
      this.readFailed(term, error);
      return undefined;
    } finally {
      dispose();
    }
  }

  /** A read of `term` succeeded: the board the gate decides by from now on (undefined: the term ended). */
  private applyRead(term: number, board: JobBoard): JobBoard | undefined {
    const { host } = this;
    if (host.term !== term) return undefined;
    this.logApplied(this.applied, board);
    this.applied = board;
    this.current = { term, board, readAt: host.clock.wallNow() };
    if (this.failedTerm === term) this.logger.log(messages.boardReadAgain(host.election));
    this.failedTerm = undefined;
    return board;
  }

  private readFailed(term: number, error: unknown): void {
    const { host } = this;
    if (host.term !== term) return;
    this.failedTerm = term;
    this.warned.clear();
    // Read once in this term already: the gate keeps deciding by that board (a pause is not
    // forgotten), so the jobs are not skipped; only what was recorded since waits.
    const readAt = this.readAt(term);
    this.logger.error(
      readAt === undefined
        ? messages.boardReadFailed(host.election, term, errorMessage(error))
        : messages.boardReadFailedAfterRead(host.election, term, errorMessage(error), iso(readAt)),
    );
  }

  /** Each pause and resume of one of our jobs that `board` shows and `previous` did not, logged once. */
  private logApplied(previous: JobBoard | undefined, board: JobBoard): void {
    const { election } = this.host;
    for (const [job, pause] of Object.entries(board.paused)) {
      if (!this.runs(job)) continue;
      const before = previous && Object.hasOwn(previous.paused, job) ? previous.paused[job] : undefined;
      if (before && before.at === pause.at && before.by === pause.by && before.reason === pause.reason) continue;
      this.logger.log(messages.pauseApplied(election, job, pause.by, iso(pause.at), pause.reason));
    }
    if (!previous) return;
    for (const job of Object.keys(previous.paused)) {
      if (Object.hasOwn(board.paused, job) || !this.runs(job)) continue;
      const resume = board.resumed && Object.hasOwn(board.resumed, job) ? board.resumed[job] : undefined;
      this.logger.log(messages.resumeApplied(election, job, resume?.by, resume ? iso(resume.at) : undefined));
    }
  }
}

export function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
