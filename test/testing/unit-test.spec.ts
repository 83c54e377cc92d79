// How a user unit-tests leader-only code with the testing kit: only public API, as from the package
// (`@leaderlease/nestjs` and `@leaderlease/nestjs/testing`).
import 'reflect-metadata';
import { Controller, type INestApplication, Injectable, Post } from '@nestjs/common';
import { Cron, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import request from 'supertest';
import {
  type ElectedHookEvent,
  type LeaderChangedHookEvent,
  LeaderElectionService,
  LeaderOnly,
  type LeadershipEvent,
  OnElected,
  OnLeaderChanged,
  OnRevoked,
  type RevokedHookEvent,
} from '../../lib/index.js';
import { LeaderElectionTestingModule, TestingLeadership } from '../../lib/testing.js';

/** The app's own dependency, replaced by a fake in the test. */
abstract class Ledger {
  abstract close(period: string): Promise<void>;
}

class FakeLedger extends Ledger {
  readonly closed: string[] = [];
  async close(period: string): Promise<void> {
    this.closed.push(period);
  }
}

@Injectable()
class BillingJobs {
  readonly events: string[] = [];
  constructor(private readonly ledger: Ledger) {}

  @Cron('0 0 1 1 *', { name: 'close-books' })
  @LeaderOnly()
  async closeBooks(): Promise<string> {
    await this.ledger.close('2026-11');
    return 'closed';
  }

  @OnElected()
  elected({ term, signal }: ElectedHookEvent): void {
    this.events.push(`elected ${term} aborted=${signal.aborted}`);
    signal.addEventListener('abort', () => this.events.push(`signal aborted in term ${term}`));
  }

  @OnRevoked()
  revoked({ term, reason }: RevokedHookEvent): void {
    this.events.push(`revoked ${term}: ${reason}`);
  }

  @OnLeaderChanged()
  leaderChanged({ leaderId }: LeaderChangedHookEvent): void {
    this.events.push(`leader ${leaderId ?? 'unknown'}`);
  }
}

@Controller('admin')
class AdminController {
  @Post('reindex')
  @LeaderOnly()
  reindex(): { reindexed: true } {
    return { reindexed: true };
  }
}

describe('a service with @Cron @LeaderOnly, unit-tested with LeaderElectionTestingModule', () => {
  let moduleRef: TestingModule;
  let jobs: BillingJobs;
  let ledger: FakeLedger;
  let leadership: TestingLeadership;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), LeaderElectionTestingModule.forRoot()],
      providers: [BillingJobs, { provide: Ledger, useClass: FakeLedger }],
    }).compile();
    await moduleRef.init();
    jobs = moduleRef.get(BillingJobs);
    ledger = moduleRef.get(Ledger);
    leadership = moduleRef.get(TestingLeadership);
  });

  afterEach(() => moduleRef.close());

  it('runs on the leader (the default) and is skipped on a follower, called directly or by the scheduler', async () => {
    await expect(jobs.closeBooks()).resolves.toBe('closed');
    await moduleRef.get(SchedulerRegistry).getCronJob('close-books').fireOnTick();
    expect(ledger.closed).toEqual(['2026-11', '2026-11']);

    await leadership.revoke();
    await expect(jobs.closeBooks()).resolves.toBeUndefined();
    await moduleRef.get(SchedulerRegistry).getCronJob('close-books').fireOnTick();
    expect(ledger.closed).toHaveLength(2);

    await leadership.elect();
    await expect(jobs.closeBooks()).resolves.toBe('closed');
    expect(ledger.closed).toHaveLength(3);
  });

  it('calls the hooks with the same arguments as a real election, in order', async () => {
    // Leading from the start: delivered at bootstrap, like a real win during module init.
    expect(jobs.events).toEqual(['leader test-instance', 'elected 1 aborted=false']);
    jobs.events.length = 0;

    await leadership.revoke('maintenance');
    expect(jobs.events).toEqual(['signal aborted in term 1', 'revoked 1: maintenance', 'leader unknown']);
    jobs.events.length = 0;

    await leadership.setLeader('replica-b');
    await leadership.elect(42);
    expect(jobs.events).toEqual(['leader replica-b', 'elected 42 aborted=false', 'leader test-instance']);
    jobs.events.length = 0;

    // Another replica takes over while we lead: we lose our term first, as with a real lost lease.
    await leadership.setLeader('replica-c');
    expect(jobs.events).toEqual([
      'signal aborted in term 42',
      'revoked 42: the store says the lease is no longer ours',
      'leader unknown',
      'leader replica-c',
    ]);
  });

  it('moves the real LeaderElectionService: state, term, signal, status(), events$ and isLeader$', async () => {
    const election = moduleRef.get(LeaderElectionService);
    const events: LeadershipEvent[] = [];
    const leader: boolean[] = [];
    election.events$.subscribe((event) => events.push(event));
    election.isLeader$.subscribe((value) => leader.push(value));
    expect(election.isLeader()).toBe(true);
    expect(election.term).toBe(1);
    const firstSignal = election.signal;
    expect(firstSignal.aborted).toBe(false);

    await leadership.setLeader('replica-b');
    expect(election.isLeader()).toBe(false);
    expect(election.term).toBeUndefined();
    expect(election.leaderId).toBe('replica-b');
    expect(firstSignal.aborted).toBe(true);
    expect(election.status()).toMatchObject({
      election: 'test',
      identity: 'test-instance',
      isLeader: false,
      leaderId: 'replica-b',
      term: null,
      state: 'follower',
    });
    expect(election.health()).toEqual({ healthy: true });

    await leadership.elect();
    expect(election.term).toBe(2); // fencing tokens only grow
    await expect(election.waitForLeadership()).resolves.toMatchObject({ term: 2 });
    expect(leader).toEqual([true, false, true]);
    expect(events.map(({ type, term, leaderId, reason }) => ({ type, term, leaderId, reason }))).toEqual([
      { type: 'revoked', term: 1, leaderId: undefined, reason: 'the store says the lease is no longer ours' },
      { type: 'leader-changed', term: undefined, leaderId: undefined, reason: undefined },
      { type: 'leader-changed', term: undefined, leaderId: 'replica-b', reason: undefined },
      { type: 'elected', term: 2, leaderId: undefined, reason: undefined },
      { type: 'leader-changed', term: undefined, leaderId: 'test-instance', reason: undefined },
    ]);
  });

  it('refuses a term that is not a positive integer, and is a no-op for what already holds', async () => {
    const election = moduleRef.get(LeaderElectionService);
    await expect(leadership.elect(0)).rejects.toThrow(/^term must be a positive safe integer \(got 0\)$/);
    await expect(leadership.elect(1.5)).rejects.toThrow(TypeError);
    await expect(leadership.setLeader('')).rejects.toThrow(/^identity must be a non-empty string/);
    const signal = election.signal;
    await leadership.elect(); // already leading: same term, same signal
    expect([election.term, signal.aborted]).toEqual([1, false]);
    jobs.events.length = 0;
    await leadership.elect(7); // another term is another lease: the old one ends first
    expect([election.term, signal.aborted]).toEqual([7, true]);
    expect(jobs.events).toEqual([
      'signal aborted in term 1',
      'revoked 1: the store says the lease is no longer ours',
      'leader unknown',
      'elected 7 aborted=false',
      'leader test-instance',
    ]);
    await leadership.revoke();
    jobs.events.length = 0;
    await leadership.revoke(); // already following
    expect(jobs.events).toEqual([]);
  });

  it('a class made with new is refused loudly, and behaves as a provider once bound with TestingLeadership.bind()', async () => {
    const byHand = new BillingJobs(new FakeLedger());
    await expect(byHand.closeBooks()).rejects.toThrow(
      /BillingJobs\.closeBooks is @LeaderOnly\(\) but its instance is not bound .*TestingLeadership\.bind\(instance\)/,
    );

    const ownLedger = new FakeLedger();
    const bound = leadership.bind(new BillingJobs(ownLedger));
    // Its hooks are called as for a provider: at once with the current state, then on every change.
    expect(bound.events).toEqual(['leader test-instance', 'elected 1 aborted=false']);
    await expect(bound.closeBooks()).resolves.toBe('closed');
    await leadership.revoke();
    await expect(bound.closeBooks()).resolves.toBeUndefined();
    expect(ownLedger.closed).toEqual(['2026-11']);
    expect(bound.events.slice(2)).toEqual([
      'signal aborted in term 1',
      'revoked 1: the store says the lease is no longer ours',
      'leader unknown',
    ]);

    // Binding twice, or binding what Nest already manages, adds nothing: every hook runs once.
    expect(leadership.bind(bound)).toBe(bound);
    expect(leadership.bind(jobs)).toBe(jobs);
    bound.events.length = 0;
    jobs.events.length = 0;
    await leadership.elect();
    expect(bound.events).toEqual(['elected 2 aborted=false', 'leader test-instance']);
    expect(jobs.events).toEqual(bound.events);
  });

  it('refuses to bind an instance that another application already owns', async () => {
    const other = await Test.createTestingModule({
      imports: [LeaderElectionTestingModule.forRoot({ identity: 'other-app' })],
      providers: [BillingJobs, { provide: Ledger, useClass: FakeLedger }],
    }).compile();
    await other.init();
    try {
      expect(() => leadership.bind(other.get(BillingJobs))).toThrow(
        /^TestingLeadership\.bind\(\): BillingJobs is already bound to another application's leader election$/,
      );
    } finally {
      await other.close();
    }
  });

  it('ends the term on close() like a real shutdown, then refuses to move leadership', async () => {
    const election = moduleRef.get(LeaderElectionService);
    const signal = election.signal;
    let completed = false;
    election.isLeader$.subscribe({ complete: () => (completed = true) });
    jobs.events.length = 0;
    await moduleRef.close();
    expect(signal.aborted).toBe(true);
    expect(completed).toBe(true);
    expect(jobs.events).toEqual(['signal aborted in term 1', 'revoked 1: stopped', 'leader unknown']);
    expect(election.status().state).toBe('stopped');
    await expect(leadership.elect()).rejects.toThrow(
      /^TestingLeadership\.elect\(\): the leader election is stopped: the application was closed$/,
    );
  });
});

