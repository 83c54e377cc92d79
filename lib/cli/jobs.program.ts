import { type Command, InvalidArgumentError } from 'commander';
import { checkJobName } from '../election/job-board.js';
import type { LeaseStore } from '../stores/lease-store.js';
import { cliMessages } from './cli.messages.js';
import type { ExitCode } from './cli-errors.js';
import { addCommonOptions, type CommonOptions, collectElections, election, integer, text } from './cli-options.js';
import type { CliOutput } from './cli-output.js';
import { jobsHistoryCommand, jobsPauseCommand, jobsResumeCommand } from './jobs-control.command.js';
import { jobsListCommand } from './jobs-list.command.js';
import { jobsRunCommand } from './jobs-run.command.js';

/** What the `jobs` commands need from `runCli`. */
export interface JobsProgramDeps {
  output: CliOutput;
  /** Builds the store from the options, runs `run` and closes the store. */
  withStore: (options: CommonOptions, run: (store: LeaseStore) => Promise<ExitCode>) => Promise<void>;
  /** `cli:<os user>@<host>`, or the test's. */
  requestedBy: () => string;
}

type OneJobOptions = CommonOptions & { election?: string };

/** Adds `jobs list|pause|resume|run|history` (issue 28) to `program`. */
export function addJobsCommands(program: Command, deps: JobsProgramDeps): void {
  const { output, withStore } = deps;
  const jobs = program
    .command('jobs')
    .description("list, pause, resume and run an election's leader-only scheduled jobs, and show their runs");

  addCommonOptions(
    jobs
      .command('list')
      .description('show each job: schedule, paused or not, last run, pending run-now commands')
      .option('--election <names>', 'an election (repeatable or comma-separated); default: all', collectElections, []),
  ).action(async (options: CommonOptions & { election: string[] }) =>
    withStore(options, (store) =>
      jobsListCommand(
        store,
        { elections: options.election, timeoutMs: options.timeoutMs, json: !!options.json },
        output,
      ),
    ),
  );

  addCommonOptions(
    oneJob(jobs.command('pause'), 'pause a job: the leader skips its scheduled runs until it is resumed').option(
      '--reason <text>',
      'why, recorded with the pause',
      text('--reason', 500),
    ),
  ).action(async (name: string, options: OneJobOptions & { reason?: string }) =>
    withStore(options, (store) =>
      jobsPauseCommand(store, { ...common(name, options, deps), reason: options.reason }, output),
    ),
  );

  addCommonOptions(oneJob(jobs.command('resume'), 'resume a paused job')).action(
    async (name: string, options: OneJobOptions) =>
      withStore(options, (store) => jobsResumeCommand(store, common(name, options, deps), output)),
  );

  addCommonOptions(
    oneJob(jobs.command('run'), 'ask the leader to run a job once, now (also while it is paused)')
      .option('--wait', 'wait until the run finished and print it (exit 7 if it failed)')
      .option('--timeout <ms>', 'how long --wait waits', integer('--timeout', 1, 86_400_000), 60_000)
      .option('--interval <ms>', 'poll interval of --wait', integer('--interval', 50, 60_000), 500),
  ).action(async (name: string, options: OneJobOptions & { wait?: boolean; timeout: number; interval: number }) =>
    withStore(options, (store) =>
      jobsRunCommand(
        store,
        {
          ...common(name, options, deps),
          wait: !!options.wait,
          waitTimeoutMs: options.timeout,
          pollIntervalMs: options.interval,
        },
        output,
      ),
    ),
  );

  addCommonOptions(oneJob(jobs.command('history'), "show a job's last runs, newest first")).action(
    async (name: string, options: OneJobOptions) =>
      withStore(options, (store) => jobsHistoryCommand(store, common(name, options, deps), output)),
  );
}

function oneJob(command: Command, description: string): Command {
  return command
    .description(description)
    .argument('<name>', 'the job: its @Cron/@Interval/@Timeout name, else Class.method', jobName)
    .option('--election <name>', "the job's election; default: the one election that has the job", election);
}

function common(name: string, options: OneJobOptions, deps: JobsProgramDeps) {
  return {
    job: name,
    election: options.election,
    requestedBy: deps.requestedBy(),
    timeoutMs: options.timeoutMs,
    json: !!options.json,
  };
}

function jobName(value: string): string {
  try {
    return checkJobName(value);
  } catch {
    throw new InvalidArgumentError(cliMessages.badJobName(value));
  }
}
