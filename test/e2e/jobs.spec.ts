import 'reflect-metadata';
import { type INestApplication, Injectable } from '@nestjs/common';
import { Cron, Interval, SchedulerRegistry, Timeout } from '@nestjs/schedule';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import { CaptureLogger, closeAll, createApp, electionOf, RETRY_MS, RecordingStore, sleep, waitFor } from './helpers.js';

/** Followers that poll this rarely can only lead quickly if the release was pushed to them. */
const SLOW_POLL_MS = 30_000;
/** Push: one in-process notification and one acquire, with event-loop lag on a loaded machine. */
const PUSH_HANDOVER_MS = 500;
/** Polling: the next poll (retry interval +15 % jitter), one acquire, event-loop lag; a follower
 * that sat out a round (2 x retry) would miss it. */
const POLL_HANDOVER_MS = RETRY_MS * 1.15 + 400;

/** Every run of every job, in every app of the test: which app ran what, when. */
const runs: Array<{ app: string; job: string; at: number }> = [];

@Injectable()
class Jobs {
  constructor(private readonly election: LeaderElectionService) {}

  // Schedule decorator above ours (applied after it: writes onto the wrapper).
  @Interval('tick-schedule-outer', 50)
  @LeaderOnly()
  tickOuter(): void {
    runs.push({ app: this.election.identity, job: 'tick-outer', at: Date.now() });
  }

  // Ours above (applied after @Interval: copies its metadata from the original).
  @LeaderOnly()
  @Interval('tick-schedule-inner', 50)
  tickInner(): void {
    runs.push({ app: this.election.identity, job: 'tick-inner', at: Date.now() });
  }

  @Cron('* * * * * *', { name: 'cron-schedule-outer' })
  @LeaderOnly()
  cronOuter(): void {
    runs.push({ app: this.election.identity, job: 'cron-outer', at: Date.now() });
  }

  @LeaderOnly()
  @Cron('* * * * * *', { name: 'cron-schedule-inner' })
  cronInner(): void {
    runs.push({ app: this.election.identity, job: 'cron-inner', at: Date.now() });
  }

  @Timeout('boot-schedule-outer', 20)
  @LeaderOnly()
  bootOuter(): void {
    runs.push({ app: this.election.identity, job: 'boot-outer', at: Date.now() });
  }

  @LeaderOnly()
  @Timeout('boot-schedule-inner', 20)
  async bootInner(): Promise<void> {
    runs.push({ app: this.election.identity, job: 'boot-inner', at: Date.now() });
  }
}

/** A job that is called by hand, to control exactly when it runs relative to shutdown. */
@Injectable()
class SlowJob {
  readonly events: Array<{ what: string; at: number }> = [];
  constructor(private readonly election: LeaderElectionService) {}

  @LeaderOnly()
  async run(ms: number, options: { honourAbort?: boolean } = {}): Promise<string> {
    const signal = this.election.signal;
    this.events.push({ what: 'start', at: Date.now() });
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (options.honourAbort && signal.aborted) {
        this.events.push({ what: 'aborted', at: Date.now() });
        return 'aborted';
      }
      await sleep(10);
    }
    this.events.push({ what: 'end', at: Date.now() });
    return 'done';
  }
}

