// LeaderElectionModule.forRoot({ clock }) (issue 27): everything time-based in the module runs on
// the given clock, so a test moves it with FakeClock.advance and waits for nothing real. Each case
// would stall (or measure real time) if that part still used the system clock: stuck work and
// resignWhenStuck, once-per-tick fire times, spread, handover holds, metrics durations, the drain.
// The failover itself is test/testing/guide-fake-clock-example.spec.ts (the guide's example).
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { metrics } from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import type { LeaderElectionModuleOptions } from '../../lib/index.js';
import { LeaderElectionModule, LeaderElectionService, LeaderOnly } from '../../lib/index.js';
import { FakeClock } from '../../lib/shared/fake-clock.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';

@Injectable()
class Jobs {
  runs = 0;
  /** Resolves the running `slow()` call. */
  finish?: () => void;

  constructor(private readonly clock: FakeClock) {}

  @LeaderOnly()
  hang(): Promise<never> {
    return new Promise<never>(() => undefined);
  }

  /** Leader work that takes 3 s of the test's clock. */
  @LeaderOnly()
  slow(): Promise<void> {
    return new Promise((resolve) => this.clock.setTimeout(resolve, 3_000));
  }

  @Cron('0 * * * * *', { name: 'close-books' })
  @LeaderOnly({ once: 'per-tick' })
  closeBooks(): void {
    this.runs += 1;
  }
}

const contexts: TestingModule[] = [];

async function replica(
  clock: FakeClock,
  options: Partial<LeaderElectionModuleOptions> & Pick<LeaderElectionModuleOptions, 'store'>,
): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      LeaderElectionModule.forRoot({ election: 'jobs', clock, closeStoreOnShutdown: false, ...options } as never),
    ],
    providers: [{ provide: Jobs, useFactory: () => new Jobs(clock) }],
  }).compile();
  contexts.push(moduleRef);
  return moduleRef.init();
}

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((context) => context.close()));
});

const service = (context: TestingModule) => context.get(LeaderElectionService);

