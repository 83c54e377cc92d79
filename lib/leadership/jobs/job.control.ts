import type { Observable } from 'rxjs';
import type { LeadershipEvent } from '../../election/elector.js';
import { recordStore } from '../../election/job-board.calls.js';
import { JOB_BOARD_KEY, type JobBoard } from '../../election/job-board.js';
import { encodeJobCatalogue, JOB_CATALOGUE_KEY } from '../../election/job-history.js';
import type { RenewalRider } from '../../election/renewal.js';
import { errorMessage, FatalLeaseStoreError } from '../../shared/errors.js';
import { stateUnsupportedError, supportsRecords, supportsState } from '../../stores/lease-store.capabilities.js';
import type { LeaseStore } from '../../stores/lease-store.js';
import type { LeaderElectionStatus } from '../election.handle.js';
import type { LeaderWork } from '../leader-work.js';
import { leadershipMessages } from '../leadership.messages.js';
import { catalogueEntry, type JobDefinition } from './job.definition.js';
import { JobRuns } from './job.runs.js';
import { type BoardHost, iso, JobBoardView } from './job-board.view.js';
import { JobHistoryBuffer, type JobStateAccess } from './job-history.buffer.js';
import { RunNowClaims } from './run-now.claims.js';

const messages = leadershipMessages.jobs;

/** What job control reads of its election (the runtime). */
export interface JobHost extends BoardHost, JobStateAccess {
  readonly identity: string;
  readonly events$: Observable<LeadershipEvent>;
  readonly work: LeaderWork;
  /** Leading right now (before the deadline, not stepping down). */
  isLeader(): boolean;
}

/** What a scheduled call of a job may do now: run, or why not (a promise: the term's first board read is under way). */
export type JobGate = true | 'paused' | 'unread' | Promise<unknown>;

/** Job control's part of `status()`. */
export type JobsStatus = NonNullable<LeaderElectionStatus['jobs']>;

/**
 * One election's jobs on this replica (issue 28): the registry the explorer fills, and — while this
 * replica leads — the leader's side of job control: the gate every scheduled call passes (no job
 * runs in a term before the board was read in it; a paused job is skipped, from memory, with no
 * store call), run-now commands claimed then run once through the leader-only path (run-now.claims.ts),
 * each run recorded in the history, and the catalogue published once per term. Off (every job runs as
 * before) when the store keeps no shared records or leader state.
 */
export class JobControl {
  private readonly byName = new Map<string, JobDefinition>();
  private readonly byMethod = new Map<(...args: unknown[]) => unknown, JobDefinition>();
  /** The store when it has both capabilities job control needs; undefined: job control is off. */
  readonly store?: LeaseStore;
  private readonly board?: JobBoardView;
  private readonly claims?: RunNowClaims;
  private readonly history: JobHistoryBuffer;
  readonly runs: JobRuns;
  private catalogueTerm?: number;
  private skippedWhilePaused = 0;
  /** Per paused job, the pause last logged at debug (a skip is logged once per pause). */
  private readonly loggedPauses = new Map<string, unknown>();
  /** Jobs with a call waiting for the term's first read of the board. */
  private readonly waiting = new Set<string>();
  private warnedUnsupported = false;
  /** A store that lacks a capability job control needs (for the startup warning and the callers' error). */
  private readonly unsupported?: LeaseStore;

  constructor(
    private readonly host: JobHost,
    store: LeaseStore | undefined,
    private readonly logger: { log(message: string): void; warn(message: string): void; error(message: string): void },
    /** Puts a rider on the elector's renewals (absent: the testing kit's elector). */
    carry?: (rider: RenewalRider) => unknown,
  ) {
    if (store && supportsRecords(store) && supportsState(store)) {
      this.store = store;
      this.board = new JobBoardView(host, store, logger, (job) => this.byName.has(job));
    } else {
      this.unsupported = store;
    }
    this.history = new JobHistoryBuffer(host, logger);
    this.runs = new JobRuns(host, this.history);
    if (this.store) this.claims = new RunNowClaims(host, this.store, this.byName, this.runs, logger);
    host.events$.subscribe((event) => {
      if (!this.board || this.byName.size === 0 || event.term === undefined || event.type !== 'elected') return;
      // The term's first read, before any job runs; later reads ride on the renewals (the rider).
      const term = event.term;
      void this.board.read(term).then((read) => read && this.afterRead(read, term));
    });
    if (this.board) carry?.(this.rider());
  }

  /**
   * Startup: registers `job`. The same method again (another instance of its class) is the same job,
   * kept once; another method under the same name in this election fails, naming both.
   */
  register(job: JobDefinition): void {
    const known = this.byName.get(job.name);
    if (known) {
      if (known.method === job.method) return;
      throw new Error(messages.nameClash(job.name, this.host.election, known.owner, job.owner));
    }
    this.byName.set(job.name, job);
    // Job control off: the calls take the plain leader-only path (nothing to gate, nowhere to record).
    if (this.board) this.byMethod.set(job.method, job);
    this.host.work.declareJob(job.label);
    if (this.unsupported && !this.warnedUnsupported) {
      this.warnedUnsupported = true;
      this.logger.warn(messages.controlUnsupported(this.host.election, this.unsupported.name));
    }
  }

  /**
   * The store, for the callers' commands; when job control is off, a FatalLeaseStoreError saying
   * which capability the store lacks (the testing kit has no store at all).
   */
  requireStore(): LeaseStore {
    if (this.store) return this.store;
    const { unsupported } = this;
    if (!unsupported) throw new FatalLeaseStoreError(messages.noStore(this.host.election));
    recordStore(unsupported);
    throw stateUnsupportedError(unsupported);
  }

