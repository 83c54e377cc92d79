import { randomUUID } from 'node:crypto';
import { pauseUnlessAborted, throwIfAborted } from '../shared/abort.js';
import { FatalLeaseStoreError, TransientLeaseStoreError } from '../shared/errors.js';
import { type RecordCapableStore, supportsRecords } from '../stores/lease-store.capabilities.js';
import type { LeaseStore } from '../stores/lease-store.js';
import { electionMessages } from './election.messages.js';
import {
  checkJobBoardSize,
  checkJobName,
  decodeJobBoard,
  JOB_BOARD_KEY,
  type JobBoard,
  pauseJob,
  queueRunNow,
  type RunNowCommand,
  resumeJob,
  returnRunNow,
  takeRunNow,
} from './job-board.js';

const messages = electionMessages.jobs;

/**
 * The job board's store calls: any replica and the CLI read it and write commands with a
 * compare-and-set loop on the shared record, so concurrent writers never lose each other's
 * commands; the leader claims run-now commands through the same loop.
 */

/**
 * Attempts of one change before giving up: each failed attempt means another writer changed the
 * board between our read and our write, so this many in a row means a storm, not bad luck.
 */
export const JOB_BOARD_MAX_ATTEMPTS = 10;
/** Upper bound of the random pause between attempts (doubling from 5 ms), so racing writers spread out. */
const MAX_BACKOFF_MS = 200;

/** The store, if it keeps shared records; otherwise a FatalLeaseStoreError naming it. */
export function recordStore(store: LeaseStore): RecordCapableStore {
  if (!supportsRecords(store)) throw new FatalLeaseStoreError(messages.recordsUnsupported(store.name));
  return store;
}

/** The board of `election` and its record version (null: nobody wrote one, the board is empty). */
export async function readJobBoard(
  store: LeaseStore,
  election: string,
  signal: AbortSignal,
): Promise<{ board: JobBoard; version: string | null }> {
  const record = await recordStore(store).readRecord(election, JOB_BOARD_KEY, { signal });
  if (record === undefined) return { board: decodeJobBoard(election, undefined), version: null };
  return { board: decodeJobBoard(election, record.value), version: record.version };
}

/**
 * Reads the board, applies `change`, and writes its result only over the version read; when another
 * writer came first, reads again and re-applies, at most {@link JOB_BOARD_MAX_ATTEMPTS} times, and
 * never past `signal` (a TransientLeaseStoreError either way). `change` may thus run more than once:
 * keep it pure. Its `board: undefined` means no change (nothing written). Resolves with the board
 * as it now stands and the `result` of the attempt that counted.
 */
export async function changeJobBoard<T>(
  store: LeaseStore,
  election: string,
  change: (board: JobBoard) => { board: JobBoard | undefined; result: T },
  signal: AbortSignal,
): Promise<{ board: JobBoard; result: T }> {
  const records = recordStore(store);
  for (let attempt = 1; ; attempt += 1) {
    const { board, version } = await readJobBoard(records, election, signal);
    const { board: next, result } = change(board);
    if (next === undefined) return { board, result };
    checkJobBoardSize(election, next);
    if (await records.writeRecord(election, JOB_BOARD_KEY, next, { signal, ifVersion: version })) {
      return { board: next, result };
    }
    if (attempt >= JOB_BOARD_MAX_ATTEMPTS) {
      throw new TransientLeaseStoreError(messages.boardContended(election, attempt));
    }
    await backOff(attempt, signal);
  }
}

/** {@link changeJobBoard} for a change without a result: `mutate` returns the new board, or undefined for no change. */
export async function updateJobBoard(
  store: LeaseStore,
  election: string,
  mutate: (board: JobBoard) => JobBoard | undefined,
  signal: AbortSignal,
): Promise<JobBoard> {
  const { board } = await changeJobBoard(
    store,
    election,
    (current) => ({ board: mutate(current), result: undefined }),
    signal,
  );
  return board;
}

/** Who asks, and when (epoch ms; default now). */
export interface JobCommandOrigin {
  by: string;
  at?: number;
}

/** Records a pause of `job` (kept until resumed, across failovers and restarts). Resolves once recorded. */
export async function pauseJobCommand(
  store: LeaseStore,
  election: string,
  command: JobCommandOrigin & { job: string; reason?: string },
  signal: AbortSignal,
): Promise<JobBoard> {
  return (await pauseJobChange(store, election, command, signal)).board;
}

