import type { JobPause, RunNowCommand } from '../election/job-board.js';
import { type JobRun, readJobHistory } from '../election/job-history.js';
import type { LeaseStore } from '../stores/lease-store.js';
import { callOptions, formatDuration } from './call-options.js';
import { cliMessages } from './cli.messages.js';
import { ExitCode } from './cli-errors.js';
import type { CliOutput } from './cli-output.js';
import { checkJobsSupported, type ElectionJobsView, electionsToRead, readElectionJobs } from './jobs-lookup.js';
import { renderTable } from './table.js';

export interface JobsListOptions {
  /** The elections to show; empty: every election the store lists (those without a catalogue are left out). */
  elections: readonly string[];
  timeoutMs: number;
  json: boolean;
  /** Wall clock, for ages. */
  now?: () => number;
}

/** `jobs list --json`: one document. Absent values are null. */
export interface JobsDocument {
  store: string;
  /** When the store was read (ISO 8601, this machine's clock). */
  at: string;
  elections: ElectionJobs[];
}

export interface ElectionJobs {
  election: string;
  /** The leader that published the catalogue; null: none did (then `jobs` lists only the board's). */
  catalogue: { by: string; term: number } | null;
  jobs: JobStatus[];
}

export interface JobStatus {
  name: string;
  /** From the catalogue; null for a job only the board names (paused or queued, then removed from the app). */
  schedule: string | null;
  onceTick: boolean;
  inCatalogue: boolean;
  paused: JobPause | null;
  /** The newest run of its history (its start, or its end once finished). */
  lastRun: JobRun | null;
  /** Run-now commands no leader has claimed yet, oldest first. */
  pendingRunNow: RunNowCommand[];
}

/** `jobs list`: each election's jobs with schedule, pause, last run and pending run-now commands. */
export async function jobsListCommand(
  store: LeaseStore,
  options: JobsListOptions,
  output: CliOutput,
): Promise<ExitCode> {
  checkJobsSupported(store);
  const named = options.elections.length > 0;
  const elections = await electionsToRead(
    store,
    options.elections,
    options.timeoutMs,
    'list its elections (pass --election)',
  );
  const views = await Promise.all(elections.map((election) => readElectionJobs(store, election, options.timeoutMs)));
  const shown = named ? views : views.filter((view) => view.catalogue !== undefined);
  const now = options.now ?? Date.now;
  const document: JobsDocument = {
    store: store.name,
    at: new Date(now()).toISOString(),
    elections: await Promise.all(shown.map((view) => electionJobs(store, view, options.timeoutMs))),
  };
  if (options.json) {
    output.out(JSON.stringify(document, null, 2));
    return ExitCode.ok;
  }
  for (const view of shown) if (view.catalogue === undefined) output.err(cliMessages.noCatalogueNote(view.election));
  const rows = document.elections.flatMap((election) => election.jobs.map((job) => ({ election, job })));
  if (rows.length === 0) {
    if (!named) output.out(cliMessages.noJobs);
    return ExitCode.ok;
  }
  const header = ['ELECTION', 'JOB', 'SCHEDULE', 'STATE', 'LAST RUN', 'RUN NOW'];
  const at = now();
  output.out(
    renderTable([
      header,
      ...rows.map(({ election, job }) => [
        election.election,
        job.name,
        job.schedule === null ? '(not in catalogue)' : `${job.schedule}${job.onceTick ? ', once per tick' : ''}`,
        job.paused ? pausedText(job.paused, at) : 'active',
        job.lastRun ? lastRunText(job.lastRun, at) : 'never',
        job.pendingRunNow.length === 0 ? '-' : `${job.pendingRunNow.length} pending`,
      ]),
    ]),
  );
  return ExitCode.ok;
}

async function electionJobs(store: LeaseStore, view: ElectionJobsView, timeoutMs: number): Promise<ElectionJobs> {
  const { catalogue, board } = view;
  const listed = catalogue?.jobs ?? [];
  const names = new Set(listed.map((entry) => entry.name));
  // Jobs only the board names: paused or queued, then gone from the app (so an operator sees what to resume).
  const orphans = [...Object.keys(board.paused), ...board.runNow.map((command) => command.job)].filter(
    (name, i, all) => !names.has(name) && all.indexOf(name) === i,
  );
  const entries = [
    ...listed.map((entry) => ({ name: entry.name, schedule: entry.schedule, onceTick: entry.onceTick === true })),
    ...orphans.map((name) => ({ name, schedule: null, onceTick: false })),
  ];
  const jobs = await Promise.all(
    entries.map(async (entry): Promise<JobStatus> => {
      const runs = await readJobHistory(store, view.election, entry.name, callOptions(timeoutMs).signal);
      return {
        ...entry,
        inCatalogue: entry.schedule !== null,
        paused: Object.hasOwn(board.paused, entry.name) ? board.paused[entry.name] : null,
        lastRun: runs[0] ?? null,
        pendingRunNow: board.runNow.filter((command) => command.job === entry.name),
      };
    }),
  );
  return { election: view.election, catalogue: catalogue ? { by: catalogue.by, term: catalogue.term } : null, jobs };
}

function pausedText(pause: JobPause, now: number): string {
  return `paused by ${pause.by}${pause.reason ? ` (${pause.reason})` : ''}, ${formatDuration(now - pause.at)} ago`;
}

/** `ok in 1.2 s, 3 min 5 s ago, on pod-a (term 4)`; a run still going: `running for 4.0 s, on …`. */
export function lastRunText(run: JobRun, now: number): string {
  const where = `on ${run.by} (term ${run.term})${run.trigger === 'run-now' ? ', run now' : ''}`;
  if (run.outcome === 'running') return `running since ${formatDuration(now - run.startedAt)} ago, ${where}`;
  const took = run.durationMs === undefined ? '' : ` in ${formatDuration(run.durationMs)}`;
  return `${run.outcome}${took}, ${formatDuration(now - (run.finishedAt ?? run.startedAt))} ago, ${where}`;
}