  /** The job `name`, if this replica runs it. */
  get(name: string): JobDefinition | undefined {
    return this.byName.get(name);
  }

  /** Every job of the election on this replica, in registration order. */
  all(): JobDefinition[] {
    return [...this.byName.values()];
  }

  /** The job whose (undecorated) method this is; undefined for any other `@LeaderOnly` method. Hot path: one Map lookup. */
  of(method: (...args: unknown[]) => unknown): JobDefinition | undefined {
    return this.byMethod.size === 0 ? undefined : this.byMethod.get(method);
  }

  /**
   * Whether a scheduled call of `job` may run now, on a leader (the caller checked `isLeader()`):
   * decided from the board read in this term, without a store call; before the term's first read
   * has come in, the promise of that read (the caller re-decides when it settles).
   */
  gate(job: JobDefinition): JobGate {
    const { board } = this;
    if (!board) return true;
    const { term } = this.host;
    const known = board.in(term);
    if (known) return Object.hasOwn(known.paused, job.name) ? 'paused' : true;
    // One call per job waits for the read; the others are skipped, so a slow read releases no burst.
    if (term === undefined || board.failedIn(term) || this.waiting.has(job.name)) return 'unread';
    this.waiting.add(job.name);
    return this.ready().finally(() => this.waiting.delete(job.name));
  }

  /** Resolves once the board was read in the current term, or that read failed (at once when either is known). */
  async ready(): Promise<void> {
    const { board } = this;
    const { term } = this.host;
    if (!board || term === undefined || board.in(term) || board.failedIn(term)) return;
    const read = await board.read(term);
    if (read) this.afterRead(read, term);
  }

  /**
   * A scheduled call skipped by the gate: counted (status, metrics); a skip for an unread board is
   * warned of once per job per failed read. True when a paused skip is worth a debug line (the first
   * since the job's pause changed).
   */
  skipped(job: JobDefinition, reason: 'paused' | 'unread'): boolean {
    this.host.work.countJobSkipped(job.label, reason);
    if (reason === 'unread') {
      this.board?.warnUnread(job.name);
      return false;
    }
    this.skippedWhilePaused += 1;
    const pause = this.board?.in(this.host.term)?.paused[job.name];
    if (this.loggedPauses.get(job.name) === pause) return false;
    this.loggedPauses.set(job.name, pause);
    return true;
  }

  /** The pause of `job` as read in this term, for the skip's debug line. */
  pauseOf(job: JobDefinition): { by: string; at: number; reason?: string } | undefined {
    return this.board?.in(this.host.term)?.paused[job.name];
  }

  status(): { jobs?: JobsStatus } {
    if (this.byName.size === 0) return {};
    const { term } = this.host;
    const board = this.board?.in(this.host.isLeader() ? term : undefined);
    const readAt = this.board?.readAt(term);
    return {
      jobs: {
        count: this.byName.size,
        paused: board ? Object.keys(board.paused).filter((job) => this.byName.has(job)) : null,
        skippedWhilePaused: this.skippedWhilePaused,
        boardReadAt: board && readAt !== undefined ? iso(readAt) : null,
      },
    };
  }

  /**
   * Before a release (shutdown, honoured handover), once the drain is over: writes the runs not yet
   * recorded, within `boundMs` (the release does not wait longer; the writes stay bounded by the term).
   * Undefined when there is nothing to write: the step-down then goes on in the same turn.
   */
  beforeRelease(boundMs: number): Promise<void> | undefined {
    if (!this.board || !this.history.changed) return undefined;
    const { clock } = this.host;
    let timer: unknown;
    const bound = new Promise<void>((resolve) => {
      timer = clock.setTimeout(resolve, boundMs);
    });
    return Promise.race([this.history.flushAll(), bound]).finally(() => clock.clearTimeout(timer));
  }

  /**
   * What rides on each renewal (issue 29): the board brought back every read turn, the history
   * the buffer gathered since the last renewal carried — no store call of their own.
   */
  private rider(): RenewalRider {
    return {
      load: (term, turn) =>
        this.byName.size === 0
          ? undefined
          : {
              ...(turn.write ? { writeState: this.history.load(term) } : {}),
              ...(turn.read ? { readRecords: [JOB_BOARD_KEY] } : {}),
            },
      unload: (term, outcome) => {
        this.history.unload(term, outcome.writeErrors);
        const read = this.board?.received(term, outcome);
        if (read) this.afterRead(read, term);
      },
    };
  }

  /** After a successful read: the catalogue once per term, then the run-now commands of our jobs. */
  private afterRead(board: JobBoard, term: number): void {
    if (this.catalogueTerm !== term) void this.writeCatalogue(term);
    this.claims?.seen(board, term);
  }

  private async writeCatalogue(term: number): Promise<void> {
    this.catalogueTerm = term;
    const catalogue = encodeJobCatalogue(this.host.identity, this.all().map(catalogueEntry));
    try {
      await this.host.writeTickRecord(catalogue, JOB_CATALOGUE_KEY);
    } catch (error) {
      // Tried again after the next read of this term.
      if (this.catalogueTerm === term) this.catalogueTerm = undefined;
      if (this.host.term === term) this.logger.warn(messages.catalogueFailed(this.host.election, errorMessage(error)));
    }
  }
}
