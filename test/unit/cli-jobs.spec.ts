// Issue 28: the CLI's `jobs` commands in-process — list, pause, resume, run (--wait), history — with
// their text and --json output and exit codes, on the in-memory store through the CLI's store seam,
// and end to end through the CLI's real store factory against the machine's PostgreSQL and Redis.
// The test plays the leader: it publishes the catalogue, claims run-now commands and records runs.

import { setTimeout as delay } from 'node:timers/promises';
import { ExitCode } from '../../lib/cli/cli-errors.js';
import {
  type JobHistoryDocument,
  type JobPauseDocument,
  jobsPauseCommand,
  jobsResumeCommand,
} from '../../lib/cli/jobs-control.command.js';
import type { JobsDocument } from '../../lib/cli/jobs-list.command.js';
import type { JobRunDocument } from '../../lib/cli/jobs-run.command.js';
import { type CliContext, runCli } from '../../lib/cli/main.js';
import {
  claimRunNowCommands,
  pauseJobCommand,
  readJobBoard,
  runNowCommand,
} from '../../lib/election/job-board.calls.js';
import { JOB_BOARD_KEY, type JobBoard, MAX_RUN_NOW_QUEUE } from '../../lib/election/job-board.js';
import {
  encodeJobCatalogue,
  encodeJobHistory,
  JOB_CATALOGUE_KEY,
  type JobCatalogueEntry,
  type JobRun,
  jobHistoryKey,
  mergeJobRun,
} from '../../lib/election/job-history.js';
import type { Lease, LeaseStore } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { PostgresLeaseStore } from '../../lib/stores/postgres/postgres.store.js';
import { RedisLeaseStore } from '../../lib/stores/redis/redis.store.js';
import { dropPostgresTables, PG_URL, REDIS_URL, uniqueName } from '../setup/servers.js';

const signal = () => AbortSignal.timeout(5_000);
const BY = 'cli:tester@test-host';
const CATALOGUE: JobCatalogueEntry[] = [
  { name: 'Reports.nightly', schedule: 'cron 0 0 2 * * *', onceTick: true },
  { name: 'warm-cache', schedule: 'interval 5000 ms' },
  { name: 'Boot.once', schedule: 'timeout 1000 ms' },
];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(argv: string[], store: LeaseStore | undefined, extra: Partial<CliContext> = {}): Promise<Run> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runCli(argv, {
    output: { out: (text) => stdout.push(text), err: (text) => stderr.push(text) },
    requestedBy: BY,
    env: { LEADER_ELECTION_STORE: 'postgres', LEADER_ELECTION_CONNECTION: 'postgres://x@127.0.0.1:1/db' },
    buildStore: async () => {
      if (!store) throw new Error('no store in this test');
      return store;
    },
    ...extra,
  });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

/** The leader of `election` (pod-a), its catalogue published as a leader does when its term starts. */
async function leader(store: LeaseStore, election: string, jobs = CATALOGUE): Promise<Lease> {
  const result = await store.acquire({ election, identity: 'pod-a', leaseDurationMs: 30_000, signal: signal() });
  if (!result.acquired) throw new Error(`could not lead ${election}`);
  await store.writeState?.(result.lease, encodeJobCatalogue('pod-a', jobs), {
    signal: signal(),
    key: JOB_CATALOGUE_KEY,
  });
  return result.lease;
}

/** Records `run` in its job's history, as the leader does at a run's start and end. */
async function record(store: LeaseStore, lease: Lease, run: JobRun): Promise<void> {
  const key = jobHistoryKey(run.job);
  const entry = await store.readState?.(lease.election, { signal: signal(), key });
  const runs = (entry?.value as { runs: JobRun[] } | undefined)?.runs ?? [];
  await store.writeState?.(lease, encodeJobHistory(mergeJobRun(runs, run)), { signal: signal(), key });
}

/**
 * The leader's side of run-now: claims the command of `job` once it appears, records the run as
 * running, then (after `tookMs`) as finished with `outcome`.
 */
