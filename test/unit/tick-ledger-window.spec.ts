// Issue 28: the catch-up window of `missed: 'catch-up'` is the job's `catchUpWindowMs` (default
// 24 h). A new leader runs the most recent missed tick, once, if due within the window; an older
// tick, or one past the window, is not run. The option is checked where the decorator is applied.
import 'reflect-metadata';
import type { TickJob } from '../../lib/leadership/tick.job.js';
import {
  CATCH_UP_WINDOW_MS,
  isCatchUpWindowMs,
  MAX_CATCH_UP_WINDOW_MS,
  MIN_CATCH_UP_WINDOW_MS,
  TickLedger,
} from '../../lib/leadership/tick.ledger.js';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import { LEADER_ONLY_OPTIONS_METADATA } from '../../lib/nest/leader-election.constants.js';
import { FakeClock } from '../../lib/shared/fake-clock.js';
import { leaderState } from './tick-ledger-state.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 10, 23, 10, 0, 0); // Monday 10:00 UTC, a whole hour

/** A ledger on a FakeClock whose wall clock reads `wall`; the last run recorded at `recorded`. */
function setUp(job: TickJob, wall: number, recorded: number | undefined) {
  const clock = new FakeClock();
  clock.stepWall(wall - clock.wallNow());
  const state = leaderState('reports');
  if (recorded !== undefined) state.entries.set(`tick:${job.job}`, { value: recorded, term: 0 });
  const logs: string[] = [];
  const logger = { log: (m: string) => logs.push(m), warn: (m: string) => logs.push(m), debug: () => undefined };
  const ledger = new TickLedger(state, logger, () => clock.wallNow(), undefined, clock);
  const runs: number[] = [];
  /** One catch-up; a run notes the wall time it ran at. */
  const catchUp = () => ledger.catchUp(job, () => runs.push(clock.wallNow()));
  const record = () => state.entries.get(`tick:${job.job}`)?.value as number | undefined;
  return { clock, catchUp, runs, logs, record };
}

function hourly(catchUpWindowMs?: number): TickJob {
  return { job: 'hourly', label: 'Reports.hourly', cron: { cronTime: '0 0 * * * *' }, catchUpWindowMs };
}

describe("the catch-up window (missed: 'catch-up', catchUpWindowMs)", () => {
  it('runs the most recent missed tick once when it is inside the window; older missed ticks are never run', async () => {
    // The last run was T0 − 3 h; T0 − 2 h, T0 − 1 h and T0 went unrun; elected at T0 + 20 min.
    const { clock, catchUp, runs, logs, record } = setUp(hourly(30 * 60_000), T0 + 20 * 60_000, T0 - 3 * HOUR);
    expect(await catchUp()).toBe(true);
    expect(runs).toEqual([T0 + 20 * 60_000]);
    expect(record()).toBe(T0); // recorded as the T0 tick: not T0 − 1 h, not T0 − 2 h
    // The two older ones are reported lost (the warning of every dropped tick), not run.
    expect(logs).toEqual([
      expect.stringMatching(
        /^hourly: 2 ticks \(2026-11-23T08:00:00.000Z to 2026-11-23T09:00:00.000Z\) ran on no replica/,
      ),
      `hourly: catching up tick ${new Date(T0).toISOString()}, which no leader ran (missed: 'catch-up')`,
    ]);
    // Elected again, still inside the window: T0 is recorded now, nothing more runs.
    await clock.advance(60_000);
    expect(await catchUp()).toBe(false);
    expect(runs).toHaveLength(1);
  });

  it('does not run a most recent missed tick older than the window, nor fall back to an older one', async () => {
    // Window 30 min, elected at T0 + 45 min: T0 is 15 min too old; T0 − 1 h (older still) is not a substitute.
    const { catchUp, runs, logs, record } = setUp(hourly(30 * 60_000), T0 + 45 * 60_000, T0 - 3 * HOUR);
    expect(await catchUp()).toBe(false);
    expect(runs).toEqual([]);
    expect(logs).toEqual([]);
    expect(record()).toBe(T0 - 3 * HOUR); // untouched: the next cron tick records T0 + 1 h as usual
  });

  it('the window is inclusive: a tick due exactly catchUpWindowMs ago runs, 1 ms more does not', async () => {
    const window = 10 * 60_000;
    const edge = setUp(hourly(window), T0 + window, T0 - HOUR);
    expect(await edge.catchUp()).toBe(true);
    expect(edge.record()).toBe(T0);
    const past = setUp(hourly(window), T0 + window, T0 - HOUR);
    past.clock.jump(1); // the wall clock moves with the monotonic one
    expect(await past.catchUp()).toBe(false);
    expect(past.runs).toEqual([]);
  });

  it('without catchUpWindowMs the window is 24 h (unchanged); a longer one catches up a weekly tick the default skips', async () => {
    expect(CATCH_UP_WINDOW_MS).toBe(DAY);
    const weekly = (catchUpWindowMs?: number): TickJob => ({
      job: 'weekly',
      label: 'Reports.weekly',
      cron: { cronTime: '0 0 2 * * 1' }, // Mondays 02:00 UTC
      catchUpWindowMs,
    });
    const monday2 = T0 - 8 * HOUR;
    const thursday = T0 + 3 * DAY; // Monday 02:00 was 3 days 8 h ago
    const byDefault = setUp(weekly(), thursday, monday2 - 7 * DAY);
    expect(await byDefault.catchUp()).toBe(false);
    expect(byDefault.runs).toEqual([]);
    const wide = setUp(weekly(4 * DAY), thursday, monday2 - 7 * DAY);
    expect(await wide.catchUp()).toBe(true);
    expect(wide.record()).toBe(monday2);
    // Within 24 h the default catches it up too: the default window did not move.
    const sameDay = setUp(weekly(), monday2 + DAY, monday2 - 7 * DAY);
    expect(await sameDay.catchUp()).toBe(true);
    expect(sameDay.record()).toBe(monday2);
  });

  it('a job never recorded is not caught up, whatever its window', async () => {
    const { catchUp, runs } = setUp(hourly(MAX_CATCH_UP_WINDOW_MS), T0 + 60_000, undefined);
    expect(await catchUp()).toBe(false);
    expect(runs).toEqual([]);
  });
});

