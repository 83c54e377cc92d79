// Issue 24: the handle's leadership view belongs to the term it was set for, and health tells the
// truth about a lease held without acting. An election runtime built outside Nest (as the simulation
// builds it), over the in-memory store, with the handle, elector and store on one fake clock.
import type { Logger } from '@nestjs/common';
import { Elector, type ElectorOptions, type HandoverHooks } from '../../lib/election/elector.js';
import { ElectionRuntime } from '../../lib/leadership/election-runtime.js';
import type { LeaderElectionSharedOptions } from '../../lib/nest/interfaces/leader-election-options.interface.js';
import { resolveModuleOptions } from '../../lib/nest/leader-election.options.js';
import { TransientLeaseStoreError } from '../../lib/shared/errors.js';
import { FakeClock } from '../../lib/shared/fake-clock.js';
import type { AcquireRequest, CallOptions, Lease, LeaseInfo, RenewOptions } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { settleOnFakeClock, timings } from './elector-fixture.js';

/** The in-memory store behind a link that can go dead: every call then hangs until its signal aborts. */
class OutageStore extends InMemoryLeaseStore {
  down = false;
  override acquire(request: AcquireRequest) {
    return this.down ? hang<never>(request.signal) : super.acquire(request);
  }
  override renew(lease: Lease, options: RenewOptions) {
    return this.down ? hang<never>(options.signal) : super.renew(lease, options);
  }
  override read(election: string, options: CallOptions): Promise<LeaseInfo> {
    return this.down ? hang<never>(options.signal) : super.read(election, options);
  }
}