async function actAsLeader(store: LeaseStore, lease: Lease, job: string, outcome: 'ok' | 'error', tookMs = 50) {
  for (let i = 0; i < 200; i += 1) {
    const [command] = await claimRunNowCommands(store, lease.election, (c) => c.job === job, signal());
    if (command) {
      const start: JobRun = {
        job,
        startedAt: Date.now(),
        outcome: 'running',
        by: 'pod-a',
        term: lease.term,
        trigger: 'run-now',
        commandId: command.id,
      };
      await record(store, lease, start);
      await delay(tookMs);
      const end = { ...start, outcome, finishedAt: start.startedAt + tookMs, durationMs: tookMs };
      await record(store, lease, outcome === 'error' ? { ...end, error: 'ledger locked' } : end);
      return command;
    }
    await delay(20);
  }
  throw new Error('no command to claim');
}

function run(job: string, startedAt: number, extra: Partial<JobRun> = {}): JobRun {
  return { job, startedAt, outcome: 'ok', by: 'pod-a', term: 1, trigger: 'schedule', ...extra };
}

describe('CLI jobs list', () => {
  it("shows each job of each election's catalogue: schedule, pause, last run, pending run-now", async () => {
    const store = new InMemoryLeaseStore();
    const lease = await leader(store, 'billing');
    await leader(store, 'reports', [{ name: 'Export.daily', schedule: 'cron 0 0 3 * * *' }]);
    await store.acquire({ election: 'no-jobs', identity: 'old', leaseDurationMs: 30_000, signal: signal() });
    const now = Date.now();
    await record(store, lease, run('Reports.nightly', now - 65_000, { finishedAt: now - 64_000, durationMs: 1_200 }));
    await record(store, lease, run('warm-cache', now - 5_000, { outcome: 'running' }));
    await pauseJobCommand(store, 'billing', { job: 'Reports.nightly', by: 'ops', reason: 'incident 42' }, signal());
    await runNowCommand(store, 'billing', { job: 'Boot.once', by: 'ops' }, signal());
    // Paused, then removed from the app: only the board still names it.
    await pauseJobCommand(store, 'billing', { job: 'Old.job', by: 'ops' }, signal());
    const result = await cli(['jobs', 'list'], store);
    expect(result).toMatchObject({ code: ExitCode.ok, stderr: '' });
    const [header, ...rows] = result.stdout.split('\n').map((line) => line.split(/\s{2,}/));
    expect(header).toEqual(['ELECTION', 'JOB', 'SCHEDULE', 'STATE', 'LAST RUN', 'RUN NOW']);
    expect(rows).toEqual([
      [
        'billing',
        'Reports.nightly',
        'cron 0 0 2 * * *, once per tick',
        expect.stringMatching(/^paused by ops \(incident 42\), [\d.]+ m?s ago$/),
        expect.stringMatching(/^ok in 1\.2 s, 1 min \d+ s ago, on pod-a \(term 1\)$/),
        '-',
      ],
      [
        'billing',
        'warm-cache',
        'interval 5000 ms',
        'active',
        expect.stringMatching(/^running since \d+\.\d s ago, on pod-a \(term 1\)$/),
        '-',
      ],
      ['billing', 'Boot.once', 'timeout 1000 ms', 'active', 'never', '1 pending'],
      ['billing', 'Old.job', '(not in catalogue)', expect.stringMatching(/^paused by ops, /), 'never', '-'],
      ['reports', 'Export.daily', 'cron 0 0 3 * * *', 'active', 'never', '-'],
    ]);
  });

  it('--json: one document per election with the catalogue writer, null where absent', async () => {
    const store = new InMemoryLeaseStore();
    const lease = await leader(store, 'billing', CATALOGUE.slice(0, 2));
    const last = run('warm-cache', Date.now() - 1_000, { finishedAt: Date.now() - 900, durationMs: 100 });
    await record(store, lease, last);
    const command = await runNowCommand(store, 'billing', { job: 'warm-cache', by: 'ops' }, signal());
    await pauseJobCommand(store, 'billing', { job: 'warm-cache', by: 'ops', at: 5 }, signal());
    const result = await cli(['jobs', 'list', '--json', '--election', 'billing,idle'], store);
    expect(result.code).toBe(ExitCode.ok);
    expect(JSON.parse(result.stdout) as JobsDocument).toEqual({
      store: 'InMemoryLeaseStore',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      elections: [
        {
          election: 'billing',
          catalogue: { by: 'pod-a', term: 1 },
          jobs: [
            {
              name: 'Reports.nightly',
              schedule: 'cron 0 0 2 * * *',
              onceTick: true,
              inCatalogue: true,
              paused: null,
              lastRun: null,
              pendingRunNow: [],
            },
            {
              name: 'warm-cache',
              schedule: 'interval 5000 ms',
              onceTick: false,
              inCatalogue: true,
              paused: { by: 'ops', at: 5 },
              lastRun: last,
              pendingRunNow: [command],
            },
          ],
        },
        { election: 'idle', catalogue: null, jobs: [] },
      ],
    });
  });

  it('says so when no election publishes a catalogue, and names a given election without one', async () => {
    const store = new InMemoryLeaseStore();
    await store.acquire({ election: 'old', identity: 'pod-a', leaseDurationMs: 30_000, signal: signal() });
    expect(await cli(['jobs', 'list'], store)).toEqual({
      code: ExitCode.ok,
      stdout: expect.stringMatching(/^no election in this namespace publishes a job catalogue/),
      stderr: '',
    });
    expect(await cli(['jobs', 'list', '--election', 'old'], store)).toEqual({
      code: ExitCode.ok,
      stdout: '',
      stderr: '"old": no job catalogue (no leader of a version with job control yet)',
    });
  });
});

