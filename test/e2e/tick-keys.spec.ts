// Issue 24, defect 4: once-per-tick jobs are keyed by their schedule name, else `Class.method`.
// Two classes of the same name (two modules, two files) used to share one tick record and one
// cached schedule: each ran about half the ticks, or on the other's expression. Real Nest apps,
// real @nestjs/schedule timers.
import 'reflect-metadata';
import { type INestApplication, Injectable, Module } from '@nestjs/common';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import { LeaderElectionModule } from '../../lib/nest/leader-election.module.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { closeAll, createApp, electionOf, SLACK_MS, waitFor } from './helpers.js';

/** Every run: which module's job, the wall time. */
const runs: Array<{ job: string; at: number }> = [];

/** A class named `Jobs` with a once-per-tick `run()` on `cron`, as two modules of an app would each write it. */
function jobsNamedJobs(tag: string, cron: string, options: { name?: string; election?: string } = {}) {
  @Injectable()
  class Jobs {
    @Cron(cron, options.name ? { name: options.name } : {})
    @LeaderOnly({ once: 'per-tick', election: options.election })
    run(): void {
      runs.push({ job: tag, at: Date.now() });
    }
  }
  return Jobs;
}

/** A feature module providing `jobs` (so both providers are named `Jobs`, each in its own module). */
function feature(moduleName: string, jobs: ReturnType<typeof jobsNamedJobs>) {
  @Module({ providers: [jobs] })
  class Feature {}
  Object.defineProperty(Feature, 'name', { value: moduleName });
  return Feature;
}

/** Whole seconds in which `tag` ran. */
function secondsOf(tag: string): number[] {
  return runs.filter((run) => run.job === tag).map((run) => Math.round(run.at / 1000));
}

describe('once-per-tick job keys (two classes of the same name)', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await closeAll(apps);
    runs.length = 0;
  });

  it('two once-per-tick jobs on one key in one election fail startup, naming both providers and the fix', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        LeaderElectionModule.forRoot({ store: new InMemoryLeaseStore(), election: 'jobs', identity: 'a' }),
        feature('BillingModule', jobsNamedJobs('billing', '* * * * * *')),
        feature('ReportsModule', jobsNamedJobs('reports', '* * * * * *')),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app); // closed even when init fails: the election may have started
    const error = await app.init().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    const message = error?.message ?? '';
    expect(message).toContain('"tick:Jobs.run" of election "jobs"');
    expect(message).toContain('Jobs.run (provider Jobs in BillingModule)');
    expect(message).toContain('Jobs.run (provider Jobs in ReportsModule)');
    expect(message).toContain("@Cron(expression, { name: 'reports.run' })");
  });

  it('one class provided by two modules is one job: no clash, each tick runs once', async () => {
    const Jobs = jobsNamedJobs('shared', '* * * * * *');
    const app = await createApp({
      election: { store: new InMemoryLeaseStore(), identity: 'a' },
      imports: [feature('BillingModule', Jobs), feature('ReportsModule', Jobs)],
    });
    apps.push(app);
    await waitFor('3 runs', () => secondsOf('shared').length >= 3, 4_000 + SLACK_MS);
    const seconds = secondsOf('shared');
    expect(new Set(seconds).size).toBe(seconds.length);
  });

  it('with a schedule name each runs every tick on its own expression, its own record', async () => {
    const app = await createApp({
      election: { store: new InMemoryLeaseStore(), identity: 'a' },
      imports: [
        feature('BillingModule', jobsNamedJobs('every-second', '* * * * * *')),
        feature('ReportsModule', jobsNamedJobs('every-other', '*/2 * * * * *', { name: 'reports-run' })),
      ],
    });
    apps.push(app);
    // Not thrown here: the assertions below say what went wrong (before the fix, about half ran).
    await waitFor('6 runs', () => secondsOf('every-second').length >= 6, 6_000 + SLACK_MS).catch(() => undefined);
    const everySecond = secondsOf('every-second');
    const everyOther = secondsOf('every-other');
    // Before the fix the second class ran under the first's key and schedule: both every second,
    // each on about half of them.
    expect(everySecond.length).toBeGreaterThanOrEqual(6);
    expect(new Set(everySecond).size).toBe(everySecond.length);
    expect(Math.max(...everySecond) - Math.min(...everySecond) + 1).toBeLessThanOrEqual(everySecond.length + 1);
    expect(everyOther.length).toBeGreaterThanOrEqual(2);
    for (const second of everyOther) expect(second % 2).toBe(0);
    const election = electionOf(app);
    expect((await election.readState<number>('tick:Jobs.run'))?.value).toBe(Math.max(...everySecond) * 1000);
    expect((await election.readState<number>('tick:reports-run'))?.value).toBe(Math.max(...everyOther) * 1000);
  });

  it('the same key in two elections is two records: allowed, and both run every tick', async () => {
    const app = await createApp({
      election: {
        store: new InMemoryLeaseStore(),
        identity: 'a',
        election: undefined,
        elections: ['billing', 'reports'],
      },
      imports: [
        feature('BillingModule', jobsNamedJobs('billing', '* * * * * *', { election: 'billing' })),
        feature('ReportsModule', jobsNamedJobs('reports', '* * * * * *', { election: 'reports' })),
      ],
    });
    apps.push(app);
    await waitFor(
      '4 runs of each',
      () => secondsOf('billing').length >= 4 && secondsOf('reports').length >= 4,
      6_000 + SLACK_MS,
    );
    for (const tag of ['billing', 'reports']) {
      const seconds = secondsOf(tag);
      expect(new Set(seconds).size).toBe(seconds.length);
      // Each runs (nearly) every second: none steals the other's ticks.
      expect(Math.max(...seconds) - Math.min(...seconds) + 1).toBeLessThanOrEqual(seconds.length + 1);
    }
  });
});
