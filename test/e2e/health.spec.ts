import 'reflect-metadata';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import request from 'supertest';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { LeaderElectionHealthIndicator } from '../../lib/terminus.js';
import { FaultInjectingStore } from '../support/fault-injecting.store.js';
import { closeAll, createApp, LEASE_MS, SLACK_MS, waitFor } from './helpers.js';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly leaderElection: LeaderElectionHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.leaderElection.isHealthy('leaderElection')]);
  }

  @Get('leader')
  @HealthCheck()
  leader() {
    return this.health.check([() => this.leaderElection.isLeader('leader')]);
  }
}

const healthApp = (store: FaultInjectingStore | InMemoryLeaseStore, identity: string) =>
  createApp({
    election: { store, identity },
    imports: [TerminusModule],
    controllers: [HealthController],
    providers: [LeaderElectionHealthIndicator],
  });

/** The timings the elector derives from LEASE_MS (3000): renew deadline 2000, renew every 500. */
const RENEW_DEADLINE_MS = 2_000;
const RENEW_INTERVAL_MS = 500;
/** Deadline after the first failed renewal's send, plus probe polling and a loaded machine's lag. */
const HEALTH_DOWN_MAX_MS = RENEW_DEADLINE_MS + RENEW_INTERVAL_MS + 700;

/** Terminus answers 200 when every check is up and 503 otherwise. */
async function probe(app: INestApplication, path: string) {
  const res = await request(app.getHttpServer()).get(path);
  return {
    status: res.status,
    body: res.body as {
      status: string;
      info?: object;
      error?: object;
      details: Record<string, Record<string, unknown>>;
    },
  };
}

describe('LeaderElectionHealthIndicator (terminus)', () => {
  const apps: INestApplication[] = [];
  afterEach(() => closeAll(apps));

  it('is up on the leader and on a follower, with the status as data; isLeader is down on the follower', async () => {
    const store = new InMemoryLeaseStore();
    const leader = await healthApp(store, 'app-a');
    apps.push(leader);
    const follower = await healthApp(store, 'app-b');
    apps.push(follower);

    const l = await probe(leader, '/health');
    expect(l.status).toBe(200);
    expect(l.body.details.leaderElection).toMatchObject({
      status: 'up',
      identity: 'app-a',
      isLeader: true,
      state: 'leader',
      term: 1,
    });
    const f = await probe(follower, '/health');
    expect(f.status).toBe(200);
    expect(f.body.details.leaderElection).toMatchObject({
      status: 'up',
      identity: 'app-b',
      isLeader: false,
      leaderId: 'app-a',
    });

    expect((await probe(leader, '/health/leader')).status).toBe(200);
    const fl = await probe(follower, '/health/leader');
    expect(fl.status).toBe(503);
    expect(fl.body.details.leader).toMatchObject({ status: 'down', isLeader: false, leaderId: 'app-a' });
  });

  it('is down at once when the store refuses us (auth/config error)', async () => {
    const shared = new InMemoryLeaseStore();
    apps.push(await healthApp(shared, 'app-a'));
    const faulty = new FaultInjectingStore(shared);
    const follower = await healthApp(faulty, 'app-b');
    apps.push(follower);
    expect((await probe(follower, '/health')).status).toBe(200);
    faulty.set('fatal');
    // A follower of a store that pushes and hints the holder's expiry (the memory store) tries again
    // once that lease can have expired (≤ 1.15 lease: the safety net), not every retry interval.
    const nextAttemptMs = LEASE_MS * 1.15 + 1_000;
    await waitFor('the next acquire attempt to fail', () => faulty.calls.acquire >= 2, nextAttemptMs);
    const res = await probe(follower, '/health');
    expect(res.status).toBe(503);
    expect(res.body.details.leaderElection).toMatchObject({
      status: 'down',
      reason: 'injected fatal failure of acquire',
      lastError: { kind: 'fatal', message: 'injected fatal failure of acquire' },
    });
    // After a failure the follower retries every retry interval (no hint): the next attempt answers.
    const failedAttempts = faulty.calls.acquire;
    faulty.set('pass');
    await waitFor('the store to answer again', () => faulty.calls.acquire > failedAttempts, 2_000);
    expect((await probe(follower, '/health')).status).toBe(200);
  });

  it.each(['transient', 'hang'] as const)(
    'is down once the store has been failing (%s) for longer than the renew deadline',
    async (fault) => {
      const faulty = new FaultInjectingStore(new InMemoryLeaseStore());
      const leader = await healthApp(faulty, 'app-a');
      apps.push(leader);
      faulty.set(fault);
      const since = Date.now();
      // Right after the store starts failing we are still within the deadline: up.
      expect((await probe(leader, '/health')).status).toBe(200);
      // Down once failing for the renew deadline (2000 ms) counted from the first failed call's
      // send, which is the next renewal (within 500 ms); a hanging call counts from its send too.
      let down: Awaited<ReturnType<typeof probe>> | undefined;
      const giveUpAt = Date.now() + HEALTH_DOWN_MAX_MS + SLACK_MS;
      while (!down && Date.now() < giveUpAt) {
        const res = await probe(leader, '/health');
        if (res.status === 503) down = res;
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const elapsed = Date.now() - since;
      expect(down).toBeDefined();
      // Date.now() counts whole ms; the elector measures on the monotonic clock.
      expect(elapsed).toBeGreaterThanOrEqual(RENEW_DEADLINE_MS - 2);
      expect(elapsed).toBeLessThanOrEqual(HEALTH_DOWN_MAX_MS);
      expect(down!.body.details.leaderElection).toMatchObject({ status: 'down', isLeader: false, state: 'follower' });
      expect(String(down!.body.details.leaderElection!.reason)).toMatch(/^store failing for \d+ calls/);
      console.info(`health down ${elapsed} ms after the store started failing (${fault})`);
    },
  );
});