describe('CLI jobs pause and resume', () => {
  it('says whether it changed the board by what it wrote, not by the time: two calls in one millisecond', async () => {
    const store = new InMemoryLeaseStore();
    await leader(store, 'billing');
    const lines: string[] = [];
    const output = { out: (text: string) => void lines.push(text), err: () => undefined, tty: false };
    const options = { job: 'Reports.nightly', requestedBy: BY, timeoutMs: 5_000, json: true, now: () => 1_000 };
    const changed = () => (JSON.parse(lines.at(-1) ?? '{}') as { changed: boolean }).changed;
    await jobsPauseCommand(store, { ...options, reason: 'incident 42' }, output as never);
    expect(changed()).toBe(true);
    await jobsPauseCommand(store, { ...options, reason: 'incident 42' }, output as never);
    expect(changed()).toBe(false);
    await jobsResumeCommand(store, options, output as never);
    expect(changed()).toBe(true);
    await jobsResumeCommand(store, options, output as never);
    expect(changed()).toBe(false);
  });

  it('pauses a job of the one election that has it, recording who and why; again: nothing changes', async () => {
    const store = new InMemoryLeaseStore();
    await leader(store, 'billing');
    const first = await cli(['jobs', 'pause', 'Reports.nightly', '--reason', 'incident 42'], store);
    expect(first).toEqual({
      code: ExitCode.ok,
      stdout: `job "Reports.nightly" of "billing" paused by ${BY} (incident 42): the leader skips its scheduled runs from its next read of the board until it is resumed`,
      stderr: '',
    });
    const { board } = await readJobBoard(store, 'billing', signal());
    expect(board.paused).toEqual({ 'Reports.nightly': { reason: 'incident 42', by: BY, at: expect.any(Number) } });
    const again = await cli(['jobs', 'pause', 'Reports.nightly', '--reason', 'incident 42', '--json'], store);
    expect(JSON.parse(again.stdout) as JobPauseDocument).toEqual({
      election: 'billing',
      job: 'Reports.nightly',
      paused: board.paused['Reports.nightly'],
      changed: false,
    });
    const text = await cli(['jobs', 'pause', 'Reports.nightly', '--reason', 'incident 42'], store);
    expect(text.stdout).toMatch(
      /is already paused for that reason, by cli:tester@test-host [\d.]+ m?s ago: nothing changed$/,
    );
  });

  it('resumes a paused job (also one only the board still names); resuming again changes nothing', async () => {
    const store = new InMemoryLeaseStore();
    await leader(store, 'billing');
    await pauseJobCommand(store, 'billing', { job: 'warm-cache', by: 'ops' }, signal());
    await pauseJobCommand(store, 'billing', { job: 'Removed.job', by: 'ops' }, signal());
    expect((await cli(['jobs', 'resume', 'warm-cache'], store)).stdout).toBe(
      'job "warm-cache" of "billing" resumed: the leader runs it on schedule again from its next read of the board',
    );
    expect(JSON.parse((await cli(['jobs', 'resume', 'warm-cache', '--json'], store)).stdout)).toEqual({
      election: 'billing',
      job: 'warm-cache',
      changed: false,
    });
    expect((await cli(['jobs', 'resume', 'Removed.job', '--election', 'billing'], store)).code).toBe(ExitCode.ok);
    const { board } = await readJobBoard(store, 'billing', signal());
    expect(board.paused).toEqual({});
    expect(board.resumed).toEqual({
      'warm-cache': { by: BY, at: expect.any(Number) },
      'Removed.job': { by: BY, at: expect.any(Number) },
    });
    // Pausing a job only the board names is refused: it is not in the catalogue.
    expect((await cli(['jobs', 'pause', 'Removed.job'], store)).code).toBe(ExitCode.usage);
  });
});

