import { pauseJobChange, resumeJobChange } from '../election/job-board.calls.js';
import type { JobPause } from '../election/job-board.js';
import { type JobRun, readJobHistory } from '../election/job-history.js';
import type { LeaseStore } from '../stores/lease-store.js';
import { callOptions, formatDuration } from './call-options.js';
import { cliMessages } from './cli.messages.js';
import { ExitCode } from './cli-errors.js';
import type { CliOutput } from './cli-output.js';
import { checkJobsSupported, findJob } from './jobs-lookup.js';
import { renderTable } from './table.js';

/** What every `jobs` command on one job takes. */
export interface JobCommandOptions {
  job: string;
  /** The job's election; absent: the one election whose catalogue has the job. */
  election?: string;
  /** `cli:<os user>@<host>`. */
  requestedBy: string;
  /** Bound of each store call (and of each compare-and-set loop on the board). */
  timeoutMs: number;
  json: boolean;
  /** Wall clock of `at`, and of ages. */
  now?: () => number;
}

/** `jobs pause --json`. */
export interface JobPauseDocument {
  election: string;
  job: string;
  /** The pause in force now. */
  paused: JobPause;
  /** False: the job was already paused for that reason (the earlier pause stands). */
  changed: boolean;
}

/** `jobs pause`: records a pause on the board of the job's election. */
export async function jobsPauseCommand(
  store: LeaseStore,
  options: JobCommandOptions & { reason?: string },
  output: CliOutput,
): Promise<ExitCode> {
  checkJobsSupported(store);
  const { election } = await findJob(store, options.job, options.election, options.timeoutMs);
  const now = options.now ?? Date.now;
  const at = now();
  const { board, changed } = await pauseJobChange(
    store,
    election,
    {
      job: options.job,
      by: options.requestedBy,
      at,
      ...(options.reason === undefined ? {} : { reason: options.reason }),
    },
    callOptions(options.timeoutMs).signal,
  );
  const paused = board.paused[options.job];
  const document: JobPauseDocument = { election, job: options.job, paused, changed };
  output.out(
    options.json
      ? JSON.stringify(document, null, 2)
      : changed
        ? cliMessages.jobPaused(options.job, election, paused.by, paused.reason)
        : cliMessages.jobAlreadyPaused(options.job, election, paused.by, formatDuration(now() - paused.at)),
  );
  return ExitCode.ok;
}

/** `jobs resume --json`. */
export interface JobResumeDocument {
  election: string;
  job: string;
  /** False: the job was not paused. */
  changed: boolean;
}

/** `jobs resume`: removes the job's pause (a job only the board still names may be resumed too). */
export async function jobsResumeCommand(
  store: LeaseStore,
  options: JobCommandOptions,
  output: CliOutput,
): Promise<ExitCode> {
  checkJobsSupported(store);
  const { election } = await findJob(store, options.job, options.election, options.timeoutMs, true);
  const at = (options.now ?? Date.now)();
  // Whether this call removed the pause (not a time compared: two calls may share a millisecond).
  const { changed } = await resumeJobChange(
    store,
    election,
    { job: options.job, by: options.requestedBy, at },
    callOptions(options.timeoutMs).signal,
  );
  const document: JobResumeDocument = { election, job: options.job, changed };
  output.out(
    options.json
      ? JSON.stringify(document, null, 2)
      : changed
        ? cliMessages.jobResumed(options.job, election)
        : cliMessages.jobNotPaused(options.job, election),
  );
  return ExitCode.ok;
}

/** `jobs history --json`. */
export interface JobHistoryDocument {
  election: string;
  job: string;
  /** Newest first, at most 20. */
  runs: JobRun[];
}

/** `jobs history`: the job's last runs as its leaders recorded them. */
export async function jobsHistoryCommand(
  store: LeaseStore,
  options: Omit<JobCommandOptions, 'requestedBy'>,
  output: CliOutput,
): Promise<ExitCode> {
  checkJobsSupported(store);
  const { election } = await findJob(store, options.job, options.election, options.timeoutMs, true);
  const runs = await readJobHistory(store, election, options.job, callOptions(options.timeoutMs).signal);
  if (options.json) {
    output.out(JSON.stringify({ election, job: options.job, runs } satisfies JobHistoryDocument, null, 2));
    return ExitCode.ok;
  }
  if (runs.length === 0) {
    output.out(cliMessages.noRuns(options.job, election));
    return ExitCode.ok;
  }
  const now = (options.now ?? Date.now)();
  const header = ['STARTED', 'TRIGGER', 'OUTCOME', 'DURATION', 'BY', 'TERM', 'ERROR'];
  const rows = runs.map((run) => [
    new Date(run.startedAt).toISOString(),
    run.trigger === 'run-now' ? 'run now' : run.tick === undefined ? 'schedule' : 'schedule (tick)',
    run.outcome,
    run.durationMs !== undefined
      ? formatDuration(run.durationMs)
      : run.outcome === 'running'
        ? `${formatDuration(now - run.startedAt)} so far`
        : '-',
    run.by,
    String(run.term),
    run.error ?? '-',
  ]);
  output.out(renderTable([header, ...rows]));
  return ExitCode.ok;
}
