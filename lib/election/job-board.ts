import { FatalLeaseStoreError } from '../shared/errors.js';
import { isStorableText } from '../shared/identity.js';
import { MAX_SHARED_RECORD_BYTES } from '../stores/lease-store.js';
import { electionMessages } from './election.messages.js';
import { hasShape, isMapOf, type Shape } from './job-shape.js';

const messages = electionMessages.jobs;

/**
 * The job board (issue 28): operators' commands to an election's leader-only jobs — pause, resume,
 * run now — kept in the election's shared record {@link JOB_BOARD_KEY}, which any replica and the CLI
 * may write (compare-and-set, job-board.calls.ts). The leader reads it, applies pauses, and claims
 * run-now commands by removing them (so each runs at most once, across failovers too). This file is
 * the board's shape and its pure changes; the store calls are job-board.calls.ts, the leader's run
 * records job-history.ts.
 */

/** The shared record of an election that holds its job board. */
export const JOB_BOARD_KEY = 'jobs';

/** A pause of one job: the leader skips its scheduled runs until it is resumed. */
export interface JobPause {
  /** Why, as the operator gave it. */
  reason?: string;
  /** Who paused it: a replica's identity or `cli:<user>@<host>`. */
  by: string;
  /** When, epoch ms, the requester's wall clock. */
  at: number;
}

/** Who resumed a job last, so the leader can log it (the pause itself is gone by then). */
export interface JobResume {
  by: string;
  at: number;
}

/** "Run this job once, now", queued until the leader claims it. */
export interface RunNowCommand {
  /** Unique (a UUID): the run it causes carries it as `commandId` in the history. */
  id: string;
  job: string;
  by: string;
  /** Epoch ms, the requester's wall clock. */
  at: number;
}

/** The board: paused jobs by name, and the run-now commands no leader has claimed yet, oldest first. */
export interface JobBoard {
  v: 1;
  paused: Record<string, JobPause>;
  runNow: RunNowCommand[];
  /** The last resume of each job since its last pause (optional: a board may have none). */
  resumed?: Record<string, JobResume>;
}

/** At most this many run-now commands wait on a board: a leader that never claims them must not grow it. */
export const MAX_RUN_NOW_QUEUE = 100;
/** Longest job name (UTF-16 units): a @Cron name or `Class.method`. */
export const MAX_JOB_NAME_LENGTH = 500;
/** Longest pause reason. */
export const MAX_PAUSE_REASON_LENGTH = 500;
/** Longest `by` (an identity is at most 256; `cli:<user>@<host>` may be a little longer). */
export const MAX_JOB_BY_LENGTH = 300;

/** A board nobody wrote yet. */
export function emptyJobBoard(): JobBoard {
  return { v: 1, paused: {}, runNow: [] };
}

/** Throws a TypeError naming the field and its allowed form unless `job` is a valid job name. */
export function checkJobName(job: unknown): string {
  if (typeof job !== 'string' || job === '' || job.length > MAX_JOB_NAME_LENGTH || !isStorableText(job)) {
    throw new TypeError(messages.badField('job', `a non-empty name of at most ${MAX_JOB_NAME_LENGTH} characters`, job));
  }
  return job;
}

/** Throws a TypeError unless `by` is storable text of at most {@link MAX_JOB_BY_LENGTH} characters. */
export function checkJobBy(by: unknown): string {
  if (typeof by !== 'string' || by.trim() === '' || by.length > MAX_JOB_BY_LENGTH || !isStorableText(by)) {
    throw new TypeError(messages.badField('by', `a non-empty text of at most ${MAX_JOB_BY_LENGTH} characters`, by));
  }
  return by;
}

function checkAt(at: unknown): number {
  if (typeof at !== 'number' || !Number.isFinite(at) || at < 0) {
    throw new TypeError(messages.badField('at', 'epoch milliseconds (a finite number ≥ 0)', at));
  }
  return at;
}

function checkReason(reason: unknown): string | undefined {
  if (reason === undefined) return undefined;
  if (
    typeof reason !== 'string' ||
    reason.trim() === '' ||
    reason.length > MAX_PAUSE_REASON_LENGTH ||
    !isStorableText(reason)
  ) {
    throw new TypeError(
      messages.badField('reason', `a non-empty text of at most ${MAX_PAUSE_REASON_LENGTH} characters`, reason),
    );
  }
  return reason;
}

/**
 * `board` with `job` paused; undefined (no change) when it is already paused for the same reason,
 * so the first pause's `by` and `at` (paused since) stand. A new reason replaces the pause.
 */
export function pauseJob(board: JobBoard, job: string, pause: JobPause): JobBoard | undefined {
  const entry: JobPause = {
    ...(pause.reason === undefined ? {} : { reason: checkReason(pause.reason) }),
    by: checkJobBy(pause.by),
    at: checkAt(pause.at),
  };
  checkJobName(job);
  // Own keys only: a job may be called `constructor` or `toString`.
  const current = Object.hasOwn(board.paused, job) ? board.paused[job] : undefined;
  if (current && current.reason === entry.reason) return undefined;
  const next: JobBoard = { ...board, paused: { ...board.paused, [job]: entry } };
  if (board.resumed && Object.hasOwn(board.resumed, job)) {
    const { [job]: _resume, ...resumed } = board.resumed;
    next.resumed = resumed;
  }
  return next;
}

