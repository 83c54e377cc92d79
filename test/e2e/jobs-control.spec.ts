// Issue 28's "done when", on two replicas of one app (two Nest apps in one process over one shared
// store): a job's lastRun.by names the leader on both; pauseJob asked of the follower stops the runs
// within one renew interval and the pause survives the leader's shutdown; resumeJob restarts them;
// runJobNow asked of the follower runs the job exactly once on the leader (also while paused);
// jobHistory lists runs with replica and term. On the in-memory store and on the real PostgreSQL.
import 'reflect-metadata';
import { type INestApplication, Injectable } from '@nestjs/common';
import { Cron, Interval } from '@nestjs/schedule';
import pg from 'pg';
import { readJobBoard } from '../../lib/election/job-board.calls.js';
import { UnknownJobError } from '../../lib/leadership/jobs/unknown-job.error.js';
import { currentLeadership } from '../../lib/leadership/leadership-context.js';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import { PostgresLeaseStore } from '../../lib/postgres.js';
import { FatalLeaseStoreError } from '../../lib/shared/errors.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { PG_URL, uniqueName } from '../setup/servers.js';
import { CaptureLogger, closeAll, createApp, electionOf, SLACK_MS, sleep, waitFor } from './helpers.js';

/** Every run of every job, in every app of the test. */
const runs: Array<{ app: string; job: string; at: number; term: number | undefined }> = [];

@Injectable()
class ControlledJobs {
  constructor(private readonly service: LeaderElectionService) {}

  @Interval('report.refresh', 100)
  @LeaderOnly()
  refresh(): void {
    this.note('refresh');
  }

  @LeaderOnly({ once: 'per-tick' })
  @Cron('* * * * * *', { name: 'ledger.close' })
  async close(): Promise<void> {
    this.note('close');
  }

  // Not scheduled: leader-only, but no job.
  @LeaderOnly()
  notAJob(): void {}

  private note(job: string): void {
    runs.push({ app: this.service.identity, job, at: Date.now(), term: currentLeadership()?.term });
  }
}

interface Setup {
  name: string;
  /** A store client for one replica (its own connection), and whether the app closes it. */
  store(): LeaseStore;
  leaseDurationMs: number;
  cleanup?(): Promise<void>;
}

