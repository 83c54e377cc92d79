// stuckAfterMs / resignWhenStuck: a leader whose work never returns is reported down by the health
// indicator (naming the handler) and, when asked, resigns so another replica takes over.
import 'reflect-metadata';
import { Controller, Get, type INestApplication, Injectable } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import request from 'supertest';
import { LeaderElectionService } from '../../lib/leader-election.service.js';
import { LeaderOnly } from '../../lib/leader-only.decorator.js';
import { OnElected } from '../../lib/leadership-hooks.decorator.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory.store.js';
import { LeaderElectionHealthIndicator } from '../../lib/terminus.js';
import { CaptureLogger, closeAll, createApp, electionOf, RETRY_MS, SLACK_MS, sleep, waitFor } from './helpers.js';

const STUCK_MS = 400;

/** Work that never returns, whatever happens to its term. Remembers the signal it was given. */
@Injectable()
class StuckJobs {
  signals: AbortSignal[] = [];
  constructor(private readonly election: LeaderElectionService) {}

  @LeaderOnly()
  hang(): Promise<never> {
    this.signals.push(this.election.signal);
    return new Promise<never>(() => undefined);
  }

  @LeaderOnly()
  async quick(): Promise<string> {
    await sleep(10);
    return 'done';
  }
}

@Injectable()
class StuckPump {
  @OnElected()
  pump(): Promise<never> {
    return new Promise<never>(() => undefined);
  }
}

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicator: LeaderElectionHealthIndicator,
  ) {}
  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.indicator.isHealthy('leaderElection')]);
  }
}

async function health(app: INestApplication) {
  const res = await request(app.getHttpServer()).get('/health');
  const details = (res.body as { details: { leaderElection: { status: string; reason?: string } } }).details;
  return { code: res.status, ...details.leaderElection };
}

describe('stuck leader work', () => {
  const apps: INestApplication[] = [];
  afterEach(() => closeAll(apps));

  const stuckApp = async (
    store: InMemoryLeaseStore,
    identity: string,
    options: { stuckAfterMs?: number; resignWhenStuck?: boolean },
    providers: unknown[] = [StuckJobs],
    logger?: CaptureLogger,
  ) => {
    const app = await createApp({
      election: { store, identity, retryIntervalMs: RETRY_MS, shutdownTimeoutMs: 100, ...options },
      imports: [TerminusModule],
      controllers: [HealthController],
      providers: [...(providers as never[]), LeaderElectionHealthIndicator],
      schedule: false,
      logger,
    });
    apps.push(app);
    return app;
  };

  it('reports down, naming the handler, once a @LeaderOnly call has run longer than stuckAfterMs', async () => {
    const logger = new CaptureLogger();
    const app = await stuckApp(new InMemoryLeaseStore(), 'a', { stuckAfterMs: STUCK_MS }, [StuckJobs], logger);
    expect(electionOf(app).isLeader()).toBe(true);
    // Short calls never count, however many.
    for (let i = 0; i < 3; i++) expect(await app.get(StuckJobs).quick()).toBe('done');
    void app.get(StuckJobs).hang();
    expect(await health(app)).toMatchObject({ code: 200, status: 'up' });
    await waitFor('health down', () => electionOf(app).health().healthy === false, STUCK_MS + SLACK_MS);
    const down = await health(app);
    expect(down).toMatchObject({ code: 503, status: 'down' });
    expect(down.reason).toMatch(/^stuck: StuckJobs\.hang has been running for \d+ ms \(stuckAfterMs 400\)$/);
    expect(
      logger.matching('warn', /StuckJobs\.hang has been running for \d+ ms, longer than stuckAfterMs/),
    ).toHaveLength(1);
    // Without resignWhenStuck it stays the leader, and its term's signal is untouched.
    expect(electionOf(app).isLeader()).toBe(true);
    expect(app.get(StuckJobs).signals[0].aborted).toBe(false);
  });

  it('reports an @OnElected handler that has run longer than stuckAfterMs', async () => {
    const app = await stuckApp(new InMemoryLeaseStore(), 'a', { stuckAfterMs: STUCK_MS }, [StuckPump]);
    expect(electionOf(app).isLeader()).toBe(true);
    expect(electionOf(app).health()).toEqual({ healthy: true });
    await waitFor('health down', () => electionOf(app).health().healthy === false, STUCK_MS + SLACK_MS);
    expect(electionOf(app).health().reason).toMatch(/^stuck: StuckPump\.pump has been running/);
  });

  it('is off by default: a call that never returns leaves health up', async () => {
    const app = await stuckApp(new InMemoryLeaseStore(), 'a', {});
    void app.get(StuckJobs).hang();
    await sleep(STUCK_MS * 2);
    expect(await health(app)).toMatchObject({ code: 200, status: 'up' });
  });

  it('with resignWhenStuck: the leader resigns, the stuck work signal aborts, another replica takes over', async () => {
    const store = new InMemoryLeaseStore();
    const options = { stuckAfterMs: STUCK_MS, resignWhenStuck: true };
    const a = await stuckApp(store, 'a', options);
    const b = await stuckApp(store, 'b', options);
    expect(electionOf(a).isLeader()).toBe(true);
    const startedAt = Date.now();
    void a.get(StuckJobs).hang();
    const [signal] = a.get(StuckJobs).signals;
    await waitFor('the stuck term to end', () => signal.aborted, STUCK_MS + SLACK_MS);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(STUCK_MS - 5);
    expect(electionOf(a).isLeader()).toBe(false);
    await waitFor('b to lead', () => electionOf(b).isLeader(), RETRY_MS * 3 + SLACK_MS);
    // The call still has not returned: a stays down until it does, b is up.
    expect(electionOf(a).health().reason).toMatch(/^stuck: StuckJobs\.hang/);
    expect(await health(b)).toMatchObject({ code: 200, status: 'up' });
  });

  it('validates the options, naming each and its allowed range', async () => {
    const store = new InMemoryLeaseStore();
    for (const stuckAfterMs of [0, -1, 1.5, Number.NaN, 2 ** 31, '500' as unknown as number]) {
      await expect(stuckApp(store, 'v', { stuckAfterMs })).rejects.toThrow(
        /^stuckAfterMs must be a whole number of milliseconds from 1 to 2147483647, or undefined/,
      );
    }
    await expect(stuckApp(store, 'v', { stuckAfterMs: 100, resignWhenStuck: 'yes' as never })).rejects.toThrow(
      'resignWhenStuck must be',
    );
    await expect(stuckApp(store, 'v', { resignWhenStuck: true })).rejects.toThrow(
      'resignWhenStuck: true needs stuckAfterMs',
    );
  });
});