describe('CLI jobs run', () => {
  it('queues a run-now command and says when nobody leads', async () => {
    const store = new InMemoryLeaseStore();
    const lease = await leader(store, 'billing');
    const queued = await cli(['jobs', 'run', 'Boot.once', '--json'], store);
    expect(queued.code).toBe(ExitCode.ok);
    const document = JSON.parse(queued.stdout) as JobRunDocument;
    expect(document).toEqual({
      election: 'billing',
      job: 'Boot.once',
      command: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), job: 'Boot.once', by: BY, at: expect.any(Number) },
    });
    expect((await readJobBoard(store, 'billing', signal())).board.runNow).toEqual([document.command]);
    expect(queued.stderr).toBe('');
    await store.release(lease, { signal: signal() });
    const leaderless = await cli(['jobs', 'run', 'Boot.once'], store);
    expect(leaderless.stdout).toMatch(/^run of job "Boot.once" in "billing" requested \(command [0-9a-f-]{36}\)/);
    expect(leaderless.stderr).toBe('nobody leads "billing" right now: the next leader runs it when its term starts');
  });

  it('--wait follows the run of its command to its end: 0 when ok, 7 when it failed', async () => {
    const store = new InMemoryLeaseStore();
    const lease = await leader(store, 'billing');
    const [ok] = await Promise.all([
      cli(['jobs', 'run', 'warm-cache', '--wait', '--interval', '50'], store),
      actAsLeader(store, lease, 'warm-cache', 'ok', 300),
    ]);
    expect(ok.code).toBe(ExitCode.ok);
    expect(ok.stdout.split('\n')[1]).toBe('job "warm-cache" ran on pod-a (term 1): ok in 300 ms');
    expect(ok.stderr).toBe('waiting up to 60000 ms for the run to finish…\nrunning on pod-a (term 1)…');
    const [failed, command] = await Promise.all([
      cli(['jobs', 'run', 'warm-cache', '--wait', '--json', '--interval', '50'], store),
      actAsLeader(store, lease, 'warm-cache', 'error'),
    ]);
    expect(failed.code).toBe(ExitCode.runFailed);
    expect(JSON.parse(failed.stdout) as JobRunDocument).toEqual({
      election: 'billing',
      job: 'warm-cache',
      command,
      run: expect.objectContaining({ commandId: command.id, outcome: 'error', error: 'ledger locked', by: 'pod-a' }),
    });
  });

  it('--wait exits 5 at the timeout, saying whether the command is still queued', async () => {
    const store = new InMemoryLeaseStore();
    await leader(store, 'billing');
    const started = Date.now();
    const result = await cli(['jobs', 'run', 'warm-cache', '--wait', '--timeout', '400', '--interval', '50'], store);
    expect(result.code).toBe(ExitCode.waitTimedOut);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(result.stderr.split('\n').at(-1)).toMatch(
      /^no finished run of command [0-9a-f-]{36} within 400 ms: still queued, no leader has claimed it/,
    );
    const json = await cli(['jobs', 'run', 'warm-cache', '--wait', '--timeout', '200', '--json'], store);
    expect(json.code).toBe(ExitCode.waitTimedOut);
    expect(JSON.parse(json.stdout)).toMatchObject({ run: null });
  });

  it('exits 3 when the run-now queue is full', async () => {
    const store = new InMemoryLeaseStore();
    await leader(store, 'billing');
    const full: JobBoard = {
      v: 1,
      paused: {},
      runNow: Array.from({ length: MAX_RUN_NOW_QUEUE }, (_, i) => ({ id: `c${i}`, job: 'warm-cache', by: 'x', at: 1 })),
    };
    await store.writeRecord('billing', JOB_BOARD_KEY, full, { signal: signal(), ifVersion: null });
    const result = await cli(['jobs', 'run', 'warm-cache'], store);
    expect(result.code).toBe(ExitCode.store);
    expect(result.stderr).toMatch(
      /^the job board refused the command: the job board already holds 100 run-now commands/,
    );
  });
});

