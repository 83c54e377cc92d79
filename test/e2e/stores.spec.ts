import 'reflect-metadata';
import { type INestApplication, Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import { uniqueName } from '../setup/servers.js';
import { backends } from './backends.js';
import { closeAll, createApp, electionOf, SLACK_MS, waitFor } from './helpers.js';

// The Nest "one job runner + handover" scenario on every real backend: two apps, each with its own
// store client, one @Interval job; exactly one app runs it, and closing it hands the job over.

const RETRY_MS = 500;
/**
 * close() (drain and release: round trips), the follower's next poll (retry +15 %), its acquire,
 * the next 50 ms tick, and lag on a loaded machine: below the shortest lease (2000 ms).
 */
const HANDOVER_BOUND_MS = RETRY_MS * 1.15 + 50 + 700;
const runs: Array<{ app: string; at: number }> = [];

@Injectable()
class Jobs {
  constructor(private readonly election: LeaderElectionService) {}

  @Interval(50)
  @LeaderOnly()
  tick(): void {
    runs.push({ app: this.election.identity, at: Date.now() });
  }
}

describe.each(backends)('Nest on $name: one job runner, then handover', (backend) => {
  const apps: INestApplication[] = [];

  afterAll(async () => {
    await closeAll(apps);
    await backend.cleanup?.();
  });

  it('runs the job on exactly one app, and on the other once it closes', async () => {
    const election = uniqueName('jobs').replace(/_/g, '-');
    const start = (identity: string) =>
      createApp({
        election: {
          store: backend.store(),
          election,
          identity,
          leaseDurationMs: backend.leaseDurationMs,
          retryIntervalMs: RETRY_MS,
          closeStoreOnShutdown: true,
          shutdownTimeoutMs: 1_000,
        },
        providers: [Jobs],
      });
    const [a, b] = [await start(`${election}-a`), await start(`${election}-b`)];
    apps.push(a, b);
    const mine = () => runs.filter((run) => run.app.startsWith(election));

    await waitFor('the job to run a few times', () => mine().length >= 5, 5_000);
    const leader = electionOf(a).isLeader() ? a : b;
    const follower = leader === a ? b : a;
    expect(new Set(mine().map((run) => run.app))).toEqual(new Set([electionOf(leader).identity]));
    expect(electionOf(follower).isLeader()).toBe(false);

    const closedAt = Date.now();
    await leader.close();
    const closeResolvedAt = Date.now();
    apps.splice(apps.indexOf(leader), 1);
    await waitFor(
      'the other app to run the job',
      () => mine().some((run) => run.app === electionOf(follower).identity),
      RETRY_MS * 1.2 + SLACK_MS + 1_000,
    );
    const takeover = mine().find((run) => run.app === electionOf(follower).identity)!.at - closedAt;
    // Graceful handover: within one retry interval (push-capable stores: about one round trip),
    // well inside the lease: a close that did not release would only hand over at expiry.
    expect(takeover).toBeLessThan(HANDOVER_BOUND_MS);
    expect(HANDOVER_BOUND_MS).toBeLessThan(backend.leaseDurationMs);
    // The closed app ran nothing once its close resolved, nor once the other app had started.
    const firstOfOther = mine().find((run) => run.app === electionOf(follower).identity)!.at;
    const lateRuns = mine().filter(
      (run) => run.app === electionOf(leader).identity && (run.at > closeResolvedAt || run.at >= firstOfOther),
    );
    expect(lateRuns).toEqual([]);
  });
});