describe('@LeaderOnly jobs with @nestjs/schedule, several apps over one store', () => {
  const apps: INestApplication[] = [];
  afterEach(() => closeAll(apps));
  beforeEach(() => {
    runs.length = 0;
  });

  async function start(
    store: RecordingStore,
    ids: string[],
    extra: { shutdownTimeoutMs?: number; retryIntervalMs?: number } = {},
    logger?: CaptureLogger,
  ) {
    for (const identity of ids) {
      apps.push(await createApp({ election: { store, identity, ...extra }, providers: [Jobs, SlowJob], logger }));
    }
    return apps.slice(-ids.length);
  }

  it('registers the job in both decorator orders and runs it on exactly one of three apps', async () => {
    const store = new RecordingStore();
    const [a, b, c] = await start(store, ['app-a', 'app-b', 'app-c']);
    for (const app of [a, b, c]) {
      const registry = app.get(SchedulerRegistry);
      expect(registry.getIntervals().sort()).toEqual(['tick-schedule-inner', 'tick-schedule-outer']);
      expect([...registry.getCronJobs().keys()].sort()).toEqual(['cron-schedule-inner', 'cron-schedule-outer']);
    }
    // The first app to initialise won during its module init, before any other started.
    expect([a, b, c].map((app) => electionOf(app).isLeader())).toEqual([true, false, false]);

    await waitFor(
      'both interval jobs to run several times',
      () => runs.filter((r) => r.job.startsWith('tick')).length >= 10,
    );
    await sleep(1_100); // every app's cron fired at least once in this window
    const ran = new Set(runs.map((r) => r.app));
    expect([...ran]).toEqual(['app-a']);
    for (const job of ['tick-outer', 'tick-inner', 'cron-outer', 'cron-inner', 'boot-outer', 'boot-inner']) {
      expect(runs.some((r) => r.job === job)).toBe(true);
    }
    // @Timeout: fired once on the leader (elected in module init, before schedule mounted it), skipped elsewhere.
    expect(
      runs
        .filter((r) => r.job.startsWith('boot'))
        .map((r) => r.job)
        .sort(),
    ).toEqual(['boot-inner', 'boot-outer']);
  });

  it('skips a call on a follower: returns undefined (a promise of it for async methods), never throws; one debug line per leadership change, repeats not logged', async () => {
    const store = new RecordingStore();
    const logger = new CaptureLogger();
    const [leader, follower, third] = await start(store, ['app-a', 'app-b', 'app-c'], {}, logger);
    const skipLines = () => logger.matching('debug', /^skipped SlowJob\.run: not the leader of "e2e" \(further skips/);
    const skipped = follower.get(SlowJob).run(1);
    expect(skipped).toBeInstanceOf(Promise);
    await expect(skipped).resolves.toBeUndefined();
    expect(follower.get(Jobs).tickOuter()).toBeUndefined();
    expect(follower.get(SlowJob).events).toEqual([]);
    expect(skipLines()).toHaveLength(1);
    expect(logger.matching('debug', /^skipped Jobs\.tickOuter: not the leader of "e2e"/).length).toBeGreaterThanOrEqual(
      1,
    );
    // Repeats are skipped the same way (and counted: metrics.spec), but not logged again.
    const service = follower.get(LeaderElectionService);
    for (let i = 0; i < 5; i++) await expect(follower.get(SlowJob).run(1)).resolves.toBeUndefined();
    expect(skipLines()).toHaveLength(1);
    // The follower's view changes (a handover to the third app): its next skip is logged again, once.
    await leader.get(LeaderElectionService).requestHandover({ to: 'app-c' });
    await waitFor(
      'app-c to lead and app-b to see it',
      () => electionOf(third).isLeader() && service.leaderId === 'app-c',
    );
    for (let i = 0; i < 3; i++) await follower.get(SlowJob).run(1);
    expect(skipLines()).toHaveLength(2);
    await expect(third.get(SlowJob).run(1)).resolves.toBe('done');
  });

  it('app.close() on the leader waits for a running job, then releases; a follower leads at once (pushed)', async () => {
    const store = new RecordingStore();
    // Followers poll only every 30 s here: a takeover within PUSH_HANDOVER_MS was pushed.
    const [leader, follower] = await start(store, ['app-a', 'app-b'], { retryIntervalMs: SLOW_POLL_MS });
    const followerElection = electionOf(follower);
    let electedAt = 0;
    followerElection.events$.subscribe((e) => {
      if (e.type === 'elected') electedAt = Date.now();
    });
    const job = leader.get(SlowJob);
    const running = job.run(1_000);
    await waitFor('job start', () => job.events.length > 0);

    const closeStart = Date.now();
    const closing = leader.close();
    // While draining, the leader no longer admits new work and says so.
    await waitFor('stepping down', () => electionOf(leader).status().state === 'stepping-down', 2_000, 1);
    expect(electionOf(leader).isLeader()).toBe(false);
    await expect(job.run(1)).resolves.toBeUndefined();
    expect(store.releases).toEqual([]);

    await closing;
    const closeEnd = Date.now();
    apps.splice(apps.indexOf(leader), 1);
    await expect(running).resolves.toBe('done');
    const jobEnd = job.events.find((e) => e.what === 'end')!.at;
    expect(store.releases).toHaveLength(1);
    const released = store.releases[0]!;
    expect(released.holder).toBe('app-a');
    // job started before close → job finished → lease released → close resolved.
    expect(job.events[0]!.at).toBeLessThanOrEqual(closeStart);
    expect(jobEnd).toBeLessThanOrEqual(released.at);
    expect(released.at).toBeLessThanOrEqual(closeEnd);

    await waitFor('follower takeover', () => followerElection.isLeader(), PUSH_HANDOVER_MS);
    const handoverMs = electedAt - released.at;
    expect(handoverMs).toBeLessThanOrEqual(PUSH_HANDOVER_MS);
    console.info(
      `handover after graceful close: ${handoverMs} ms after release, ${electedAt - closeStart} ms after close()`,
    );
  });

  it('without release notifications (polling only) a follower still leads within one retry interval', async () => {
    const store = new RecordingStore();
    // Like a store without watch(): followers learn of the release at their next poll.
    Object.defineProperty(store, 'watch', { value: undefined });
    const [leader, follower] = await start(store, ['app-a', 'app-b']);
    const followerElection = electionOf(follower);
    let electedAt = 0;
    followerElection.events$.subscribe((e) => {
      if (e.type === 'elected') electedAt = Date.now();
    });
    await leader.close();
    apps.splice(apps.indexOf(leader), 1);
    const releasedAt = store.releases[0]!.at;
    await waitFor('follower takeover', () => followerElection.isLeader(), POLL_HANDOVER_MS);
    // The follower sits out nothing: it polls every retry interval ±15 %.
    expect(electedAt - releasedAt).toBeLessThanOrEqual(POLL_HANDOVER_MS);
    console.info(`handover by polling: ${electedAt - releasedAt} ms after release (retry interval ${RETRY_MS} ms)`);
  });

  it('after shutdownTimeoutMs the term signal aborts and the lease is released once the job reacted', async () => {
    const store = new RecordingStore();
    const [leader] = await start(store, ['app-a', 'app-b'], { shutdownTimeoutMs: 300 });
    const job = leader.get(SlowJob);
    const running = job.run(20_000, { honourAbort: true });
    await waitFor('job start', () => job.events.length > 0);
    const closeStart = Date.now();
    await leader.close();
    apps.splice(apps.indexOf(leader), 1);
    await expect(running).resolves.toBe('aborted');
    const abortedAt = job.events.find((e) => e.what === 'aborted')!.at;
    const released = store.releases[0]!;
    expect(abortedAt - closeStart).toBeGreaterThanOrEqual(290);
    expect(abortedAt).toBeLessThanOrEqual(released.at);
    expect(Date.now() - closeStart).toBeLessThan(5_000);
  });

  it('a job that ignores the abort gets a bounded grace, then the lease is released anyway (with a warning)', async () => {
    const store = new RecordingStore();
    const logger = new CaptureLogger();
    const [leader] = await start(store, ['app-a'], { shutdownTimeoutMs: 200 }, logger);
    const job = leader.get(SlowJob);
    const running = job.run(2_000);
    await waitFor('job start', () => job.events.length > 0);
    const closeStart = Date.now();
    await leader.close();
    apps.splice(apps.indexOf(leader), 1);
    const released = store.releases[0]!;
    // 200 ms timeout + grace of min(1000, 200) ms; far less than the job's 2 s.
    expect(released.at - closeStart).toBeGreaterThanOrEqual(390);
    expect(released.at - closeStart).toBeLessThan(2_500);
    expect(job.events.some((e) => e.what === 'end')).toBe(false);
    expect(logger.matching('warn', /1 @LeaderOnly call\(s\) still running after shutdownTimeoutMs/)).toHaveLength(1);
    expect(logger.matching('warn', /releasing the lease while 1 leader-only call/)).toHaveLength(1);
    await running;
  });
});