describe('CLI jobs history', () => {
  it('lists the runs newest first as a table, or as JSON; says so when there is none', async () => {
    const store = new InMemoryLeaseStore();
    const lease = await leader(store, 'billing');
    const t = Date.UTC(2026, 10, 23, 10, 0, 0);
    await record(store, lease, run('Reports.nightly', t, { tick: t, finishedAt: t + 1_500, durationMs: 1_500 }));
    await record(
      store,
      lease,
      run('Reports.nightly', t + 60_000, {
        trigger: 'run-now',
        commandId: 'c1',
        outcome: 'error',
        durationMs: 20,
        error: 'boom',
      }),
    );
    const table = await cli(['jobs', 'history', 'Reports.nightly'], store);
    expect(table.code).toBe(ExitCode.ok);
    expect(table.stdout.split('\n').map((line) => line.split(/\s{2,}/))).toEqual([
      ['STARTED', 'TRIGGER', 'OUTCOME', 'DURATION', 'BY', 'TERM', 'ERROR'],
      ['2026-11-23T10:01:00.000Z', 'run now', 'error', '20 ms', 'pod-a', '1', 'boom'],
      ['2026-11-23T10:00:00.000Z', 'schedule (tick)', 'ok', '1.5 s', 'pod-a', '1', '-'],
    ]);
    const json = JSON.parse((await cli(['jobs', 'history', 'Reports.nightly', '--json'], store)).stdout);
    expect((json as JobHistoryDocument).runs.map((r) => r.startedAt)).toEqual([t + 60_000, t]);
    expect(await cli(['jobs', 'history', 'warm-cache', '--election', 'billing'], store)).toEqual({
      code: ExitCode.ok,
      stdout: 'no recorded run of job "warm-cache" in "billing"',
      stderr: '',
    });
  });
});

