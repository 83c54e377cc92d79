// Issue 16: once-per-tick cron runs. Fire times by the `cron` package; runs recorded in leader
// state before the work starts; several replicas share one fenced state, each with its own clock.
import { CronSchedule, EARLY_TOLERANCE_MS } from '../../lib/cron-schedule.js';
import { type LeaderStateEntry, LeaseLostError } from '../../lib/stores/lease-store.js';
import {
  CATCH_UP_WINDOW_MS,
  type LeaderStateAccess,
  type TickJob,
  TickLedger,
  tickKey,
} from '../../lib/tick.ledger.js';

const T0 = Date.UTC(2026, 10, 23, 10, 0, 0); // a whole second (and minute)
const quiet = { log: () => undefined, warn: () => undefined, debug: () => undefined };

/** One election's leader state, fenced like a store: only the current leader's writes land. */
class SharedState {
  leader?: string;
  term = 0;
  readonly entries = new Map<string, string>();
  writes = 0;

  elect(identity: string): void {
    this.leader = identity;
    this.term += 1;
  }

  /** A replica's view: writes are refused unless it holds the current term. */
  replica(identity: string): LeaderStateAccess & { term?: number } {
    const shared = this;
    const view = {
      term: undefined as number | undefined,
      async readState<T>(key = 'state'): Promise<LeaderStateEntry<T> | undefined> {
        const stored = shared.entries.get(key);
        return stored === undefined ? undefined : JSON.parse(stored);
      },
      async writeState<T>(value: T, key = 'state'): Promise<void> {
        if (shared.leader !== identity || view.term !== shared.term) throw new LeaseLostError('not ours');
        shared.writes += 1;
        shared.entries.set(key, JSON.stringify({ value, term: shared.term }));
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

  function replica(identity: string, clock: { now: number }) {
    const state = shared.replica(identity);
    const ledger = new TickLedger(state, quiet, () => clock.now);
    return {
      state,
      ledger,
      elect() {
        shared.elect(identity);
        state.term = shared.term;
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
});
