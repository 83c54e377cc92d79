import { FatalLeaseStoreError } from '../shared/errors.js';
import { stateUnsupportedError, supportsState } from '../stores/lease-store.capabilities.js';
import type { LeaseStore } from '../stores/lease-store.js';
import { electionMessages } from './election.messages.js';
import { hasShape, type Shape } from './job-shape.js';
import { JOB_CATALOGUE_KEY, jobHistoryKey } from './state-keys.js';

const messages = electionMessages.jobs;

/**
 * What the leader records about its jobs, in leader state (fenced by its lease, like the tick
 * ledger): each job's last runs under {@link jobHistoryKey}, and the catalogue of the election's jobs
 * under {@link JOB_CATALOGUE_KEY}. Any replica and the CLI read them. The leader writes the values
 * {@link encodeJobHistory} and {@link encodeJobCatalogue} make.
 */

export { JOB_CATALOGUE_KEY, jobHistoryKey };

/** How a run ended; `running` while it has not (or its leader died before recording its end). */
export type JobRunOutcome = JobRun['outcome'];

/**
 * One run of a job, as the leader that ran it recorded it in the store: what `jobHistory()` lists
 * (newest first) and `jobs()` shows as `lastRun`.
 */
export interface JobRun {
  /** The job's name. */
  job: string;
  /** When it started: epoch ms, on the leader's wall clock. */
  startedAt: number;
  /** When it ended (epoch ms); absent while `running`. */
  finishedAt?: number;
  /** How long it ran (ms); absent while `running`. */
  durationMs?: number;
  /**
   * `running` until its end is recorded (for good when its leader lost its lease first), then `ok`,
   * `error`, or `aborted` (it failed after its term's signal aborted).
   */
  outcome: 'ok' | 'error' | 'aborted' | 'running';
  /** The identity of the replica that ran it: the leader of `term`. */
  by: string;
  /** The term (fencing token) it ran in. */
  term: number;
  /** A once-per-tick job's scheduled fire time (epoch ms). */
  tick?: number;
  /** A scheduled run, or one an operator asked for (`runJobNow`, the CLI's `jobs run`). */
  trigger: 'schedule' | 'run-now';
  /** The id of the run-now command that caused it (what `runJobNow` resolved with). */
  commandId?: string;
  /** The error's message, at most 200 characters. */
  error?: string;
}

/** One job of the catalogue: what the CLI lists. */
export interface JobCatalogueEntry {
  name: string;
  /** For people: `cron 0 * * * * *`, `interval 5000 ms`, `timeout 1000 ms`. */
  schedule: string;
  /** `@LeaderOnly({ once: 'per-tick' })`. */
  onceTick?: boolean;
}

/** The catalogue as read back: the jobs, and the leader (identity, term) that published it. */
export interface JobCatalogue {
  jobs: JobCatalogueEntry[];
  by: string;
  term: number;
}

/** Runs kept per job, newest first. */
export const JOB_HISTORY_LIMIT = 20;
/** Longest error message kept in a run. */
export const MAX_RUN_ERROR_LENGTH = 200;

/** The stored forms (versioned, so a later version can change them and an older one can tell). */
interface StoredHistory {
  v: 1;
  runs: JobRun[];
}
interface StoredCatalogue {
  v: 1;
  by: string;
  jobs: JobCatalogueEntry[];
}

/**
 * An error's message as a run keeps it: at most {@link MAX_RUN_ERROR_LENGTH} characters, control
 * characters as spaces and no half of a surrogate pair (PostgreSQL's jsonb refuses both).
 */
export function runErrorText(error: unknown): string {
  const message = error instanceof Error ? error.message || error.name : String(error);
  let text = message.replace(/\p{Cc}/gu, ' ').replace(/\p{Cs}/gu, '\ufffd');
  if (text.length > MAX_RUN_ERROR_LENGTH) {
    text = text.slice(0, MAX_RUN_ERROR_LENGTH);
    if (/[\ud800-\udbff]$/.test(text)) text = text.slice(0, -1);
  }
  return text;
}

/** Two records of one run: the start, and the same run finished. */
export function sameRun(a: JobRun, b: JobRun): boolean {
  return (
    a.job === b.job &&
    a.startedAt === b.startedAt &&
    a.by === b.by &&
    a.term === b.term &&
    a.trigger === b.trigger &&
    a.commandId === b.commandId &&
    a.tick === b.tick
  );
}

/**
 * `runs` (newest first) with `run` in it: replacing the record of the same run (its start, when
 * `run` is its end), else first; sorted by start, newest first, and cut to {@link JOB_HISTORY_LIMIT}.
 * An `error` longer than allowed is cut. Pure: `runs` is not changed.
 */