describe('CLI jobs: errors and exit codes', () => {
  it('exits 2 for a job no catalogue has, an election without catalogue, or a job in several elections', async () => {
    const store = new InMemoryLeaseStore();
    await leader(store, 'billing');
    await leader(store, 'reports', [{ name: 'warm-cache', schedule: 'interval 1000 ms' }]);
    await store.acquire({ election: 'old', identity: 'x', leaseDurationMs: 30_000, signal: signal() });
    const cases: Array<[string[], RegExp]> = [
      [['jobs', 'pause', 'nope', '--election', 'reports'], /^"reports" has no job "nope"; its jobs: "warm-cache"$/],
      [
        ['jobs', 'run', 'nope'],
        /^no election of this namespace has a job "nope" \(2 election\(s\) publish a job catalogue\)/,
      ],
      [
        ['jobs', 'history', 'x', '--election', 'old'],
        /^"old" has no job catalogue: no leader of a version with job control/,
      ],
      [
        ['jobs', 'resume', 'warm-cache'],
        /^job "warm-cache" is in several elections \(billing, reports\): pass --election$/,
      ],
    ];
    for (const [argv, message] of cases) {
      const result = await cli(argv, store);
      expect({ argv, code: result.code }).toEqual({ argv, code: ExitCode.usage });
      expect(result.stderr).toMatch(message);
    }
    expect((await readJobBoard(store, 'reports', signal())).version).toBeNull();
  });

  it('exits 6 on a store without shared records or leader state, or that cannot list elections', async () => {
    const store = new InMemoryLeaseStore();
    await leader(store, 'billing');
    const noRecords = Object.assign(Object.create(store) as LeaseStore, { writeRecord: undefined });
    const result = await cli(['jobs', 'list'], noRecords);
    expect(result).toMatchObject({ code: ExitCode.unsupported });
    expect(result.stderr).toBe(
      'InMemoryLeaseStore cannot control jobs: it implements no readState / readRecord / writeRecord (a store of an older version, or a third-party store)',
    );
    const noList = Object.assign(Object.create(store) as LeaseStore, { listElections: undefined });
    const unlisted = await cli(['jobs', 'pause', 'warm-cache'], noList);
    expect(unlisted.code).toBe(ExitCode.unsupported);
    expect(unlisted.stderr).toMatch(/cannot find the election of a job \(pass --election\)/);
    expect((await cli(['jobs', 'pause', 'warm-cache', '--election', 'billing'], noList)).code).toBe(ExitCode.ok);
  });

  it.each([
    [['jobs'], /Usage: leaderlease jobs/],
    [['jobs', 'pause'], /missing required argument 'name'/],
    [['jobs', 'pause', 'a\u0007b'], /job names are 1-500 characters without control characters/],
    [['jobs', 'pause', 'a', '--reason', 'x\ny'], /--reason must be non-empty text of at most 500 characters/],
    [['jobs', 'run', 'a', '--timeout', '0'], /--timeout must be a whole number of milliseconds from 1 to 86400000/],
    [['jobs', 'list', '--election', 'bad name!'], /election names are 1-200 letters/],
  ])('exits 2 on a usage error: %j', async (argv, message) => {
    const result = await cli(argv, new InMemoryLeaseStore());
    expect(result.code).toBe(ExitCode.usage);
    expect(result.stderr).toMatch(message);
  });

  it('--help lists the jobs commands and exit code 7', async () => {
    const top = await cli(['--help'], undefined);
    expect(top.stdout).toMatch(/jobs\s+list, pause, resume and run/);
    expect(top.stdout).toContain('7  jobs run --wait: the run ended with an error or was aborted');
    const jobs = await cli(['jobs', '--help'], undefined);
    expect(jobs.stdout).toMatch(/list \[options\][\s\S]*pause \[options\] <name>[\s\S]*history \[options\] <name>/);
  });
});

