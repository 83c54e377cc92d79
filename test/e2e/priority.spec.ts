// Issue #28, the preferred leader, as a user runs it: three replicas (Nest apps, real timers), each
// with its own connection to one PostgreSQL table. Done when: "a third replica with `priority: 10`
// becomes leader within a few renew intervals and nothing moves afterwards"; a directed handover pins
// its election against priority; equal priorities never move leadership.
import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import type { LeaderElectionModuleOptions } from '../../lib/nest/interfaces/leader-election-options.interface.js';
import type { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import { PostgresLeaseStore } from '../../lib/postgres.js';
import { dropPostgresTables, PG_URL, uniqueName } from '../setup/servers.js';
import { closeAll, createApp, electionOf, SLACK_MS, sleep, waitFor } from './helpers.js';

/** Renew deadline 2000, renew every 500, retry every 400 (scaled from the lease). */
const LEASE_MS = 3_000;
const RENEW_MS = 500;
const table = uniqueName('e2e_priority');

describe('the preferred leader (priority) on PostgreSQL', () => {
  const apps: INestApplication[] = [];
  let election: string;

  beforeEach(() => {
    election = uniqueName('priority');
  });
  afterEach(() => closeAll(apps));
  afterAll(() => dropPostgresTables(table));

  async function replica(identity: string, extra: Partial<LeaderElectionModuleOptions> = {}) {
    const app = await createApp({
      election: {
        store: new PostgresLeaseStore({ connection: PG_URL, table }),
        election,
        identity,
        leaseDurationMs: LEASE_MS,
        closeStoreOnShutdown: true,
        ...extra,
      } as LeaderElectionModuleOptions,
      schedule: false,
    });
    apps.push(app);
    return electionOf(app);
  }

  /** Fails if leadership moves (a new term, another holder) during `ms`. */
  async function nothingMoves(services: LeaderElectionService[], leader: LeaderElectionService, ms: number) {
    const term = leader.term;
    const until = Date.now() + ms;
    while (Date.now() < until) {
      expect(leader.isLeader()).toBe(true);
      expect(leader.term).toBe(term);
      expect(services.filter((s) => s.isLeader())).toEqual([leader]);
      await sleep(50);
    }
  }

  it('a third replica started later with priority 10 leads within a few renew intervals; then nothing moves', async () => {
    const a = await replica('a');
    const b = await replica('b');
    expect(a.isLeader()).toBe(true);
    const c = await replica('c', { priority: 10 });
    const startedAt = Date.now();
    // Its first balancer tick, the holder's term seen for 2 renew intervals, the holder's next renewal and
    // the release notification: about 4 renew intervals; bounded at 8 and the slack of a loaded machine.
    const took = await waitFor('c to lead', () => c.isLeader(), 8 * RENEW_MS + SLACK_MS);
    expect(Date.now() - startedAt).toBeLessThanOrEqual(8 * RENEW_MS + SLACK_MS);
    expect(a.isLeader()).toBe(false);
    expect(c.status()).toMatchObject({ priority: 10, leaderPriority: 10, leaderId: 'c' });
    console.log(`priority e2e: c led ${took} ms after it started (${(took / RENEW_MS).toFixed(1)} renew intervals)`);
    await nothingMoves([a, b, c], c, 10 * RENEW_MS);
    expect(a.status()).toMatchObject({ priority: 0, leaderId: 'c', leaderPriority: 10 });
  });

  it('a directed handover pins the election: the replica of priority 10 does not take it back', async () => {
    const a = await replica('a');
    const c = await replica('c', { priority: 10 });
    await waitFor('c to lead', () => c.isLeader(), 8 * RENEW_MS + SLACK_MS);
    const b = await replica('b');
    await c.requestHandover({ to: 'b', reason: 'maintenance' });
    await waitFor('b to lead', () => b.isLeader(), 4 * RENEW_MS + SLACK_MS);
    await nothingMoves([a, b, c], b, 12 * RENEW_MS);
    expect(c.status()).toMatchObject({ leaderId: 'b', leaderPriority: 0 });
  });

  it('equal priorities never move leadership', async () => {
    const a = await replica('a', { priority: 5 });
    const b = await replica('b', { priority: 5 });
    expect(a.isLeader()).toBe(true);
    const c = await replica('c', { priority: 5 });
    await nothingMoves([a, b, c], a, 12 * RENEW_MS);
  });
});