export function mergeJobRun(runs: readonly JobRun[], run: JobRun): JobRun[] {
  const kept: JobRun = run.error === undefined ? run : { ...run, error: runErrorText(run.error) };
  const others = runs.filter((other) => !sameRun(other, run));
  // Stable: of two runs started in the same millisecond, the one recorded last comes first.
  return [kept, ...others].sort((a, b) => b.startedAt - a.startedAt).slice(0, JOB_HISTORY_LIMIT);
}

/** The value the leader writes under {@link jobHistoryKey}. */
export function encodeJobHistory(runs: readonly JobRun[]): StoredHistory {
  return { v: 1, runs: runs.slice(0, JOB_HISTORY_LIMIT) };
}

/** The value the leader writes under {@link JOB_CATALOGUE_KEY}: the jobs it runs, and its identity. */
export function encodeJobCatalogue(by: string, jobs: readonly JobCatalogueEntry[]): StoredCatalogue {
  return { v: 1, by, jobs: [...jobs] };
}

/**
 * The runs of a stored history (absent: none). Anything else throws a FatalLeaseStoreError naming
 * the election, the job and what is wrong. The leader, which owns the history, may start a fresh one
 * over it (see {@link historyOrFresh}); a reader reports it.
 */
export function decodeJobHistory(election: string, job: string, value: unknown): JobRun[] {
  if (value === undefined) return [];
  const corrupt = (why: string) => new FatalLeaseStoreError(messages.historyCorrupt(election, job, why));
  const stored = value as Partial<StoredHistory> | null;
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) throw corrupt('not an object');
  if (stored.v !== 1) throw corrupt(`version ${JSON.stringify(stored.v)}`);
  if (!Array.isArray(stored.runs) || !stored.runs.every(isRun)) throw corrupt('"runs" is not a list of runs');
  return stored.runs;
}

/**
 * The leader's view of its own history before it adds a run: a history it cannot read (damaged, or
 * of another version) is reported through `onCorrupt` once and replaced by a fresh one, so one bad
 * record never fails every run of the job.
 */
export function historyOrFresh(
  election: string,
  job: string,
  value: unknown,
  onCorrupt: (error: FatalLeaseStoreError) => void,
): JobRun[] {
  try {
    return decodeJobHistory(election, job, value);
  } catch (error) {
    if (!(error instanceof FatalLeaseStoreError)) throw error;
    onCorrupt(error);
    return [];
  }
}

/** The catalogue of a stored value, with the term of the leader state entry that held it. */
export function decodeJobCatalogue(election: string, value: unknown, term: number): JobCatalogue {
  const corrupt = (why: string) => new FatalLeaseStoreError(messages.catalogueCorrupt(election, why));
  const stored = value as Partial<StoredCatalogue> | null;
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) throw corrupt('not an object');
  if (stored.v !== 1) throw corrupt(`version ${JSON.stringify(stored.v)}`);
  if (typeof stored.by !== 'string') throw corrupt('"by" is not an identity');
  if (!Array.isArray(stored.jobs) || !stored.jobs.every((entry) => hasShape(entry, CATALOGUE_ENTRY)))
    throw corrupt('"jobs" is not a list of jobs');
  return { jobs: stored.jobs, by: stored.by, term };
}

/** The last runs of `job` in `election`, newest first (none: never run, or no leader recorded any). */
export async function readJobHistory(
  store: LeaseStore,
  election: string,
  job: string,
  signal: AbortSignal,
): Promise<JobRun[]> {
  if (!supportsState(store)) throw stateUnsupportedError(store);
  const entry = await store.readState(election, { signal, key: jobHistoryKey(job) });
  return decodeJobHistory(election, job, entry?.value);
}

/** The catalogue the last leader of `election` published; undefined when none did. */
export async function readJobCatalogue(
  store: LeaseStore,
  election: string,
  signal: AbortSignal,
): Promise<JobCatalogue | undefined> {
  if (!supportsState(store)) throw stateUnsupportedError(store);
  const entry = await store.readState(election, { signal, key: JOB_CATALOGUE_KEY });
  return entry === undefined ? undefined : decodeJobCatalogue(election, entry.value, entry.term);
}

const OUTCOMES: readonly unknown[] = ['ok', 'error', 'aborted', 'running'];
const TRIGGERS: readonly unknown[] = ['schedule', 'run-now'];

const RUN: Shape = {
  job: 'string',
  startedAt: 'number',
  by: 'string',
  term: 'number',
  finishedAt: 'number?',
  durationMs: 'number?',
  tick: 'number?',
  commandId: 'string?',
  error: 'string?',
};
const CATALOGUE_ENTRY: Shape = { name: 'string', schedule: 'string', onceTick: 'boolean?' };

function isRun(value: unknown): boolean {
  return hasShape(value, RUN) && OUTCOMES.includes(value.outcome) && TRIGGERS.includes(value.trigger);
}