/** {@link pauseJobCommand}, saying whether this call changed the board (a pause for the same reason does not). */
export async function pauseJobChange(
  store: LeaseStore,
  election: string,
  command: JobCommandOrigin & { job: string; reason?: string },
  signal: AbortSignal,
): Promise<{ board: JobBoard; changed: boolean }> {
  const job = checkJobName(command.job);
  const pause = {
    ...(command.reason === undefined ? {} : { reason: command.reason }),
    by: command.by,
    at: command.at ?? Date.now(),
  };
  return boardChange(store, election, (board) => pauseJob(board, job, pause), signal);
}

/** Removes the pause of `job`, if any. Resolves once recorded (or at once when it was not paused). */
export async function resumeJobCommand(
  store: LeaseStore,
  election: string,
  command: JobCommandOrigin & { job: string },
  signal: AbortSignal,
): Promise<JobBoard> {
  return (await resumeJobChange(store, election, command, signal)).board;
}

/** {@link resumeJobCommand}, saying whether this call changed the board (a job not paused: no). */
export async function resumeJobChange(
  store: LeaseStore,
  election: string,
  command: JobCommandOrigin & { job: string },
  signal: AbortSignal,
): Promise<{ board: JobBoard; changed: boolean }> {
  const job = checkJobName(command.job);
  const resume = { by: command.by, at: command.at ?? Date.now() };
  return boardChange(store, election, (board) => resumeJob(board, job, resume), signal);
}

/** {@link updateJobBoard}, with whether the attempt that counted wrote (rather than a time compared). */
async function boardChange(
  store: LeaseStore,
  election: string,
  mutate: (board: JobBoard) => JobBoard | undefined,
  signal: AbortSignal,
): Promise<{ board: JobBoard; changed: boolean }> {
  const { board, result } = await changeJobBoard(
    store,
    election,
    (current) => {
      const next = mutate(current);
      return { board: next, result: next !== undefined };
    },
    signal,
  );
  return { board, changed: result };
}

/**
 * Queues "run `job` once, now" for the leader and resolves with the recorded command (its `id` is
 * the `commandId` of the run it causes). Rejects with a RangeError when the queue is full.
 */
export async function runNowCommand(
  store: LeaseStore,
  election: string,
  command: JobCommandOrigin & { job: string; id?: string },
  signal: AbortSignal,
): Promise<RunNowCommand> {
  const queued: RunNowCommand = {
    id: command.id ?? randomUUID(),
    job: checkJobName(command.job),
    by: command.by,
    at: command.at ?? Date.now(),
  };
  await updateJobBoard(
    store,
    election,
    (board) => {
      const next = queueRunNow(board, queued);
      return next === board ? undefined : next;
    },
    signal,
  );
  return queued;
}

/**
 * The leader's claim of the run-now commands `accept` takes (normally: of jobs it runs): removed
 * from the board by compare-and-set before they run, so each runs at most once even when two
 * leaders' terms overlap in time or a leader dies after claiming (then it does not run at all).
 * Resolves with the claimed commands, oldest first (empty: nothing to do, nothing written).
 */
export async function claimRunNowCommands(
  store: LeaseStore,
  election: string,
  accept: (command: RunNowCommand) => boolean,
  signal: AbortSignal,
): Promise<RunNowCommand[]> {
  const { result } = await changeJobBoard(
    store,
    election,
    (board) => {
      const { board: next, claimed } = takeRunNow(board, accept);
      return { board: next, result: claimed };
    },
    signal,
  );
  return result;
}

/**
 * Gives back run-now commands a leader claimed and did not run (its term ended in between): they
 * go back on the board for the next leader. Still at most once, since they never ran. Resolves with
 * those a full queue could not take back (they are dropped).
 */
export async function returnRunNowCommands(
  store: LeaseStore,
  election: string,
  commands: readonly RunNowCommand[],
  signal: AbortSignal,
): Promise<RunNowCommand[]> {
  const { result } = await changeJobBoard(
    store,
    election,
    (board) => {
      const { board: next, left } = returnRunNow(board, commands);
      return { board: next, result: left };
    },
    signal,
  );
  return result;
}

/** Read at each call, so a fake clock installed over the globals (Jest's, the simulation's) takes it over. */
const GLOBAL_TIMERS = {
  setTimeout: (callback: () => void, ms: number) => setTimeout(callback, ms),
  clearTimeout: (timer: unknown) => clearTimeout(timer as NodeJS.Timeout),
};

async function backOff(attempt: number, signal: AbortSignal): Promise<void> {
  const ceiling = Math.min(MAX_BACKOFF_MS, 5 * 2 ** (attempt - 1));
  // The global timer (ref'd: a CLI command waits for it), not node:timers/promises: that one is
  // replaced by no fake clock (Jest's, the simulation's), so the pause escaped their time.
  await pauseUnlessAborted(GLOBAL_TIMERS, Math.floor(Math.random() * ceiling), signal);
  throwIfAborted(signal);
}