describe('LeaderElectionTestingModule.forRoot() options and lifecycle', () => {
  it('starts as a follower with leader: false; moving leadership before init() is refused with the fix', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [LeaderElectionTestingModule.forRoot({ leader: false, identity: 'replica-a', election: 'billing' })],
      providers: [BillingJobs, { provide: Ledger, useClass: FakeLedger }],
    }).compile();
    const leadership = moduleRef.get(TestingLeadership);
    await expect(leadership.elect()).rejects.toThrow(
      /^TestingLeadership\.elect\(\): the leader election is not started: call await app\.init\(\) \(or moduleRef\.init\(\)\) first$/,
    );
    // Before init() nothing is bound yet either: the call says so instead of skipping unseen.
    await expect(moduleRef.get(BillingJobs).closeBooks()).rejects.toThrow(/application is not initialised yet/);

    const early = leadership.bind(new BillingJobs(new FakeLedger())); // bound before init: hooks start at bootstrap

    await moduleRef.init();
    const election = moduleRef.get(LeaderElectionService);
    expect(election.status()).toMatchObject({ election: 'billing', identity: 'replica-a', isLeader: false });
    expect(early.events).toEqual([]);
    await expect(moduleRef.get(BillingJobs).closeBooks()).resolves.toBeUndefined();
    await leadership.elect();
    await expect(moduleRef.get(BillingJobs).closeBooks()).resolves.toBe('closed');
    await expect(early.closeBooks()).resolves.toBe('closed');
    expect(early.events).toEqual(['elected 1 aborted=false', 'leader replica-a']);
    await moduleRef.close();
  });

  it('rejects invalid options where they are written', () => {
    expect(() => LeaderElectionTestingModule.forRoot({ leader: 'yes' as unknown as boolean })).toThrow(
      /^leader must be true or false \(got yes\)$/,
    );
    expect(() => LeaderElectionTestingModule.forRoot({ identity: '' })).toThrow(/^identity must be a non-empty/);
  });
});