const pgTable = uniqueName('jobs');
const shared = new InMemoryLeaseStore();
const setups: Setup[] = [
  { name: 'the in-memory store', store: () => shared, leaseDurationMs: 3_000 },
  {
    name: 'PostgreSQL',
    store: () => new PostgresLeaseStore({ connection: PG_URL, table: pgTable }),
    leaseDurationMs: 2_000,
    cleanup: async () => {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP TABLE IF EXISTS "${pgTable}"`);
      await client.end();
    },
  },
];

/** Polls an async condition until it holds; fails with `what` after `timeoutMs`. */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
  return Date.now() - start;
}

describe.each(setups)('job control on two replicas, $name', (setup) => {
  const apps: INestApplication[] = [];
  let election: string;
  let logger: CaptureLogger;
  afterEach(() => closeAll(apps));
  afterAll(() => setup.cleanup?.());
  beforeEach(() => {
    runs.length = 0;
    election = uniqueName('jobs');
    logger = new CaptureLogger();
  });

  async function start(identity: string): Promise<LeaderElectionService> {
    const store = setup.store();
    const app = await createApp({
      election: {
        store,
        election,
        identity,
        leaseDurationMs: setup.leaseDurationMs,
        closeStoreOnShutdown: store !== shared,
      },
      providers: [ControlledJobs],
      logger,
    });
    apps.push(app);
    return electionOf(app);
  }

  /**
   * Two replicas, once one of them leads: `a` the leader, `b` the follower. Whichever starts first
   * normally wins, but a first acquire slower than its call timeout (a loaded machine creating the
   * table) may leave it to the other.
   */
  async function pair() {
    const first = await start('app-1');
    const second = await start('app-2');
    await waitFor('a leader', () => first.isLeader() || second.isLeader(), setup.leaseDurationMs + SLACK_MS);
    const firstLeads = first.isLeader();
    const [a, b] = firstLeads ? [first, second] : [second, first];
    return { a, b, leaderApp: apps[apps.length - (firstLeads ? 2 : 1)] as INestApplication };
  }

  const refreshes = (app?: string) =>
    runs.filter((run) => run.job === 'refresh' && (app === undefined || run.app === app));

  it('jobs() on either replica: the registry, with the last run as the leader recorded it (lastRun.by names the leader)', async () => {
    const { a, b } = await pair();
    expect(b.isLeader()).toBe(false);
    const { renewIntervalMs } = a.timings;
    await waitFor('a few runs', () => refreshes().length >= 3);
    // Recorded at the leader's next renewal.
    await eventually(
      'the history on the store',
      async () => (await b.jobs()).find((job) => job.name === 'report.refresh')?.lastRun !== undefined,
      2 * renewIntervalMs + SLACK_MS,
    );
    for (const service of [a, b]) {
      const jobs = await service.jobs();
      expect(jobs.map((job) => job.name).sort()).toEqual(['ledger.close', 'report.refresh']);
      const refresh = jobs.find((job) => job.name === 'report.refresh');
      expect(refresh).toMatchObject({ election, schedule: 'interval 100 ms', paused: false });
      expect(refresh?.lastRun).toMatchObject({
        job: 'report.refresh',
        by: a.identity,
        term: a.term,
        trigger: 'schedule',
      });
      const close = jobs.find((job) => job.name === 'ledger.close');
      expect(close).toMatchObject({ schedule: 'cron * * * * * *', paused: false });
      const now = Date.now();
      expect(close?.nextRunAt).toBeGreaterThan(now - SLACK_MS);
      expect(close?.nextRunAt).toBeLessThanOrEqual(now + 1_000);
    }
    expect(new Set(runs.map((run) => run.app))).toEqual(new Set([a.identity]));
    expect(a.status().jobs).toMatchObject({ count: 2, paused: [], skippedWhilePaused: 0 });
    expect(b.status().jobs).toMatchObject({ count: 2, paused: null, boardReadAt: null });
  });

  it('pauseJob asked of the follower stops the runs within one renew interval; the pause survives the leader shutting down; resumeJob restarts them', async () => {
    const { a, b, leaderApp } = await pair();
    const { renewIntervalMs } = a.timings;
    await waitFor('runs on the leader', () => refreshes(a.identity).length >= 3);

    await b.pauseJob('report.refresh', { reason: 'incident 42' });
    const recordedAt = Date.now();
    // The job runs every 100 ms: stopped once none ran for half a second.
    const lastRun = () => Math.max(...refreshes().map((run) => run.at));
    await waitFor('the runs to stop', () => Date.now() - lastRun() > 500, renewIntervalMs + 2 * SLACK_MS);
    const stoppedAfter = lastRun() - recordedAt;
    console.info(`pause applied ${stoppedAfter} ms after it was recorded (renew interval ${renewIntervalMs} ms)`);
    expect(stoppedAfter).toBeLessThanOrEqual(renewIntervalMs + SLACK_MS);
    const count = refreshes().length;
    await sleep(5 * renewIntervalMs);
    expect(refreshes()).toHaveLength(count);
    expect(a.status().jobs).toMatchObject({ paused: ['report.refresh'] });
    expect(a.status().jobs?.skippedWhilePaused).toBeGreaterThan(0);
    expect(
      logger.matching(
        'log',
        new RegExp(`job "report.refresh" paused by ${b.identity} at .* \\(reason: incident 42\\)`),
      ),
    ).not.toEqual([]);
    // The other job was not paused.
    const closes = runs.filter((run) => run.job === 'close').length;
    await waitFor('the cron job still runs', () => runs.filter((run) => run.job === 'close').length > closes, 3_000);

    // The leader goes; the next one learns the pause when its term starts, before any run.
    await leaderApp.close();
    await waitFor('b leads', () => b.isLeader(), setup.leaseDurationMs + SLACK_MS);
    await sleep(5 * renewIntervalMs);
    expect(refreshes(b.identity)).toEqual([]);
    expect(b.status().jobs).toMatchObject({ paused: ['report.refresh'] });

    await b.resumeJob('report.refresh');
    const resumedAt = Date.now();
    await waitFor('runs again', () => refreshes(b.identity).length > 0, renewIntervalMs + SLACK_MS);
    console.info(`resume applied ${Date.now() - resumedAt} ms after it was recorded`);
    expect(b.status().jobs).toMatchObject({ paused: [] });
    expect(logger.matching('log', new RegExp(`job "report.refresh" resumed by ${b.identity} at`))).not.toEqual([]);
  });

  it('runJobNow asked of the follower runs the job exactly once on the leader, also while paused; jobHistory names replica and term', async () => {
    const { a, b } = await pair();
    const { renewIntervalMs } = a.timings;
    await b.pauseJob('report.refresh');
    await waitFor('the pause applied', () => a.status().jobs?.paused?.length === 1, renewIntervalMs + SLACK_MS);
    await sleep(200);
    const before = refreshes().length;

    const commandId = await b.runJobNow('report.refresh');
    await waitFor('the run', () => refreshes().length > before, renewIntervalMs + SLACK_MS);
    await sleep(5 * renewIntervalMs);
    const ran = refreshes().slice(before);
    expect(ran).toEqual([expect.objectContaining({ app: a.identity, term: a.term })]);
    expect(a.status().jobs).toMatchObject({ paused: ['report.refresh'] });

    await eventually(
      'the run in the history',
      async () => (await b.jobHistory('report.refresh')).some((run) => run.commandId === commandId),
      2 * renewIntervalMs + SLACK_MS,
    );
    const history = await b.jobHistory('report.refresh');
    expect(history.length).toBeLessThanOrEqual(20);
    const manual = history.find((run) => run.commandId === commandId);
    expect(manual).toMatchObject({ trigger: 'run-now', by: a.identity, term: a.term, outcome: 'ok' });
    expect(manual?.durationMs).toBeGreaterThanOrEqual(0);
    const starts = history.map((run) => run.startedAt);
    expect(starts).toEqual([...starts].sort((x, y) => y - x));
    expect((await a.jobHistory('report.refresh')).map((run) => run.startedAt)).toEqual(starts);
    expect(
      logger.matching(
        'log',
        new RegExp(`running job "report.refresh" now, as ${b.identity} asked at .* \\(command ${commandId}\\)`),
      ),
    ).toHaveLength(1);
  });

  it('a name no replica runs rejects with UnknownJobError before anything is written', async () => {
    const { a, b } = await pair();
    for (const call of [
      () => b.pauseJob('report.refesh'),
      () => b.resumeJob('report.refesh'),
      () => b.runJobNow('report.refesh'),
      () => b.jobHistory('report.refesh'),
      () => a.runJobNow('report.refresh', { election: 'other' }),
    ]) {
      await expect(call()).rejects.toThrow(Error);
    }
    const error = await b.pauseJob('report.refesh').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnknownJobError);
    expect(error).toMatchObject({ job: 'report.refesh', election: undefined });
    expect((error as Error).message).toContain('it has "report.refresh", "ledger.close"');
    // Nothing recorded: no board was ever written.
    expect((await readJobBoard(setup.store(), election, new AbortController().signal)).version).toBeNull();
  });
});

describe('job control on a store without shared records', () => {
  const apps: INestApplication[] = [];
  afterEach(() => closeAll(apps));

  it('warns once at startup, runs the jobs as scheduled, and rejects the calls with a FatalLeaseStoreError naming the store', async () => {
    runs.length = 0;
    const store = new InMemoryLeaseStore();
    Object.assign(store, { readRecord: undefined, writeRecord: undefined });
    const logger = new CaptureLogger();
    apps.push(await createApp({ election: { store, identity: 'app-a' }, providers: [ControlledJobs], logger }));
    const service = electionOf(apps[0] as INestApplication);
    expect(
      logger.matching('warn', /has scheduled @LeaderOnly jobs but InMemoryLeaseStore lacks shared records/),
    ).toHaveLength(1);
    await waitFor('runs', () => runs.length >= 2);
    for (const call of [() => service.pauseJob('report.refresh'), () => service.jobs()]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(FatalLeaseStoreError);
      expect((error as Error).message).toMatch(/does not support shared records/);
    }
  });
});