// Through the CLI's own store factory (--table / --prefix, createTable: false) on the real servers.
describe.each([
  ['postgres', () => ({ name: uniqueName('le_jobs'), url: PG_URL })],
  ['redis', () => ({ name: `${uniqueName('le_jobs')}:`, url: REDIS_URL })],
])('CLI jobs against the real %s store', (kind, namespace) => {
  const { name, url } = namespace();
  const app: LeaseStore =
    kind === 'postgres'
      ? new PostgresLeaseStore({ connection: url, table: name })
      : new RedisLeaseStore({ connection: url, keyPrefix: name });
  const argv = (...args: string[]) => [
    ...args,
    '--store',
    kind,
    ...(kind === 'postgres' ? ['--table'] : ['--prefix']),
    name,
  ];
  const real = (args: string[]) =>
    cli(argv(...args), undefined, { buildStore: undefined, env: { LEADER_ELECTION_CONNECTION: url } });

  afterAll(async () => {
    await app.close?.();
    if (kind === 'postgres') await dropPostgresTables(name);
  });

  it('lists, pauses, resumes, runs with --wait and shows the history', async () => {
    const lease = await leader(app, 'billing');
    expect((await real(['jobs', 'pause', 'Reports.nightly', '--reason', 'incident'])).code).toBe(ExitCode.ok);
    const listed = JSON.parse((await real(['jobs', 'list', '--json'])).stdout) as JobsDocument;
    expect(listed.elections.map((e) => e.election)).toEqual(['billing']);
    expect(listed.elections[0].jobs[0]).toMatchObject({
      name: 'Reports.nightly',
      paused: { reason: 'incident', by: BY },
    });
    const [ran] = await Promise.all([
      real(['jobs', 'run', 'Reports.nightly', '--wait', '--interval', '50', '--timeout', '20000']),
      actAsLeader(app, lease, 'Reports.nightly', 'ok'),
    ]);
    expect(ran).toMatchObject({ code: ExitCode.ok });
    expect(ran.stdout).toMatch(/job "Reports.nightly" ran on pod-a \(term 1\): ok in 50 ms$/);
    expect((await real(['jobs', 'resume', 'Reports.nightly'])).stdout).toMatch(/resumed/);
    const history = JSON.parse((await real(['jobs', 'history', 'Reports.nightly', '--json'])).stdout);
    expect(history.runs).toEqual([expect.objectContaining({ trigger: 'run-now', outcome: 'ok', by: 'pod-a' })]);
    expect((await readJobBoard(app, 'billing', signal())).board).toMatchObject({ paused: {}, runNow: [] });
  });
});

describe('CLI jobs with a read-only PostgreSQL role', () => {
  const table = uniqueName('le_jobs_ro');
  const role = uniqueName('le_ro');
  const app = new PostgresLeaseStore({ connection: PG_URL, table });
  const sql = async (text: string) => {
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };

  afterAll(async () => {
    await app.close();
    await dropPostgresTables(table);
    await sql(`DROP ROLE IF EXISTS "${role}"`);
  });

  it('lists and shows history; a command exits 3 with permission denied and writes nothing', async () => {
    await leader(app, 'billing');
    await sql(`CREATE ROLE "${role}" LOGIN`);
    await sql(`GRANT USAGE ON SCHEMA public TO "${role}"; GRANT SELECT ON "${table}" TO "${role}"`);
    const readOnly = PG_URL.replace('postgres://postgres@', `postgres://${role}@`);
    const asRole = (args: string[]) =>
      cli([...args, '--store', 'postgres', '--table', table], undefined, {
        buildStore: undefined,
        env: { LEADER_ELECTION_CONNECTION: readOnly },
      });
    try {
      expect((await asRole(['jobs', 'list'])).stdout).toMatch(/^ELECTION {2}JOB/);
      expect((await asRole(['jobs', 'history', 'warm-cache'])).code).toBe(ExitCode.ok);
      const paused = await asRole(['jobs', 'pause', 'warm-cache']);
      expect(paused.code).toBe(ExitCode.store);
      expect(paused.stderr).toMatch(/permission denied/);
      expect((await readJobBoard(app, 'billing', signal())).version).toBeNull();
    } finally {
      await sql(`REVOKE ALL ON "${table}" FROM "${role}"; REVOKE USAGE ON SCHEMA public FROM "${role}"`);
    }
  });
});
