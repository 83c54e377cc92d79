// Issue 16: once-per-tick cron runs. Fire times by the `cron` package; runs recorded in leader
// state before the work starts; several replicas share one fenced state, each with its own clock.
import { CronSchedule, EARLY_TOLERANCE_MS } from '../../lib/leadership/cron-schedule.js';
import { type TickJob, tickKey } from '../../lib/leadership/tick.job.js';
import {
  CATCH_UP_WINDOW_MS,
  type LeaderStateAccess,
  TICK_AHEAD_WARN_MS,
  TICK_RECORD_RETRY_MS,
  TickLedger,
  type TickLedgerLogger,
} from '../../lib/leadership/tick.ledger.js';
import { LeaseLostError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import type { LeaderStateEntry } from '../../lib/stores/lease-store.js';

const T0 = Date.UTC(2026, 10, 23, 10, 0, 0); // a whole second (and minute)
const quiet = { log: () => undefined, warn: () => undefined, debug: () => undefined };

/** One election's leader state, fenced like a store: only the current leader's writes land. */
class SharedState {
  leader?: string;
  term = 0;
  readonly entries = new Map<string, string>();
  writes = 0;
  attempts = 0;

  elect(identity: string): void {
    this.leader = identity;
    this.term += 1;
  }

  /**
   * Scripted store failures, consumed one per call: 'fail' rejects before writing, 'lost-reply'
   * writes and then rejects (a reply lost on the way back).
   */
  readonly failures: Array<'fail' | 'lost-reply'> = [];

  /** A replica's view: writes are refused unless it holds the current term. */
  replica(identity: string): LeaderStateAccess & { term: number | undefined; controller: AbortController } {
    const shared = this;
    const view = {
      term: undefined as number | undefined,
      controller: new AbortController(),
      get signal() {
        return view.controller.signal;
      },
      async readState<T>(key = 'state'): Promise<LeaderStateEntry<T> | undefined> {
        const stored = shared.entries.get(key);
        return stored === undefined ? undefined : JSON.parse(stored);
      },
      async writeTickRecord(value: number, key: string): Promise<void> {
        shared.attempts += 1;
        if (shared.leader !== identity || view.term !== shared.term) throw new LeaseLostError('not ours');
        const failure = shared.failures.shift();
        if (failure === 'fail') throw new TransientLeaseStoreError('connection reset');
        shared.writes += 1;
        shared.entries.set(key, JSON.stringify({ value, term: shared.term }));
        if (failure === 'lost-reply') throw new TransientLeaseStoreError('timed out');
      },
    };
    return view;
  }
}

function job(cronTime: string, name?: string): TickJob {
  return { job: name ?? 'Reports.tick', label: 'Reports.tick', cron: { cronTime, name } };
}

describe('CronSchedule', () => {
  it('maps a run to the fire time it belongs to: on time, late, or a little early', async () => {
    const every5 = await CronSchedule.load('Jobs.x', { cronTime: '*/5 * * * * *' });
    expect(every5.fireTimeOf(T0)).toBe(T0);
    expect(every5.fireTimeOf(T0 + 3)).toBe(T0);
    expect(every5.fireTimeOf(T0 + 4_400)).toBe(T0); // very late still belongs to its own tick
    expect(every5.fireTimeOf(T0 - 2)).toBe(T0); // a timer that fired 2 ms early
    expect(every5.fireTimeOf(T0 - EARLY_TOLERANCE_MS - 1)).toBe(T0 - 5_000);
    const everySecond = await CronSchedule.load('Jobs.x', { cronTime: '* * * * * *' });
    // Tolerance is at most a quarter of the period: 249 ms early is the next tick; 251 ms early is
    // this one, 749 ms late.
    expect(everySecond.fireTimeOf(T0 + 751)).toBe(T0 + 1_000);
    expect(everySecond.fireTimeOf(T0 + 749)).toBe(T0);
  });

  it('finds the latest fire time of sparse schedules (daily, in a time zone)', async () => {
    const daily = await CronSchedule.load('Jobs.x', { cronTime: '0 0 2 * * *', timeZone: 'Europe/Paris' });
    const at = Date.UTC(2026, 10, 23, 12, 0, 0);
    expect(new Date(daily.latestAtOrBefore(at)).toISOString()).toBe('2026-11-23T01:00:00.000Z');
    expect(new Date(daily.next(at)).toISOString()).toBe('2026-11-24T01:00:00.000Z');
  });

  it('refuses a one-off Date: it has no ticks', async () => {
    await expect(CronSchedule.load('Jobs.once', { cronTime: new Date() })).rejects.toThrow(
      /Jobs.once.*not a cron expression/,
    );
  });
});

describe('TickLedger', () => {
  let shared: SharedState;
  beforeEach(() => {
    shared = new SharedState();
  });

  function replica(identity: string, clock: { now: number }, logger: TickLedgerLogger = quiet) {
    const state = shared.replica(identity);
    const ledger = new TickLedger(state, logger, () => clock.now);
    return {
      state,
      ledger,
      elect() {
        shared.elect(identity);
        state.term = shared.term;
        state.controller = new AbortController();
      },
    };
  }

  it('records before running; a tick already run is skipped on another replica whose clock is 500 ms behind', async () => {
    const clockA = { now: T0 + 2 };
    const clockB = { now: T0 - 500 + 2 };
    const a = replica('a', clockA);
    const b = replica('b', clockB);
    const runs: string[] = [];
    a.elect();
    await a.ledger.runTick(job('* * * * * *'), () => {
      // Recorded before the work starts.
      expect(JSON.parse(shared.entries.get(tickKey('Reports.tick')) ?? '{}').value).toBe(T0);
      runs.push(`a@${T0}`);
    });
    b.elect(); // handover right after a's tick
    clockB.now = T0 + 3; // b's cron fires for T0 by its own clock (real time T0 + 500)
    await b.ledger.runTick(job('* * * * * *'), () => runs.push(`b@${T0}`));
    clockB.now = T0 + 1_000 + 3;
    await b.ledger.runTick(job('* * * * * *'), () => runs.push(`b@${T0 + 1000}`));
    expect(runs).toEqual([`a@${T0}`, `b@${T0 + 1000}`]);
  });

  it('a stale leader cannot record its tick, so it does not run it', async () => {
    const clock = { now: T0 + 1 };
    const a = replica('a', clock);
    const b = replica('b', clock);
    a.elect();
    b.elect(); // a was paused; b leads now
    let ran = false;
    await expect(a.ledger.runTick(job('* * * * * *'), () => (ran = true))).resolves.toBeUndefined();
    expect(ran).toBe(false);
    expect(shared.entries.size).toBe(0);
  });

  it('two calls for the same tick in one process run it once', async () => {
    const clock = { now: T0 + 1 };
    const a = replica('a', clock);
    a.elect();
    let runs = 0;
    await Promise.all([1, 2, 3].map(() => a.ledger.runTick(job('* * * * * *'), () => (runs += 1))));
    expect(runs).toBe(1);
  });

  it('calls queued behind a hanging record do not burst out when the store answers: not in a later term, nor past their budget', async () => {
    // The store hangs (a read that does not answer); the cron keeps firing, each call queues behind
    // the first. Before the fix, the queue ran every queued tick at once when the store answered.
    let open: () => void = () => undefined;
    const gate = () => new Promise<void>((resolve) => (open = resolve));
    const clock = { now: T0 + 2 };
    const monotonic = { now: 0 };
    const timers = {
      now: () => monotonic.now,
      setTimeout,
      clearTimeout: (t: unknown) => clearTimeout(t as NodeJS.Timeout),
    };
    const state = shared.replica('a');
    const read = state.readState.bind(state);
    const write = state.writeTickRecord.bind(state);
    let hanging: Promise<void> | undefined;
    // Every call hangs: the term's first claim reads, the later ones only write.
    state.readState = async <T>(key?: string) => {
      await hanging;
      return read<T>(key);
    };
    state.writeTickRecord = async (value: number, key: string) => {
      await hanging;
      return write(value, key);
    };
    const ledger = new TickLedger(state, quiet, () => clock.now, undefined, timers);
    const elect = () => {
      shared.elect('a');
      state.term = shared.term;
      state.controller = new AbortController();
    };
    const runs: number[] = [];
    const tick = (at: number) => {
      clock.now = at;
      return ledger.runTick(job('* * * * * *'), (fireTime) => runs.push(fireTime));
    };
    /** A cron call that reaches its claim (a second apart in real life) before the next one. */
    const queue = async (at: number, calls: Promise<unknown>[]) => {
      calls.push(tick(at));
      await new Promise((resolve) => setImmediate(resolve));
    };

    // 1. The term ends while the store hangs (on the term's first read); the same replica leads
    // again when it answers.
    elect();
    hanging = gate();
    const queuedInTerm1: Promise<unknown>[] = [];
    for (const at of [T0 + 2, T0 + 1_002, T0 + 2_002]) await queue(at, queuedInTerm1);
    elect(); // term 2
    hanging = undefined;
    open();
    await Promise.all(queuedInTerm1);
    expect(runs).toEqual([]);
    await tick(T0 + 3_002);
    expect(runs).toEqual([T0 + 3_000]);

    // 2. Same term: the first call was in flight (its write: the record was read in this term
    // already); those queued longer than the budget (half of the 1 s period) are stale.
    hanging = gate();
    const queued: Promise<unknown>[] = [];
    for (const at of [T0 + 4_002, T0 + 5_002, T0 + 6_002]) await queue(at, queued);
    monotonic.now += 600;
    hanging = undefined;
    open();
    await Promise.all(queued);
    expect(runs).toEqual([T0 + 3_000, T0 + 4_000]);
  });

  it('catch-up: a new leader runs the most recent missed tick once; older missed ticks stay skipped', async () => {
    const clock = { now: T0 + 10 };
    const a = replica('a', clock);
    const b = replica('b', clock);
    const runs: number[] = [];
    const j = job('* * * * * *', 'reports');
    a.elect();
    await a.ledger.runTick(j, () => runs.push(T0));
    // a dies; ticks T0+1s .. T0+4s are run by nobody; b is elected at T0 + 4.3 s.
    clock.now = T0 + 4_300;
    b.elect();
    expect(await b.ledger.catchUp(j, () => runs.push(T0 + 4_000))).toBe(true);
    expect(await b.ledger.catchUp(j, () => runs.push(-1))).toBe(false);
    // b's own cron tick for T0 + 4 s, late, finds it recorded.
    await b.ledger.runTick(j, () => runs.push(-2));
    clock.now = T0 + 5_001;
    await b.ledger.runTick(j, () => runs.push(T0 + 5_000));
    expect(runs).toEqual([T0, T0 + 4_000, T0 + 5_000]);
    expect(JSON.parse(shared.entries.get('tick:reports') ?? '{}')).toEqual({ value: T0 + 5_000, term: 2 });
  });

  it('catch-up leaves a job never run alone, and a tick older than the window', async () => {
    const clock = { now: T0 + 10 };
    const a = replica('a', clock);
    a.elect();
    const weekly = job('0 0 2 * * 1', 'weekly'); // Mondays 02:00 UTC; T0 is a Monday 10:00
    expect(await a.ledger.catchUp(weekly, () => undefined)).toBe(false);
    shared.entries.set('tick:weekly', JSON.stringify({ value: T0 - 7 * 86_400_000 - 8 * 3_600_000, term: 1 }));
    a.elect(); // the record is found in a later term (within a term, only the leader's ledger writes it)
    clock.now = T0 + 3 * 86_400_000; // Thursday: Monday 02:00 is more than a day ago
    expect(clock.now - Date.UTC(2026, 10, 23, 2)).toBeGreaterThan(CATCH_UP_WINDOW_MS);
    let ran = false;
    expect(await a.ledger.catchUp(weekly, () => (ran = true))).toBe(false);
    clock.now = T0 + 8 * 3_600_000; // Monday 18:00: within the day
    expect(await a.ledger.catchUp(weekly, () => (ran = true))).toBe(true);
    expect(ran).toBe(true);
  });

  it('keys escape characters outside the state alphabet, uniquely', () => {
    expect(tickKey('Reports.daily')).toBe('tick:Reports.daily');
    expect(tickKey('daily report')).toBe('tick:daily_20report');
    expect(tickKey('a_b')).not.toBe(tickKey('a b'));
    expect(tickKey('a_b')).toMatch(/^[A-Za-z0-9._:-]+$/);
    const long = 'x'.repeat(300);
    expect(tickKey(long)).toHaveLength(200);
    expect(tickKey(`${long}a`)).not.toBe(tickKey(`${long}b`));
    expect(tickKey(`${long}a`)).toMatch(/^[A-Za-z0-9._:-]+$/);
  });
  it('a transient store error while recording is retried within the tick: the tick runs once, not skipped', async () => {
    const clock = { now: T0 + 2 };
    const warnings: string[] = [];
    const a = replica('a', clock, { ...quiet, warn: (m: string) => warnings.push(m) });
    a.elect();
    shared.failures.push('fail');
    let runs = 0;
    await a.ledger.runTick(job('* * * * * *'), () => (runs += 1));
    expect({ runs, writes: shared.writes, warnings }).toEqual({ runs: 1, writes: 1, warnings: [] });
    expect(JSON.parse(shared.entries.get(tickKey('Reports.tick')) ?? '{}')).toEqual({ value: T0, term: 1 });
  });

  it('a write that landed but whose reply was lost is recognised as ours on the retry: the tick runs once', async () => {
    const clock = { now: T0 + 2 };
    const a = replica('a', clock);
    a.elect();
    shared.failures.push('lost-reply');
    let runs = 0;
    await a.ledger.runTick(job('* * * * * *'), () => (runs += 1));
    await a.ledger.runTick(job('* * * * * *'), () => (runs += 1)); // the same tick again: recorded
    expect({ runs, writes: shared.writes }).toEqual({ runs: 1, writes: 1 });
  });

  it('the retry is bounded: by the budget (at most half the period), and at once by the end of the term', async () => {
    const clock = { now: T0 + 2 };
    const warnings: string[] = [];
    const a = replica('a', clock, { ...quiet, warn: (m: string) => warnings.push(m) });
    a.elect();
    shared.failures.push(...Array.from({ length: 100 }, () => 'fail' as const));
    let ran = false;
    const started = performance.now();
    await a.ledger.runTick(job('* * * * * *'), () => (ran = true));
    const elapsed = performance.now() - started;
    // A 1-second cron: half a period, well under TICK_RECORD_RETRY_MS.
    expect(elapsed).toBeGreaterThanOrEqual(400);
    expect(elapsed).toBeLessThan(TICK_RECORD_RETRY_MS);
    expect(ran).toBe(false);
    expect(warnings).toEqual([expect.stringMatching(/skipped Reports.tick tick .*could not record/)]);
    // The term ends during the retries: it gives up at once.
    const retried = a.ledger.runTick(job('*/10 * * * * *'), () => (ran = true));
    setTimeout(() => a.state.controller.abort(), 100);
    const before = performance.now();
    await retried;
    expect(performance.now() - before).toBeLessThan(TICK_RECORD_RETRY_MS - 500);
    expect(ran).toBe(false);
    // A lost lease is not retried at all.
    shared.failures.length = 0;
    a.state.controller = new AbortController();
    shared.elect('b');
    const attempts = shared.attempts;
    await a.ledger.runTick(job('* * * * * *'), () => (ran = true));
    expect({ ran, attempts: shared.attempts }).toEqual({ ran: false, attempts: attempts + 1 });
  });

  it('a record ahead of our clock (a leader whose clock ran ahead) is warned about once per term', async () => {
    const clockA = { now: T0 + 2 }; // a: 5 s ahead of b
    const clockB = { now: T0 - 5_000 + 2 };
    const warnings: string[] = [];
    const a = replica('a', clockA);
    const b = replica('b', clockB, { ...quiet, warn: (m: string) => warnings.push(m) });
    a.elect();
    await a.ledger.runTick(job('* * * * * *'), () => undefined);
    b.elect();
    for (let i = 0; i < 3; i++) {
      clockB.now += 1_000;
      await b.ledger.runTick(job('* * * * * *'), () => warnings.push('ran'));
    }
    expect(warnings).toEqual([
      expect.stringMatching(/Reports.tick: the last run recorded .* ahead of this replica's clock/),
    ]);
    // A new term warns again; a record merely up to TICK_AHEAD_WARN_MS ahead (an early timer, small skew) does not.
    b.elect();
    clockB.now = T0 - TICK_AHEAD_WARN_MS - 100;
    await b.ledger.runTick(job('* * * * * *'), () => warnings.push('ran'));
    expect(warnings).toHaveLength(2);
    clockB.now = T0 - TICK_AHEAD_WARN_MS + 100;
    b.elect();
    await b.ledger.runTick(job('* * * * * *'), () => warnings.push('ran'));
    expect(warnings).toHaveLength(2);
  });
});
