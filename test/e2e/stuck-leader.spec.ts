// stuckAfterMs / resignWhenStuck: a leader whose work never returns is reported down by the health
// indicator (naming the handler) and, when asked, resigns so another replica takes over.
import 'reflect-metadata';
import { Controller, Get, type INestApplication, Injectable } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import request from 'supertest';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import { type ElectedHookEvent, OnElected } from '../../lib/nest/decorators/leadership-hooks.decorator.js';
import { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
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

/** A queue pump: runs for the whole term by design, until the term's signal aborts. */
@Injectable()
class QueuePump {
  signals: AbortSignal[] = [];
  @OnElected({ stuckAfterMs: false })
  pump({ signal }: ElectedHookEvent): Promise<void> {
    this.signals.push(signal);
    return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
}

/** An @OnElected handler blocked on something that never answers; it honours its term's signal. */
@Injectable()
class BlockedOnElected {
  signals: AbortSignal[] = [];
  @OnElected()
  start({ signal }: ElectedHookEvent): Promise<void> {
    this.signals.push(signal);
    return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
}

/** Thresholds per handler: a long batch allowed longer than the module's, one watched on its own. */
@Injectable()
class OwnThresholds {
  @LeaderOnly({ stuckAfterMs: 60_000 })
  longBatch(): Promise<never> {
    return new Promise<never>(() => undefined);
  }

  @LeaderOnly({ stuckAfterMs: STUCK_MS })
  watchedAlone(): Promise<never> {
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

  it('does not count a queue pump that opted out (@OnElected({ stuckAfterMs: false })), while a job that never returns still is', async () => {
    const logger = new CaptureLogger();
    const app = await stuckApp(
      new InMemoryLeaseStore(),
      'a',
      { stuckAfterMs: STUCK_MS },
      [QueuePump, StuckJobs],
      logger,
    );
    expect(electionOf(app).isLeader()).toBe(true);
    const [signal] = app.get(QueuePump).signals;
    expect(signal.aborted).toBe(false);
    // The pump runs well past stuckAfterMs: still up, nothing logged.
    await sleep(STUCK_MS * 2 + 200);
    expect(await health(app)).toMatchObject({ code: 200, status: 'up' });
    expect(logger.matching('warn', /has been running for/)).toEqual([]);
    // The same replica's job that never returns is still caught, and only it is named.
    void app.get(StuckJobs).hang();
    await waitFor('health down', () => electionOf(app).health().healthy === false, STUCK_MS + SLACK_MS);
    expect((await health(app)).reason).toMatch(
      /^stuck: StuckJobs\.hang has been running for \d+ ms \(stuckAfterMs 400\)$/,
    );
    expect(logger.matching('warn', /QueuePump/)).toEqual([]);
    expect(signal.aborted).toBe(false);
  });

  it("uses a handler's own stuckAfterMs: longer than the module's, or alone with the module's off", async () => {
    const longer = await stuckApp(new InMemoryLeaseStore(), 'a', { stuckAfterMs: STUCK_MS }, [OwnThresholds]);
    void longer.get(OwnThresholds).longBatch();
    await sleep(STUCK_MS * 2 + 200);
    expect(electionOf(longer).health()).toEqual({ healthy: true });

    const alone = await stuckApp(new InMemoryLeaseStore(), 'b', {}, [OwnThresholds]);
    void alone.get(OwnThresholds).longBatch();
    void alone.get(OwnThresholds).watchedAlone();
    await waitFor('health down', () => electionOf(alone).health().healthy === false, STUCK_MS + SLACK_MS);
    expect(electionOf(alone).health().reason).toMatch(
      /^stuck: OwnThresholds\.watchedAlone has been running for \d+ ms \(stuckAfterMs 400\)$/,
    );
  });

  it('names runIfLeader work by the name given', async () => {
    const app = await stuckApp(new InMemoryLeaseStore(), 'a', { stuckAfterMs: STUCK_MS }, []);
    const election = app.get(LeaderElectionService);
    expect(election.runIfLeader('nightly-export', () => 'ran')).toBe('ran');
    expect(
      election.runIfLeader(
        'nightly-export',
        () => 'ran',
        () => 'skipped',
      ),
    ).toBe('ran');
    expect(election.runIfLeader('consumer', ({ term }) => term)).toBe(electionOf(app).term);
    void election.runIfLeader('billing-export', () => new Promise(() => undefined));
    await waitFor('health down', () => electionOf(app).health().healthy === false, STUCK_MS + SLACK_MS);
    expect(electionOf(app).health().reason).toMatch(/^stuck: billing-export has been running for/);
    expect(() => election.runIfLeader('', () => 1)).toThrow('runIfLeader(name, fn): name must be a non-empty string');
    expect(() => (election.runIfLeader as unknown as (name: string) => unknown)('x')).toThrow('runIfLeader(name, fn)');
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

  it('with resignWhenStuck: a stuck @OnElected handler makes the leader resign; its signal aborts, it ends, another replica takes over', async () => {
    const store = new InMemoryLeaseStore();
    const options = { stuckAfterMs: STUCK_MS, resignWhenStuck: true };
    const logger = new CaptureLogger();
    const a = await stuckApp(store, 'a', options, [BlockedOnElected], logger);
    expect(electionOf(a).isLeader()).toBe(true);
    // A replica where the same handler is not blocked (it has none): it takes over. (Same logger:
    // Nest's static logger is process-wide.)
    const b = await stuckApp(store, 'b', options, [], logger);
    const [signal] = a.get(BlockedOnElected).signals;
    expect(signal.aborted).toBe(false);
    await waitFor('the stuck term to end', () => signal.aborted, STUCK_MS + SLACK_MS);
    expect(electionOf(a).isLeader()).toBe(false);
    expect(
      logger.matching('warn', /resigning because BlockedOnElected\.start is stuck \(resignWhenStuck\)/),
    ).toHaveLength(1);
    await waitFor('b to lead', () => electionOf(b).isLeader(), RETRY_MS * 3 + SLACK_MS);
    // The handler honoured its signal and returned: a is up again, as a follower.
    await waitFor('a healthy again', () => electionOf(a).health().healthy, SLACK_MS);
    expect(await health(b)).toMatchObject({ code: 200, status: 'up' });
  });

  it('validates the per-handler stuckAfterMs when the decorator is applied, naming the method', () => {
    for (const stuckAfterMs of [0, -1, 1.5, 2 ** 31, true, '500']) {
      expect(() => {
        class BadJob {
          @LeaderOnly({ stuckAfterMs: stuckAfterMs as number })
          run(): void {}
        }
        return BadJob;
      }).toThrow(
        /^@LeaderOnly\(\) on BadJob\.run: stuckAfterMs must be a whole number of milliseconds from 1 to 2147483647, or false/,
      );
      expect(() => {
        class BadPump {
          @OnElected({ stuckAfterMs: stuckAfterMs as number })
          pump(): void {}
        }
        return BadPump;
      }).toThrow(/^@OnElected\(\) on BadPump\.pump: stuckAfterMs must be a whole number/);
    }
    expect(() => {
      class Typo {
        @OnElected({ stuckAfterMS: false } as never)
        pump(): void {}
      }
      return Typo;
    }).toThrow('@OnElected() on Typo.pump: stuckAfterMS is not a known option (known: election, stuckAfterMs)');
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