describe('a controller route behind @LeaderOnly, with the testing kit', () => {
  let app: INestApplication;
  let leadership: TestingLeadership;

  async function start(options: Parameters<typeof LeaderElectionTestingModule.forRoot>[0]): Promise<void> {
    const moduleRef = await Test.createTestingModule({
      imports: [LeaderElectionTestingModule.forRoot(options)],
      controllers: [AdminController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    leadership = app.get(TestingLeadership);
  }

  afterEach(() => app.close());

  it('answers 503 on a follower (naming the leader), then 200 once elected', async () => {
    await start({ leader: false });
    const unknown = await request(app.getHttpServer()).post('/admin/reindex').expect(503);
    expect(unknown.headers['retry-after']).toBe('2');
    expect(unknown.headers['x-leader-id']).toBeUndefined();
    expect(unknown.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'This instance is not the leader of "test"; retry later.',
      election: 'test',
      leaderId: null,
    });

    await leadership.setLeader('replica-b');
    const named = await request(app.getHttpServer()).post('/admin/reindex').expect(503);
    expect(named.headers['x-leader-id']).toBe('replica-b');
    expect(named.body.leaderId).toBe('replica-b');

    await leadership.elect();
    await request(app.getHttpServer()).post('/admin/reindex').expect(201, { reindexed: true });
    await leadership.revoke();
    await request(app.getHttpServer()).post('/admin/reindex').expect(503);
  });

  it('applies the guard options given to forRoot', async () => {
    await start({ leader: false, guard: { exposeLeaderId: false, retryAfter: false } });
    await leadership.setLeader('replica-b');
    const res = await request(app.getHttpServer()).post('/admin/reindex').expect(503);
    expect(res.headers['x-leader-id']).toBeUndefined();
    expect(res.headers['retry-after']).toBeUndefined();
    expect(res.body).not.toHaveProperty('leaderId');
  });
});
