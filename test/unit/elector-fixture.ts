// Shared by the elector unit specs: a fake clock, an in-memory store and electors stopped after each test.
import { Elector, type ElectorOptions, type LeadershipEvent } from '../../lib/election/elector.js';
import { FakeClock, type TimerSkew } from '../../lib/shared/fake-clock.js';
import type { AcquireRequest, CallOptions, Lease, LeaseStore, RenewOptions } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';

export const timings = { leaseDurationMs: 3000, renewDeadlineMs: 2000, renewIntervalMs: 500, retryIntervalMs: 400 };
export const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

export interface ElectorFixture {
  clock: FakeClock;
  memory: InMemoryLeaseStore;
  elector(identity: string, store?: LeaseStore, extra?: Partial<ElectorOptions>): Elector;
  record(target: Elector): LeadershipEvent[];
  held(): Promise<boolean>;
}

/** Registers beforeEach/afterEach; a stopped elector must leave no timer behind. */
export function useElectorFixture(skew: TimerSkew = {}): ElectorFixture {
  const electors: Elector[] = [];
  const fx = {
    elector(identity: string, store: LeaseStore = fx.memory, extra: Partial<ElectorOptions> = {}) {
      const created = new Elector({
        store,
        election: 'jobs',
        identity,
        clock: fx.clock,
        logger: quiet,
        ...timings,
        ...extra,
      });
      electors.push(created);
      return created;
    },
    record(target: Elector) {
      const events: LeadershipEvent[] = [];
      target.events$.subscribe((event) => events.push(event));
      return events;
    },
    async held() {
      return (await fx.memory.read('jobs', { signal: new AbortController().signal })).held;
    },
  } as ElectorFixture;
  beforeEach(() => {
    fx.clock = new FakeClock(1_000, { ...skew });
    fx.memory = new InMemoryLeaseStore({ clock: fx.clock });
  });
  afterEach(async () => {
    await Promise.all(electors.splice(0).map((e) => e.stop()));
    expect(fx.clock.pendingTimers).toBe(0);
  });
  return fx;
}

/** A real store whose renewals take `renewDelayMs` on the fake clock before reaching it. */
export class SlowRenewStore implements LeaseStore {
  readonly name: string;
  readonly limits: LeaseStore['limits'];
  renewDelayMs = 0;

  constructor(
    private readonly inner: LeaseStore,
    private readonly clock: FakeClock,
  ) {
    this.name = inner.name;
    this.limits = inner.limits;
  }

  acquire(request: AcquireRequest) {
    return this.inner.acquire(request);
  }

  async renew(lease: Lease, options: RenewOptions) {
    if (this.renewDelayMs > 0) await new Promise<void>((resolve) => this.clock.setTimeout(resolve, this.renewDelayMs));
    return this.inner.renew(lease, options);
  }

  release(lease: Lease, options: CallOptions) {
    return this.inner.release(lease, options);
  }

  read(election: string, options: CallOptions) {
    return this.inner.read(election, options);
  }
}

/**
 * Settles `work` (stops, closes) that waits on `clock`'s timers (drains, graces) by advancing it 1 s
 * at a time, then checks that nothing left a timer behind.
 */
export async function settleOnFakeClock(clock: FakeClock, work: Promise<unknown>[]): Promise<void> {
  let settled = false;
  const settling = Promise.all(work).then(() => (settled = true));
  while (!settled) await clock.advance(1_000);
  await settling;
  expect(clock.pendingTimers).toBe(0);
}
