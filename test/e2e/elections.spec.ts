// Issue 14: several elections per app, spread over the replicas, handover on request — three Nest
// apps in one process over one in-memory store (the processes spec runs the same on PostgreSQL and
// Azurite). Timings: lease 3000, renew 500, retry 400 ms.
import { Controller, Get, type INestApplication, Injectable } from '@nestjs/common';
import request from 'supertest';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import { OnElected, OnRevoked } from '../../lib/nest/decorators/leadership-hooks.decorator.js';
import type { LeaderElectionModuleOptions } from '../../lib/nest/interfaces/leader-election-options.interface.js';
import { LeaderElectionModule } from '../../lib/nest/leader-election.module.js';
import type { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { closeAll, createApp, electionOf, LEASE_MS, RETRY_MS, SLACK_MS, sleep, waitFor } from './helpers.js';

const ELECTIONS = ['billing', 'reports', 'cleanup'];
const RENEW_MS = 500;

@Injectable()
class ReportJobs {
  readonly runs: string[] = [];
  readonly elected: string[] = [];

  @LeaderOnly('reports')
  run(): string {
    this.runs.push('reports');
    return 'ran';
  }

  @LeaderOnly()
  runDefault(): string {
    return 'ran default';
  }

  @OnElected('cleanup')
  onCleanup(): void {
    this.elected.push('cleanup');
  }

  @OnRevoked('cleanup')
  onCleanupRevoked(): void {
    this.elected.push('cleanup revoked');
  }
}

@Controller('reports')
class ReportsController {
  @Get()
  @LeaderOnly('reports')
  get(): string {
    return 'report';
  }
}

describe('several elections per app', () => {
  const apps: INestApplication[] = [];
  afterEach(() => closeAll(apps));

  async function replica(store: InMemoryLeaseStore, identity: string, extra: object = {}): Promise<INestApplication> {
    const app = await createApp({
      electionModule: LeaderElectionModule.forRoot({
        store,
        elections: ELECTIONS,
        identity,
        advertise: `http://${identity}.internal:3000`,
        leaseDurationMs: LEASE_MS,
        closeStoreOnShutdown: false,
        ...extra,
      }),
      providers: [ReportJobs],
      controllers: [ReportsController],
    });
    apps.push(app);
    return app;
  }

  /** Per replica, the elections it leads. */
  function leadership(services: LeaderElectionService[]): Record<string, string[]> {
    return Object.fromEntries(
      services.map((s) => [s.identity, s.elections.filter((name) => s.election(name).isLeader())]),
    );
  }

  const balanced = (services: LeaderElectionService[]) =>
    services.every((s) => s.elections.filter((name) => s.election(name).isLeader()).length === 1);

  it('three replicas spread three elections 1/1/1 from a cold start, then make no handover at all', async () => {
    const store = new InMemoryLeaseStore();
    // Started one after the other: the first wins every election, spread must move two of them.
    const services: LeaderElectionService[] = [];
    for (const id of ['A', 'B', 'C']) services.push(electionOf(await replica(store, id)));
    expect(leadership(services).A).toEqual(ELECTIONS);
    const tookMs = await waitFor('balance', () => balanced(services), 20 * RETRY_MS + SLACK_MS);
    // A few retry intervals: each move is a request (≤ retry), a renewal (≤ renew) and a push.
    expect(tookMs).toBeLessThan(10 * (RETRY_MS + RENEW_MS));
    const transitions: string[] = [];
    for (const s of services)
      for (const name of ELECTIONS)
        s.election(name).events$.subscribe((e) => {
          if (e.type === 'elected' || e.type === 'revoked') transitions.push(`${s.identity} ${e.type} ${name}`);
        });
    // Balanced: nobody asks, nothing moves (the bench watches 10 minutes; here 20 retry intervals).
    await sleep(20 * RETRY_MS);
    expect(transitions).toEqual([]);
    expect(balanced(services)).toBe(true);
  });

  it('with standby followers (activeFollowers: 1) spread still balances 1/1/1 and then moves nothing', async () => {
    const store = new InMemoryLeaseStore();
    const standby = { activeFollowers: 1, standbyPollMs: 4 * RETRY_MS };
    const services: LeaderElectionService[] = [];
    for (const id of ['A', 'B', 'C']) services.push(electionOf(await replica(store, id, standby)));
    // A standby learns the holder's count only at its standby poll; asking, it polls as an active follower.
    const tookMs = await waitFor(
      'balance',
      () => balanced(services),
      10 * (standby.standbyPollMs + RENEW_MS) + SLACK_MS,
    );
    expect(tookMs).toBeLessThan(10 * (standby.standbyPollMs + RENEW_MS));
    const before = leadership(services);
    await sleep(3 * standby.standbyPollMs);
    expect(leadership(services)).toEqual(before);
  });

  it('a directed handover, asked on a third replica, is honoured and respected; spread rebalances around it', async () => {
    const store = new InMemoryLeaseStore();
    const services: LeaderElectionService[] = [];
    for (const id of ['A', 'B', 'C']) services.push(electionOf(await replica(store, id)));
    await waitFor('balance', () => balanced(services), 20 * RETRY_MS + SLACK_MS);
    const holderOf = (name: string) => services.find((s) => s.election(name).isLeader());
    const reportsHolder = holderOf('reports') as LeaderElectionService;
    const target = services.find((s) => s !== reportsHolder) as LeaderElectionService;
    const asker = services.find((s) => s !== reportsHolder && s !== target) as LeaderElectionService;
    const askedAt = Date.now();
    const recorded = await asker.requestHandover({ election: 'reports', to: target.identity });
    expect(recorded).toMatchObject({ election: 'reports', to: target.identity, requestedBy: asker.identity });
    await waitFor('target leads reports', () => target.election('reports').isLeader(), RENEW_MS + RETRY_MS + SLACK_MS);
    expect(Date.now() - askedAt).toBeLessThan(RENEW_MS + RETRY_MS + SLACK_MS);
    // Asked again, the store shows the target leading: nothing is recorded, whatever the asker's own
    // view of the leader (it may still name the old holder).
    await expect(asker.requestHandover({ election: 'reports', to: target.identity })).resolves.toBeUndefined();
    // The target now leads 2, the old holder 0: spread moves the target's OTHER election, never reports.
    await waitFor('balance around the pinned election', () => balanced(services), 20 * RETRY_MS + SLACK_MS);
    expect(target.election('reports').isLeader()).toBe(true);
    await sleep(10 * RETRY_MS);
    expect(target.election('reports').isLeader()).toBe(true);
    expect(balanced(services)).toBe(true);
  });

  it('force re-election (no `to`) moves the election to another replica', async () => {
    const store = new InMemoryLeaseStore();
    const [a, b] = [
      electionOf(await replica(store, 'A', { spread: false })),
      electionOf(await replica(store, 'B', { spread: false })),
    ];
    expect(a.election('cleanup').isLeader()).toBe(true);
    await b.requestHandover({ election: 'cleanup' });
    await waitFor('B leads cleanup', () => b.election('cleanup').isLeader(), RENEW_MS + RETRY_MS * 2 + SLACK_MS);
    expect(a.election('cleanup').isLeader()).toBe(false);
    // The others did not move.
    expect(a.election('billing').isLeader()).toBe(true);
  });

  it('@LeaderOnly, hooks and the guard follow the election they name; the 503 names that leader and where to reach it', async () => {
    const store = new InMemoryLeaseStore();
    const appA = await replica(store, 'A', { spread: false });
    const appB = await replica(store, 'B', { spread: false });
    const [a, b] = [electionOf(appA), electionOf(appB)];
    await b.requestHandover({ election: 'reports', to: 'B' });
    await waitFor('B leads reports', () => b.election('reports').isLeader(), RENEW_MS + RETRY_MS + SLACK_MS);
    // A sits out a round after handing over, and meanwhile reads who leads: it names B at its next poll.
    await waitFor('A sees B lead reports', () => a.election('reports').leaderId === 'B', RETRY_MS * 1.15 + SLACK_MS);
    const [jobsA, jobsB] = [appA.get(ReportJobs), appB.get(ReportJobs)];
    expect(jobsA.run()).toBeUndefined();
    expect(jobsB.run()).toBe('ran');
    expect(jobsA.runDefault()).toBe('ran default'); // billing (the default) is still A's
    expect(jobsB.runDefault()).toBeUndefined();
    expect(jobsA.elected).toEqual(['cleanup']);
    expect(jobsB.elected).toEqual([]);
    const refused = await request(appA.getHttpServer()).get('/reports').expect(503);
    expect(refused.body).toMatchObject({
      election: 'reports',
      leaderId: 'B',
      leaderAdvertise: 'http://B.internal:3000',
    });
    expect(refused.headers['x-leader-advertise']).toBe('http://B.internal:3000');
    await request(appB.getHttpServer()).get('/reports').expect(200, 'report');
    expect(a.election('reports').status()).toMatchObject({ leaderId: 'B', leaderAdvertise: 'http://B.internal:3000' });
  });

  it('a handover drains the election’s running @LeaderOnly work before the release', async () => {
    const store = new InMemoryLeaseStore();
    const a = electionOf(await replica(store, 'A', { spread: false }));
    const b = electionOf(await replica(store, 'B', { spread: false }));
    let finish!: () => void;
    const running = a.election('reports').runIfLeader(
      ({ signal }) =>
        new Promise<boolean>((resolve) => {
          finish = () => resolve(signal.aborted);
        }),
    );
    expect(running).toBeInstanceOf(Promise);
    await a.requestHandover({ election: 'reports', to: 'B' });
    await sleep(RENEW_MS + RETRY_MS + 300);
    // Still draining: A leads (lease renewed), but starts nothing new; B waits.
    expect(a.election('reports').isSteppingDown).toBe(true);
    expect(a.election('reports').isLeader()).toBe(false);
    expect(a.election('reports').runIfLeader(() => 'new work')).toBeUndefined();
    expect(b.election('reports').isLeader()).toBe(false);
    finish();
    expect(await running).toBe(false); // finished within its term
    await waitFor('B leads reports', () => b.election('reports').isLeader(), RETRY_MS * 2 + SLACK_MS);
    expect(a.election('reports').isSteppingDown).toBe(false);
  });

  it('elections added and removed at run time, with runIfLeader for work registered at run time', async () => {
    const store = new InMemoryLeaseStore();
    const a = electionOf(await replica(store, 'A', { spread: false }));
    const tenant = await a.addElection('tenant-42');
    expect(tenant.isLeader()).toBe(true);
    expect(a.elections).toEqual([...ELECTIONS, 'tenant-42']);
    expect(tenant.runIfLeader(({ term }) => `ran in term ${term}`)).toBe('ran in term 1');
    await expect(a.addElection('tenant-42')).rejects.toThrow(/already runs an election/);
    await a.removeElection('tenant-42');
    expect(tenant.isLeader()).toBe(false);
    expect((await store.read('tenant-42', { signal: AbortSignal.timeout(1_000) })).held).toBe(false);
    expect(() => a.election('tenant-42')).toThrow(/has no election "tenant-42"/);
    await expect(a.removeElection('billing')).rejects.toThrow(/default election/);
  });

  it('names that are not configured fail at startup, naming the decorator and the method', async () => {
    @Injectable()
    class Wrong {
      @OnElected('nope')
      on(): void {}
    }
    await expect(
      createApp({
        electionModule: LeaderElectionModule.forRoot({ store: new InMemoryLeaseStore(), elections: ELECTIONS }),
        providers: [Wrong],
      }),
    ).rejects.toThrow(
      /@OnElected\(\) on Wrong.on: this application has no election "nope"; it has "billing", "reports", "cleanup"/,
    );
    for (const bad of [{ elections: [] }, { elections: ['a', 'a'] }, { election: 'a', elections: ['b'] }, {}]) {
      await expect(
        // Types refuse these; JavaScript callers get the startup error.
        createApp({
          electionModule: LeaderElectionModule.forRoot({
            store: new InMemoryLeaseStore(),
            ...bad,
          } as unknown as LeaderElectionModuleOptions),
        }),
      ).rejects.toThrow(/LeaderElectionModule options: .*election/);
    }
  });

  it('health reports every election; a replica that dies loses its elections to the others, and spread brings it back in', async () => {
    const store = new InMemoryLeaseStore();
    const apps3 = [];
    for (const id of ['A', 'B', 'C']) apps3.push(await replica(store, id));
    const services = apps3.map(electionOf);
    await waitFor('balance', () => balanced(services), 20 * RETRY_MS + SLACK_MS);
    expect(services[0]?.health()).toEqual({ healthy: true });
    expect(services[0]?.statuses().map((s) => s.election)).toEqual(ELECTIONS);
    // Graceful stop of C: its election is taken at once; the two left lead 2 and 1.
    await apps3[2]?.close();
    const two = services.slice(0, 2);
    const all = () => ELECTIONS.every((name) => two.some((s) => s.election(name).isLeader()));
    await waitFor('all elections led by the two left', all, RETRY_MS * 2 + SLACK_MS);
    const back = electionOf(await replica(store, 'C'));
    await waitFor('balance again', () => balanced([...two, back]), 20 * RETRY_MS + SLACK_MS);
  });
});
