import { ELECTION_PATTERN } from '../election/elector-options.js';
import { readJobBoard } from '../election/job-board.calls.js';
import type { JobBoard } from '../election/job-board.js';
import { type JobCatalogue, readJobCatalogue } from '../election/job-history.js';
import { supportsRecords, supportsState } from '../stores/lease-store.capabilities.js';
import type { LeaseStore } from '../stores/lease-store.js';
import { callOptions } from './call-options.js';
import { cliMessages } from './cli.messages.js';
import { CliError, ExitCode } from './cli-errors.js';

/**
 * How the `jobs` commands find a job: every job of an election is in the catalogue its leader
 * publishes (leader state); commands go to the election's job board (a shared record).
 */

/** Throws the "lacks the capability" error unless `store` keeps leader state and shared records. */
export function checkJobsSupported(store: LeaseStore): void {
  if (!supportsState(store) || !supportsRecords(store)) {
    throw new CliError(
      ExitCode.unsupported,
      cliMessages.unsupported(store.name, 'control jobs', 'readState / readRecord / writeRecord'),
    );
  }
}

/** One election's catalogue (undefined: no leader published one) and board. */
export interface ElectionJobsView {
  election: string;
  catalogue: JobCatalogue | undefined;
  board: JobBoard;
}

/** The catalogue and board of `election`, read side by side. */
export async function readElectionJobs(
  store: LeaseStore,
  election: string,
  timeoutMs: number,
): Promise<ElectionJobsView> {
  const [catalogue, { board }] = await Promise.all([
    readJobCatalogue(store, election, callOptions(timeoutMs).signal),
    readJobBoard(store, election, callOptions(timeoutMs).signal),
  ]);
  return { election, catalogue, board };
}

/** The elections `elections` names, else every election of the namespace (which the store must list). */
export async function electionsToRead(
  store: LeaseStore,
  elections: readonly string[],
  timeoutMs: number,
  why: string,
): Promise<string[]> {
  if (elections.length > 0) return [...elections];
  if (typeof store.listElections !== 'function') {
    throw new CliError(ExitCode.unsupported, cliMessages.unsupported(store.name, why, 'listElections'));
  }
  return (await store.listElections(callOptions(timeoutMs))).filter((name) => ELECTION_PATTERN.test(name));
}

/**
 * The election of job `job`: `election` when given (the job must be in its catalogue), else the one
 * election of the namespace whose catalogue has it. With `orBoard`, a job only on the board (paused
 * or queued, then removed from the code) counts too, so it can still be resumed. Anything else is a
 * usage error naming what was found.
 */
export async function findJob(
  store: LeaseStore,
  job: string,
  election: string | undefined,
  timeoutMs: number,
  orBoard = false,
): Promise<ElectionJobsView> {
  const names = await electionsToRead(
    store,
    election === undefined ? [] : [election],
    timeoutMs,
    'find the election of a job (pass --election)',
  );
  const views = await Promise.all(names.map((name) => readElectionJobs(store, name, timeoutMs)));
  const has = (view: ElectionJobsView) =>
    view.catalogue?.jobs.some((entry) => entry.name === job) === true ||
    (orBoard && (Object.hasOwn(view.board.paused, job) || view.board.runNow.some((c) => c.job === job)));
  const found = views.filter(has);
  if (found.length === 1) return found[0];
  if (found.length > 1) {
    throw new CliError(
      ExitCode.usage,
      cliMessages.jobAmbiguous(
        job,
        found.map((view) => view.election),
      ),
    );
  }
  if (election !== undefined) {
    const [view] = views;
    if (view.catalogue === undefined) throw new CliError(ExitCode.usage, cliMessages.noCatalogue(election));
    throw new CliError(
      ExitCode.usage,
      cliMessages.unknownJob(
        job,
        election,
        view.catalogue.jobs.map((e) => e.name),
      ),
    );
  }
  throw new CliError(ExitCode.usage, cliMessages.jobNowhere(job, views.filter((v) => v.catalogue).length));
}
