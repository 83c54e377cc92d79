// Issue 29: once per tick costs one store write per tick on the leader, and no read per tick. The
// ledger reads a job's record once in a term and keeps what it wrote since (its writes are fenced by
// the lease: nobody else can write the record while the term lasts); it reads again only in a new
// term and after a write that failed (its reply may have been lost). Counted twice: on the ledger's
// leader state, and on the store object itself (every method call of a wrapped in-memory store)
// under a real elector, runtime and runner over 20 s of fake time.
import type { Logger } from '@nestjs/common';
import { Elector } from '../../lib/election/elector.js';
import { ElectionRegistry } from '../../lib/leadership/election.registry.js';
import { ElectionRuntime } from '../../lib/leadership/election-runtime.js';
import { LeaderOnlyRunner, leaderOnlySite } from '../../lib/leadership/leader-only.runner.js';
import { OncePerTickRunner } from '../../lib/leadership/once-per-tick.runner.js';
import type { TickJob } from '../../lib/leadership/tick.job.js';
import { type LeaderStateAccess, TickLedger } from '../../lib/leadership/tick.ledger.js';
import { resolveModuleOptions } from '../../lib/nest/leader-election.options.js';
import { FatalLeaseStoreError, LeaseLostError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import { FakeClock } from '../../lib/shared/fake-clock.js';
import type { LeaderStateEntry, LeaseStore } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { settleOnFakeClock, timings } from './elector-fixture.js';

const T0 = Date.UTC(2026, 10, 23, 10, 0, 0); // a whole second
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
const everySecond: TickJob = { job: 'reports', label: 'Reports.tick', cron: { cronTime: '* * * * * *' } };

/**
 * One election's leader state, fenced like a store (only the current term's writes land), counting
 * reads and writes. Scripted write failures, one per write: 'fail' (nothing written), 'lost-reply'
 * (written, then a transient error), 'fatal' (nothing written, not retried).
 */
class FencedState {
  term = 0;
  leader?: string;
  readonly entries = new Map<string, LeaderStateEntry<unknown>>();
  reads = 0;
  writes = 0;
  readonly failures: Array<'fail' | 'lost-reply' | 'fatal'> = [];

  replica(identity: string) {
    const shared = this;
    const view = {
      term: undefined as number | undefined,
      controller: new AbortController(),
      election: 'jobs',
      get signal(): AbortSignal {
        return view.controller.signal;
      },
      async readState<T>(key = 'state') {
        shared.reads += 1;
        return shared.entries.get(key) as LeaderStateEntry<T> | undefined;
      },
      async writeTickRecord(value: number, key: string) {
        if (shared.leader !== identity || view.term !== shared.term) throw new LeaseLostError('not ours');
        const failure = shared.failures.shift();
        if (failure === 'fail') throw new TransientLeaseStoreError('connection reset');
        if (failure === 'fatal') throw new FatalLeaseStoreError('permission denied');
        shared.writes += 1;
        shared.entries.set(key, { value, term: shared.term });
        if (failure === 'lost-reply') throw new TransientLeaseStoreError('timed out');
      },
    } satisfies LeaderStateAccess & Record<string, unknown>;
    return view;
  }
}

describe('the tick ledger reads a record once per term', () => {
  let shared: FencedState;
  beforeEach(() => {
    shared = new FencedState();
  });

  function replica(identity: string, clock: { now: number }, warnings: string[] = []) {
    const state = shared.replica(identity);
    const ledger = new TickLedger(state, { ...quiet, warn: (m: string) => warnings.push(m) }, () => clock.now);
    const runs: number[] = [];
    return {
      state,
      runs,
      elect() {
        shared.term += 1;
        shared.leader = identity;
        state.term = shared.term;
        state.controller.abort();
        state.controller = new AbortController();
      },
      /** The cron's call for the tick at `at` (a few ms late). */
      tick: (at: number) => {
        clock.now = at + 3;
        return ledger.runTick(everySecond, (fireTime) => runs.push(fireTime));
      },
      catchUp: () => ledger.catchUp(everySecond, () => runs.push(-1)),
    };
  }

  it('a term reads the record once (at its catch-up or first tick); each tick is then one write', async () => {
    const clock = { now: T0 };
    const a = replica('a', clock);
    a.elect();
    for (let i = 0; i < 5; i++) await a.tick(T0 + i * 1_000);
    expect({ runs: a.runs.length, reads: shared.reads, writes: shared.writes }).toEqual({
      runs: 5,
      reads: 1,
      writes: 5,
    });
    // The next term (here the same replica, elected again) reads once more, at its catch-up.
    a.elect();
    clock.now = T0 + 5_200;
    expect(await a.catchUp()).toBe(true);
    for (let i = 6; i < 10; i++) await a.tick(T0 + i * 1_000);
    expect({ runs: a.runs.length, reads: shared.reads, writes: shared.writes }).toEqual({
      runs: 10,
      reads: 2,
      writes: 10,
    });
  });

  it('what a replica wrote in an earlier term is not trusted: elected again, it reads what the leader between ran', async () => {
    const clock = { now: T0 };
    const a = replica('a', clock);
    const b = replica('b', clock);
    a.elect();
    await a.tick(T0);
    b.elect();
    await b.tick(T0 + 1_000);
    await b.tick(T0 + 2_000);
    a.elect();
    // a's cron call for T0 + 2 s comes late, in its new term: b ran that tick.
    await a.tick(T0 + 2_000);
    await a.tick(T0 + 3_000);
    expect(a.runs).toEqual([T0, T0 + 3_000]);
    expect(b.runs).toEqual([T0 + 1_000, T0 + 2_000]);
    expect(shared.entries.get('tick:reports')).toEqual({ value: T0 + 3_000, term: 3 });
  });

  it('a write that failed is read back before the next attempt (the only read within a term), and the tick runs once', async () => {
    const clock = { now: T0 };
    const warnings: string[] = [];
    const a = replica('a', clock, warnings);
    a.elect();
    await a.tick(T0); // the term's read
    shared.failures.push('lost-reply');
    await a.tick(T0 + 1_000); // written, reply lost: read back, found ours
    expect({ runs: a.runs, reads: shared.reads, writes: shared.writes }).toEqual({
      runs: [T0, T0 + 1_000],
      reads: 2,
      writes: 2,
    });
    shared.failures.push('fail');
    await a.tick(T0 + 2_000); // nothing written: read back, written again
    expect({ reads: shared.reads, writes: shared.writes }).toEqual({ reads: 3, writes: 3 });
    await a.tick(T0 + 2_000); // the same tick again: known as recorded, no read
    await a.tick(T0 + 3_000);
    expect({ runs: a.runs, reads: shared.reads, writes: shared.writes }).toEqual({
      runs: [T0, T0 + 1_000, T0 + 2_000, T0 + 3_000],
      reads: 3,
      writes: 4,
    });
    // A fatal error is not retried: the tick is skipped, and the next one reads before it writes.
    shared.failures.push('fatal');
    await a.tick(T0 + 4_000);
    await a.tick(T0 + 5_000);
    expect({ runs: a.runs.slice(4), reads: shared.reads, writes: shared.writes }).toEqual({
      runs: [T0 + 5_000],
      reads: 4,
      writes: 5,
    });
    expect(warnings).toEqual([
      expect.stringMatching(/^skipped reports tick \S+: could not record the run .*permission denied/),
      expect.stringMatching(
        new RegExp(`^reports: the tick of ${new Date(T0 + 4_000).toISOString()} ran on no replica`),
      ),
    ]);
  });

  it('a write answered after its term ended does not run: the record stands, the tick is dropped (at most once)', async () => {
    const clock = { now: T0 };
    const a = replica('a', clock);
    a.elect();
    await a.tick(T0);
    const write = a.state.writeTickRecord.bind(a.state);
    a.state.writeTickRecord = async (value: number, key: string) => {
      await write(value, key);
      a.state.controller.abort(); // the term ends while the reply travels
    };
    await a.tick(T0 + 1_000);
    expect(a.runs).toEqual([T0]);
    expect(shared.entries.get('tick:reports')).toEqual({ value: T0 + 1_000, term: 1 });
  });
});

/**
 * The in-memory store behind a proxy that counts every method call on the store object, by name;
 * `folds: false` hides its `renewWith`, as a store without the folded renewal has none.
 */
function countingStore(inner: InMemoryLeaseStore, folds = true): { store: LeaseStore; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'renewWith' && !folds) return undefined;
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor') return value;
      return (...args: unknown[]) => {
        calls.set(property, (calls.get(property) ?? 0) + 1);
        return Reflect.apply(value, target, args);
      };
    },
  });
  return { store, calls };
}

