import { readJobBoard, runNowCommand } from '../election/job-board.calls.js';
import type { RunNowCommand } from '../election/job-board.js';
import { type JobRun, readJobHistory } from '../election/job-history.js';
import type { LeaseStore } from '../stores/lease-store.js';
import { callOptions, formatDuration } from './call-options.js';
import { cliMessages } from './cli.messages.js';
import { CliError, ExitCode } from './cli-errors.js';
import type { CliOutput } from './cli-output.js';
import type { JobCommandOptions } from './jobs-control.command.js';
import { checkJobsSupported, findJob } from './jobs-lookup.js';
import { pollUntil } from './poll.js';

export interface JobRunOptions extends JobCommandOptions {
  /** Poll the job's history until the run of this command finished, at most `waitTimeoutMs`. */
  wait: boolean;
  waitTimeoutMs: number;
  pollIntervalMs: number;
}

/** `jobs run --json`: one document, printed once the command is done. */
export interface JobRunDocument {
  election: string;
  job: string;
  /** The recorded command; its id is the run's `commandId`. */
  command: RunNowCommand;
  /** With --wait: the finished run, or null when the wait timed out. */
  run?: JobRun | null;
}

/**
 * `jobs run`: queues a run-now command on the board of the job's election; the leader claims it and
 * runs the job once. With `wait`, follows the job's history until the run of this command finished.
 */
export async function jobsRunCommand(store: LeaseStore, options: JobRunOptions, output: CliOutput): Promise<ExitCode> {
  checkJobsSupported(store);
  const { election } = await findJob(store, options.job, options.election, options.timeoutMs);
  let command: RunNowCommand;
  try {
    command = await runNowCommand(
      store,
      election,
      { job: options.job, by: options.requestedBy, at: (options.now ?? Date.now)() },
      callOptions(options.timeoutMs).signal,
    );
  } catch (error) {
    // The queue is full (no leader claims commands) or the board would outgrow its record.
    if (error instanceof RangeError) throw new CliError(ExitCode.store, cliMessages.runQueueFull(error.message));
    throw error;
  }
  const requested = cliMessages.runRequested(options.job, election, command.id);
  const lease = await store.read(election, callOptions(options.timeoutMs));
  const noLeader = !lease.held ? cliMessages.runNoLeader(election) : undefined;
  if (!options.wait) {
    output.out(options.json ? JSON.stringify({ election, job: options.job, command }, null, 2) : requested);
    if (noLeader) output.err(noLeader);
    return ExitCode.ok;
  }
  if (!options.json) output.out(requested);
  if (noLeader) output.err(noLeader);
  output.err(cliMessages.runWaiting(options.waitTimeoutMs));
  const outcome = await waitForRun(store, options, election, command, output);
  if (outcome.finished) {
    const run = outcome.run;
    output.out(
      options.json
        ? JSON.stringify({ election, job: options.job, command, run }, null, 2)
        : cliMessages.runFinished(
            options.job,
            run.by,
            run.term,
            run.outcome,
            formatDuration(run.durationMs ?? 0),
            run.error,
          ),
    );
    return run.outcome === 'ok' ? ExitCode.ok : ExitCode.runFailed;
  }
  if (options.json) output.out(JSON.stringify({ election, job: options.job, command, run: null }, null, 2));
  const queued = outcome.run ? false : await stillQueued(store, election, command, options.timeoutMs);
  const state = outcome.run
    ? cliMessages.runStillRunning(outcome.run.by, outcome.run.term)
    : queued === undefined
      ? cliMessages.runStateUnknown
      : queued
        ? cliMessages.runStillQueued
        : cliMessages.runClaimedNoRecord;
  throw new CliError(ExitCode.waitTimedOut, cliMessages.runWaitTimedOut(command.id, options.waitTimeoutMs, state));
}

/**
 * Polls the job's history until a finished run carries `command.id`, or the wait times out (then
 * `run` is the run in progress, if one was seen).
 */
async function waitForRun(
  store: LeaseStore,
  options: JobRunOptions,
  election: string,
  command: RunNowCommand,
  output: CliOutput,
): Promise<{ finished: true; run: JobRun } | { finished: false; run?: JobRun }> {
  let running: JobRun | undefined;
  const outcome = await pollUntil(
    options,
    async ({ signal }) =>
      (await readJobHistory(store, election, options.job, signal)).find((run) => run.commandId === command.id),
    (run) => {
      if (run?.outcome === 'running' && !running) output.err(cliMessages.runStarted(run.by, run.term));
      running = run ?? running;
      return run !== undefined && run.outcome !== 'running';
    },
    output,
  );
  return outcome.done && outcome.value ? { finished: true, run: outcome.value } : { finished: false, run: running };
}

async function stillQueued(
  store: LeaseStore,
  election: string,
  command: RunNowCommand,
  timeoutMs: number,
): Promise<boolean | undefined> {
  try {
    const { board } = await readJobBoard(store, election, callOptions(timeoutMs).signal);
    return board.runNow.some((queued) => queued.id === command.id);
  } catch {
    // Only to say why the wait timed out: the timeout is the outcome either way.
    return undefined;
  }
}