describe('LeaderElectionModule clock option', () => {
  it.each([
    [{}, 'it has no now(), wallNow(), setTimeout(), clearTimeout()'],
    [{ now: () => 0, wallNow: () => 0, setTimeout: () => 1 }, 'it has no clearTimeout()'],
    ['fake', 'got string'],
  ])('refuses a clock that is not a Clock at startup, naming clock (%p)', async (clock, missing) => {
    const compiling = Test.createTestingModule({
      imports: [LeaderElectionModule.forRoot({ store: new InMemoryLeaseStore(), election: 'jobs', clock } as never)],
    }).compile();
    await expect(compiling).rejects.toThrow(
      new TypeError(
        `clock must be a Clock with now(), wallNow(), setTimeout() and clearTimeout() (e.g. FakeClock from @leaderlease/nestjs/testing); ${missing}`,
      ),
    );
  });

  it('hands over at once when the leader closes gracefully (no clock advance needed)', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLeaseStore({ clock });
    const a = await replica(clock, { store, identity: 'a' });
    const b = await replica(clock, { store, identity: 'b' });
    expect(service(a).isLeader()).toBe(true);
    await a.close();
    await clock.advance(0);
    expect(service(b).isLeader()).toBe(true);
  });

  it('detects stuck work and resigns on the module clock', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLeaseStore({ clock });
    const options = { store, stuckAfterMs: 5_000, resignWhenStuck: true, shutdownTimeoutMs: 0 };
    const a = await replica(clock, { ...options, identity: 'a' });
    const b = await replica(clock, { ...options, identity: 'b' });
    void a.get(Jobs).hang();
    await clock.advance(4_999);
    expect(service(a).health()).toEqual({ healthy: true });
    await clock.advance(1);
    // Resigned: a healthy replica leads. The stuck call stays (nothing can stop it but its signal).
    expect(service(a).isLeader()).toBe(false);
    expect(service(a).health()).toEqual({ healthy: false, reason: expect.stringContaining('Jobs.hang') });
    await clock.advance(5_000);
    expect(service(b).isLeader()).toBe(true);
    // The stuck call never ends: a's shutdown waits out its grace on the fake clock.
    const closing = a.close();
    await clock.advance(1_000);
    await closing;
    contexts.splice(contexts.indexOf(a), 1);
  });

  it('finds once-per-tick fire times on the module clock: a tick moves only with clock.advance', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLeaseStore({ clock });
    const a = await replica(clock, { store, identity: 'a' });
    const b = await replica(clock, { store, identity: 'b' });
    const jobs = a.get(Jobs);
    await jobs.closeBooks();
    await jobs.closeBooks(); // the same tick (the same fake minute): skipped
    expect(jobs.runs).toBe(1);
    await clock.advance(60_000); // the next minute of the fake wall clock
    await jobs.closeBooks();
    expect(jobs.runs).toBe(2);
    // A handover inside that tick does not run it again on the new leader.
    await service(a).requestHandover({ to: 'b' });
    await clock.advance(5_000);
    expect(service(b).isLeader()).toBe(true);
    await b.get(Jobs).closeBooks();
    expect(b.get(Jobs).runs).toBe(0);
  });

  it('spreads elections and holds a directed handover on the module clock', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLeaseStore({ clock });
    const options = { store, elections: ['x', 'y'], election: undefined, handoverHoldMs: 60_000 };
    const a = await replica(clock, { ...options, identity: 'a' });
    expect(
      service(a)
        .statuses()
        .map((status) => status.isLeader),
    ).toEqual([true, true]);
    const b = await replica(clock, { ...options, identity: 'b' });
    // b learns a's count from the lease once it expires unrenewed-by-b's-view (15 s), then asks for one.
    await clock.advance(20_000);
    const leads = (context: TestingModule) =>
      service(context)
        .statuses()
        .filter((status) => status.isLeader).length;
    expect([leads(a), leads(b)]).toEqual([1, 1]);
    // An operator moves b's election to a: a leads it pinned (spread leaves it there) for
    // handoverHoldMs of the fake clock; spread then moves a's other election to b.
    const moved = service(a)
      .statuses()
      .find((status) => !status.isLeader)?.election as string;
    await service(b).requestHandover({ election: moved, to: 'a' });
    // What a's lease carries in the store: spread on every replica reads `pinned` from there.
    const pinned = async () => {
      const lease = await store.read(moved, { signal: new AbortController().signal });
      return lease.held && lease.holder === 'a' && lease.meta?.pinned === true;
    };
    // b honours it at a renewal (2.5 s), a wins and pins at its next renewal's check (2.5 s), published at the next.
    await clock.advance(10_000);
    expect(service(a).election(moved).isLeader()).toBe(true);
    expect(await pinned()).toBe(true);
    await clock.advance(45_000);
    expect(await pinned()).toBe(true);
    expect([leads(a), leads(b)]).toEqual([1, 1]);
    await clock.advance(15_000); // the hold (from at most 5 s in) is over: a's next renewal says so
    expect(await pinned()).toBe(false);
  });

  it('times leader-only work and store calls for the metrics on the module clock', async () => {
    class Reader extends MetricReader {
      constructor() {
        super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
      }
      protected async onForceFlush(): Promise<void> {}
      protected async onShutdown(): Promise<void> {}
    }
    const reader = new Reader();
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    try {
      const clock = new FakeClock();
      const a = await replica(clock, { store: new InMemoryLeaseStore({ clock }), identity: 'a' });
      const running = a.get(Jobs).slow();
      await clock.advance(3_000);
      await running;
      const { resourceMetrics } = await reader.collect();
      const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
      const sumOf = (name: string) =>
        all
          .find((metric) => metric.descriptor.name === name)
          ?.dataPoints.reduce((sum, point) => sum + (point.value as { sum: number }).sum, 0);
      // Exactly the fake 3 s; real time would be a few ms.
      expect(sumOf('leader_election_leader_only_duration_seconds')).toBe(3);
      // The in-memory store answers within the same fake instant; on real time each call takes > 0.
      expect(sumOf('leader_election_store_call_duration_seconds')).toBe(0);
    } finally {
      metrics.disable();
    }
  });

  it('times the shutdown drain and its grace on the module clock', async () => {
    const clock = new FakeClock();
    const a = await replica(clock, {
      store: new InMemoryLeaseStore({ clock }),
      identity: 'a',
      shutdownTimeoutMs: 3_000,
    });
    void a.get(Jobs).hang();
    let closed = false;
    const closing = a.close().then(() => (closed = true));
    contexts.splice(contexts.indexOf(a), 1);
    await clock.advance(2_999);
    expect(closed).toBe(false); // the drain waits for the call, up to shutdownTimeoutMs of the fake clock
    await clock.advance(1);
    expect(closed).toBe(false); // then the term ends and the call gets its 1 s grace
    await clock.advance(1_000);
    expect(closed).toBe(true);
    await closing;
  });
});