describe('@LeaderOnly({ catchUpWindowMs }) is checked where the decorator is applied', () => {
  const apply = (options: unknown) => {
    class Jobs {
      run(): void {}
    }
    const descriptor = Object.getOwnPropertyDescriptor(Jobs.prototype, 'run') as PropertyDescriptor;
    LeaderOnly(options as never)(Jobs.prototype, 'run', descriptor);
    return Reflect.getMetadata(LEADER_ONLY_OPTIONS_METADATA, descriptor.value);
  };
  const catchUp = { once: 'per-tick', missed: 'catch-up' } as const;

  it('accepts whole ms from 1 s to 366 days, and carries the value to the job', () => {
    expect(MIN_CATCH_UP_WINDOW_MS).toBe(1_000);
    expect(MAX_CATCH_UP_WINDOW_MS).toBe(366 * DAY);
    for (const catchUpWindowMs of [1_000, 90 * 60_000, DAY, 366 * DAY]) {
      const declared = apply({ ...catchUp, catchUpWindowMs });
      expect(declared.options.catchUpWindowMs).toBe(catchUpWindowMs);
      expect(declared.tick).toMatchObject({ label: 'Jobs.run', missed: 'catch-up', catchUpWindowMs });
    }
    // Unset: undefined all the way, so the ledger's default applies.
    expect(apply(catchUp).tick.catchUpWindowMs).toBeUndefined();
  });

  it('refuses a value out of range or not a whole number, naming the option and the range', () => {
    const range =
      /^@LeaderOnly\(\) on Jobs\.run: catchUpWindowMs must be a whole number of milliseconds from 1000 \(1 s\) to 31622400000 \(366 days\) \(got (.*)\)$/;
    const cases: Array<[unknown, string]> = [
      [0, '0'],
      [999, '999'],
      [-60_000, '-60000'],
      [1_500.5, '1500.5'],
      [366 * DAY + 1, '31622400001'],
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      ['3600000', '"3600000"'],
      [null, 'null'],
    ];
    for (const [catchUpWindowMs, shown] of cases) {
      expect(isCatchUpWindowMs(catchUpWindowMs)).toBe(false);
      const error = catchError(() => apply({ ...catchUp, catchUpWindowMs }));
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(range);
      expect((error as Error).message.match(range)?.[1]).toBe(shown);
    }
  });

  it("refuses it without missed: 'catch-up' (it would be ignored), and names it among the known options", () => {
    const without =
      /^@LeaderOnly\(\) on Jobs\.run: catchUpWindowMs applies to once: 'per-tick' with missed: 'catch-up' only; add both or remove catchUpWindowMs$/;
    expect(() => apply({ catchUpWindowMs: HOUR })).toThrow(without);
    expect(() => apply({ once: 'per-tick', catchUpWindowMs: HOUR })).toThrow(without);
    expect(() => apply({ once: 'per-tick', missed: 'skip', catchUpWindowMs: HOUR })).toThrow(without);
    expect(() => apply({ election: 'reports', catchUpWindowMs: HOUR })).toThrow(without);
    // missed without once is reported first: that is the mistake to fix first.
    expect(() => apply({ missed: 'catch-up', catchUpWindowMs: HOUR })).toThrow(
      /missed applies to once: 'per-tick' only/,
    );
    expect(() => apply({ ...catchUp, catchUpWindow: HOUR })).toThrow(
      /catchUpWindow is not a known option \(known: election, once, missed, catchUpWindowMs, stuckAfterMs\)/,
    );
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