/** `board` with `job` no longer paused; undefined (no change) when it is not paused. */
export function resumeJob(board: JobBoard, job: string, resume: JobResume): JobBoard | undefined {
  const entry: JobResume = { by: checkJobBy(resume.by), at: checkAt(resume.at) };
  if (!Object.hasOwn(board.paused, job)) return undefined;
  const { [job]: _gone, ...paused } = board.paused;
  return { ...board, paused, resumed: { ...board.resumed, [job]: entry } };
}

/**
 * `board` with `command` queued last; throws a RangeError when {@link MAX_RUN_NOW_QUEUE} commands wait
 * already. `board` itself when a command of that id waits already: a write answered "condition failed"
 * may have landed all the same (a driver's resend), and the retry must not queue it a second time.
 */
export function queueRunNow(board: JobBoard, command: RunNowCommand): JobBoard {
  const checked: RunNowCommand = {
    id: command.id,
    job: checkJobName(command.job),
    by: checkJobBy(command.by),
    at: checkAt(command.at),
  };
  if (typeof checked.id !== 'string' || checked.id === '' || checked.id.length > 100 || !isStorableText(checked.id)) {
    throw new TypeError(messages.badField('id', 'a non-empty text of at most 100 characters', command.id));
  }
  if (board.runNow.some((queued) => queued.id === checked.id)) return board;
  if (board.runNow.length >= MAX_RUN_NOW_QUEUE) throw new RangeError(messages.runNowQueueFull(MAX_RUN_NOW_QUEUE));
  return { ...board, runNow: [...board.runNow, checked] };
}

/**
 * The leader's claim: `board` without the commands `accept` takes, and those commands (oldest
 * first). Commands for jobs this leader does not know stay for a leader that does (a rolling deploy).
 */
export function takeRunNow(
  board: JobBoard,
  accept: (command: RunNowCommand) => boolean,
): { board: JobBoard | undefined; claimed: RunNowCommand[] } {
  const claimed = board.runNow.filter(accept);
  if (claimed.length === 0) return { board: undefined, claimed };
  return { board: { ...board, runNow: board.runNow.filter((command) => !claimed.includes(command)) }, claimed };
}

/**
 * A claim given back: `commands` (claimed, never run) at the head of the queue again, oldest first,
 * so the next leader claims them before anything queued since. One already back (same id) is not
 * doubled; those a full queue cannot take stay out (`left`). `board: undefined`: nothing changes.
 */
export function returnRunNow(
  board: JobBoard,
  commands: readonly RunNowCommand[],
): { board: JobBoard | undefined; returned: RunNowCommand[]; left: RunNowCommand[] } {
  const missing = commands.filter((command) => !board.runNow.some((queued) => queued.id === command.id));
  const returned = missing.slice(0, Math.max(0, MAX_RUN_NOW_QUEUE - board.runNow.length));
  const left = missing.slice(returned.length);
  if (returned.length === 0) return { board: undefined, returned, left };
  return { board: { ...board, runNow: [...returned, ...board.runNow] }, returned, left };
}

/** The board's encoded size, checked before a write so a full board fails with its own message. */
export function checkJobBoardSize(election: string, board: JobBoard): void {
  const bytes = Buffer.byteLength(JSON.stringify(board), 'utf8');
  if (bytes > MAX_SHARED_RECORD_BYTES) {
    throw new RangeError(messages.boardTooLarge(election, bytes, MAX_SHARED_RECORD_BYTES));
  }
}

/**
 * A board as read from the store (absent: empty). Anything this version cannot read in full — a
 * newer version's board (`v` > 1) or a damaged one — throws a FatalLeaseStoreError naming the
 * election and what is wrong: the caller reports it and never writes over it. Unknown fields are
 * kept, so a write by this version carries a newer version's additions along.
 */
export function decodeJobBoard(election: string, value: unknown): JobBoard {
  if (value === undefined || value === null) return emptyJobBoard();
  const corrupt = (why: string) => new FatalLeaseStoreError(messages.boardCorrupt(election, why));
  if (typeof value !== 'object' || Array.isArray(value)) throw corrupt('not an object');
  const board = value as Partial<JobBoard> & { v?: unknown };
  if (typeof board.v === 'number' && board.v > 1)
    throw new FatalLeaseStoreError(messages.boardNewer(election, board.v));
  if (board.v !== 1) throw corrupt(`version ${JSON.stringify(board.v)}`);
  if (!isMapOf(board.paused, (entry) => hasShape(entry, PAUSE))) throw corrupt('"paused" is not a map of pauses');
  if (!Array.isArray(board.runNow) || !board.runNow.every((entry) => hasShape(entry, RUN_NOW)))
    throw corrupt('"runNow" is not a list of commands');
  if (board.resumed !== undefined && !isMapOf(board.resumed, (entry) => hasShape(entry, RESUME)))
    throw corrupt('"resumed" is not a map');
  return board as JobBoard;
}

const PAUSE: Shape = { reason: 'string?', by: 'string', at: 'number' };
const RESUME: Shape = { by: 'string', at: 'number' };
const RUN_NOW: Shape = { id: 'string', job: 'string', by: 'string', at: 'number' };