function hang<T>(signal: AbortSignal): Promise<T> {
  return new Promise<T>((_, reject) => {
    const fail = () => reject(new TransientLeaseStoreError('store unreachable', { cause: signal.reason }));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

class LogLines {
  readonly warn: string[] = [];
  readonly logger = {
    log: () => undefined,
    warn: (message: string) => this.warn.push(message),
    error: (message: string) => this.warn.push(message),
    debug: () => undefined,
  } as unknown as Logger;
}

const never = () => new Promise<never>(() => undefined);

describe('ElectionHandle (fake clock)', () => {
  let clock: FakeClock;
  let store: OutageStore;
  let logs: LogLines;
  const handles: ElectionRuntime[] = [];

  beforeEach(() => {
    clock = new FakeClock(1_000);
    store = new OutageStore({ clock });
    logs = new LogLines();
  });
  afterEach(async () => {
    store.down = false;
    // Drains (shutdownTimeoutMs) and graces wait on the fake clock.
    await settleOnFakeClock(
      clock,
      handles.splice(0).map((handle) => handle.stop()),
    );
  });

  function handle(
    identity: string,
    module: Partial<LeaderElectionSharedOptions> = {},
    hooks?: (handle: ElectionRuntime) => HandoverHooks,
    elector: Partial<ElectorOptions> = {},
  ): ElectionRuntime {
    const options = resolveModuleOptions({ store, election: 'jobs', shutdownTimeoutMs: 30_000, ...module });
    const created = new ElectionRuntime(
      { options, logger: logs.logger, clock },
      (self) =>
        new Elector({
          store,
          election: 'jobs',
          identity,
          clock,
          logger: logs.logger,
          ...timings,
          handover: hooks ? hooks(self) : self.handoverHooks,
          ...elector,
        }),
    );
    handles.push(created);
    return created;
  }

  /** Advances in 10 ms steps until `predicate` holds; returns the time it took, or fails past `boundMs`. */
  async function within(what: string, boundMs: number, predicate: () => boolean): Promise<number> {
    const start = clock.now();
    while (!predicate()) {
      if (clock.now() - start > boundMs) throw new Error(`not within ${boundMs} ms: ${what}`);
      await clock.advance(10);
    }
    return clock.now() - start;
  }

  it('defect 1: a handover abandoned mid-drain (the store went away past the deadline) does not stop the next term from acting', async () => {
    const a = handle('a');
    await a.start(undefined);
    expect(a.isLeader()).toBe(true);
    let finish!: () => void;
    const held = a.runIfLeader(() => new Promise<void>((resolve) => (finish = resolve)));
    await a.requestHandover();
    expect(a.isSteppingDown).toBe(true);
    expect(a.isLeader()).toBe(false);
    expect(a.status()).toMatchObject({ state: 'stepping-down', term: 1 });
    // A drain within its bound is a legitimate step-down.
    expect(a.health()).toEqual({ healthy: true });

    store.down = true;
    await within('term 1 ends', timings.renewDeadlineMs + timings.renewIntervalMs, () => a.status().term === null);
    expect(a.status().state).toBe('follower');
    expect(a.isSteppingDown).toBe(false);
    // The drain ended with its term (nothing left to hand over), not after shutdownTimeoutMs.
    await clock.advance(10);
    expect(logs.warn.filter((line) => /handover request .* not completed: the term ended/.test(line))).toHaveLength(1);

    store.down = false;
    // The old lease expires (one lease after its last renewal), then the next poll wins.
    await within('a leads again', timings.leaseDurationMs + 2 * timings.retryIntervalMs, () => a.isLeader());
    expect(a.status()).toMatchObject({ state: 'leader', isLeader: true, term: 2 });
    expect(a.runIfLeader(({ term }) => `ran in term ${term}`)).toBe('ran in term 2');
    expect(a.health()).toEqual({ healthy: true });
    // And it stays so: no flag of term 1 comes back.
    await clock.advance(5 * timings.renewIntervalMs);
    expect(a.isLeader()).toBe(true);
    finish();
    await held;
  });

  it('health: a lease held while a handover step-down outlives its bound (shutdownTimeoutMs + renewIntervalMs) is reported, naming it', async () => {
    const shutdownTimeoutMs = 1_000;
    // A step-down that never completes after the drain (any cause): the elector keeps the lease.
    const a = handle('a', { shutdownTimeoutMs }, (self) => ({
      beforeStepDown: async (request) => {
        await self.handoverHooks.beforeStepDown(request);
        await never();
      },
    }));
    await a.start(undefined);
    await a.requestHandover();
    const boundMs = shutdownTimeoutMs + timings.renewIntervalMs;
    await clock.advance(boundMs - 100);
    expect(a.status()).toMatchObject({ state: 'stepping-down', isLeader: false, term: 1 });
    expect(a.health()).toEqual({ healthy: true });
    const took = await within('health down', 200, () => !a.health().healthy);
    expect(took).toBeLessThanOrEqual(110);
    expect(a.health().reason).toMatch(
      /^holds the lease \(term 1\) but does not act as leader: the handover drain has lasted \d+ ms, longer than its bound \(1500 ms\)$/,
    );
    // Still held and renewed: only health could tell.
    expect(a.status()).toMatchObject({ state: 'stepping-down', term: 1 });
  });

  it('resignWhenStuck: resigns again, once per term, each time it wins while the same call is still stuck', async () => {
    const stuckAfterMs = 300;
    const a = handle('a', { stuckAfterMs, resignWhenStuck: true });
    const won: number[] = [];
    const revoked: string[] = [];
    a.events$.subscribe((event) => {
      if (event.type === 'elected') won.push(event.term as number);
      if (event.type === 'revoked') revoked.push(`${event.term}: ${event.reason}`);
    });
    await a.start(undefined);
    expect(a.isLeader()).toBe(true);
    a.runIfLeader('export', never);
    await within('resigned for stuck work', stuckAfterMs + 50, () => !a.isLeader());
    const acted: number[] = [];
    for (let t = 0; t < 6_000; t += 10) {
      await clock.advance(10);
      if (a.isLeader()) acted.push(a.term as number);
      expect(a.health().healthy).toBe(false);
    }
    // A lone replica keeps winning (nobody else is there) and gives every such term up at once.
    expect(won.length).toBeGreaterThanOrEqual(3);
    expect(acted).toEqual([]);
    expect(revoked).toEqual(won.map((term) => `${term}: resigned`));
    expect(logs.warn.filter((line) => /resigning because export is stuck/.test(line))).toHaveLength(1);
    expect(logs.warn.filter((line) => /still stuck; resigning again/.test(line))).toHaveLength(won.length - 1);
    expect(a.health().reason).toMatch(/^stuck: export has been running for \d+ ms \(stuckAfterMs 300\)$/);
  });

  it('resignWhenStuck: once the stuck call has ended, the next term it wins is kept', async () => {
    const a = handle('a', { stuckAfterMs: 300, resignWhenStuck: true });
    await a.start(undefined);
    let finish!: () => void;
    void a.runIfLeader('export', () => new Promise<void>((resolve) => (finish = resolve)));
    await within('resigned for stuck work', 350, () => !a.isLeader());
    finish();
    await within('a leads again', 3 * timings.retryIntervalMs, () => a.isLeader());
    await clock.advance(5 * timings.renewIntervalMs);
    expect(a.isLeader()).toBe(true);
    expect(a.health()).toEqual({ healthy: true });
  });
});