const total = (calls: Map<string, number>) => [...calls.values()].reduce((sum, n) => sum + n, 0);
const since = (calls: Map<string, number>, before: Map<string, number>) =>
  new Map(
    [...calls].map(([name, n]) => [name, n - (before.get(name) ?? 0)]).filter(([, n]) => n !== 0) as [string, number][],
  );

describe('once per tick on the store: one write per tick, no read per tick (issue 29)', () => {
  let clock: FakeClock;
  const runtimes: ElectionRuntime[] = [];

  beforeEach(() => {
    clock = new FakeClock(1_000);
  });
  afterEach(() =>
    settleOnFakeClock(
      clock,
      runtimes.splice(0).map((runtime) => runtime.stop()),
    ),
  );

  /**
   * A replica with the handover capability and leader state (the in-memory store has both), its own
   * counting proxy over `inner`, and one once-per-tick job that the scheduler would call every second.
   */
  async function replica(
    identity: string,
    inner: InMemoryLeaseStore,
    missed: 'skip' | 'catch-up',
    runs: string[],
    folds = true,
  ) {
    const { store, calls } = countingStore(inner, folds);
    const options = resolveModuleOptions({ store, election: 'jobs', shutdownTimeoutMs: 2_000 });
    const logger = quiet as unknown as Logger;
    const runtime = new ElectionRuntime(
      { options, logger, clock, store },
      (self) =>
        new Elector({ store, election: 'jobs', identity, clock, logger, ...timings, handover: self.handoverHooks }),
    );
    runtimes.push(runtime);
    const registry = new ElectionRegistry();
    registry.add('jobs', runtime);
    const ticks = new OncePerTickRunner(logger as never);
    const runner = new LeaderOnlyRunner(registry, ticks, () => new Error('route'), {
      debugEnabled: () => false,
      debug: () => undefined,
    });
    const method = () => void runs.push(`${identity}@${Math.floor(clock.wallNow() / 1_000) * 1_000}`);
    const cron = { cronTime: '* * * * * *', name: 'every-second' };
    const tick = { label: 'Jobs.everySecond', missed, cron: () => cron };
    const site = leaderOnlySite({ label: tick.label, election: undefined, isAsync: false, tick, isRoute: () => false });
    ticks.register(runtime, tick, cron, 'Jobs.everySecond (Jobs)', method);
    await runtime.start(undefined);
    ticks.start();
    return { runtime, calls, call: () => runner.invoke(site, method, undefined, []) };
  }

  /** One second on: the scheduler's calls at the next whole wall second, on every replica. */
  async function fire(...replicas: Array<{ call: () => unknown }>) {
    const next = Math.ceil((clock.wallNow() + 1) / 1_000) * 1_000;
    await clock.advance(next - clock.wallNow());
    await Promise.all(replicas.map((r) => r.call()));
  }

  /** The renewal's own calls: the renew (folded or not), and a store that does not fold also reads the pending handover request. */
  const renewalCalls = (window: Map<string, number>) =>
    (window.get('renew') ?? 0) + (window.get('renewWith') ?? 0) + (window.get('readHandover') ?? 0);
  const renewals = (window: Map<string, number>) => (window.get('renew') ?? 0) + (window.get('renewWith') ?? 0);

  it.each([
    ['skip', true],
    ['catch-up', true],
    ['skip', false],
  ] as const)(
    'a leader firing a job every second for 20 s makes its renewal calls and one write per tick, no read per tick (missed: %s, store folds: %s)',
    async (missed, folds) => {
      const runs: string[] = [];
      const a = await replica('a', new InMemoryLeaseStore({ clock }), missed, runs, folds);
      expect(a.runtime.isLeader()).toBe(true);
      for (let i = 0; i < 3; i++) await fire(a); // after startup: the term's read is behind us
      const startup = new Map(a.calls);
      for (let i = 0; i < 20; i++) await fire(a);
      const window = since(a.calls, startup);
      console.log(
        `once per tick, 20 s (missed: ${missed}, folds: ${folds}): ${runs.length - 3} ticks`,
        Object.fromEntries(window),
      );
      expect(runs).toHaveLength(23);
      expect(renewals(window)).toBeGreaterThanOrEqual(20_000 / timings.renewIntervalMs - 2);
      expect(window.get('readState') ?? 0).toBe(0);
      expect(window.get('writeState')).toBe(20);
      expect(total(window) - renewalCalls(window)).toBe(20);
      // The floor: a store that folds makes ONE call per renewal (the handover read rides
      // on it); one that does not still reads the request after each renewal.
      expect(window.get('readHandover') ?? 0).toBe(folds ? 0 : renewals(window));
      expect(total(window)).toBe(renewals(window) * (folds ? 1 : 2) + 20);
      // From startup on, the term's one read and the acquire are the constant.
      expect(total(a.calls) - renewalCalls(a.calls)).toBeLessThanOrEqual(23 + 5);
      expect(a.calls.get('readState')).toBe(1);
    },
  );

  it('after a failover the new leader reads once, then writes once per tick; no tick runs twice', async () => {
    const inner = new InMemoryLeaseStore({ clock });
    const runs: string[] = [];
    const a = await replica('a', inner, 'catch-up', runs);
    const b = await replica('b', inner, 'catch-up', runs);
    for (let i = 0; i < 5; i++) await fire(a, b);
    const before = new Map(b.calls);
    await a.runtime.stop(); // graceful: b is elected at once
    await clock.advance(0);
    expect(b.runtime.isLeader()).toBe(true);
    for (let i = 0; i < 20; i++) await fire(a, b);
    const window = since(b.calls, before);
    console.log('the new leader, its first 20 s', Object.fromEntries(window));
    expect(window.get('readState')).toBe(1);
    expect(window.get('writeState')).toBe(20);
    expect(total(window) - renewalCalls(window)).toBeLessThanOrEqual(20 + 5);
    expect(runs).toHaveLength(25);
    expect(new Set(runs.map((run) => run.slice(2))).size).toBe(25);
  });
});
