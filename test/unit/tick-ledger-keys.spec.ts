// Issue 24: a once-per-tick job is found by its key alone, so one election's jobs must have
// distinct keys (defect 4); ticks that ran on no replica are reported (item 7). The ledger alone,
// outside Nest, on a fenced in-memory state and a hand-driven clock.

import { TICKS_LOST_WARN_INTERVAL_MS } from '../../lib/leadership/lost-ticks.report.js';
import { type TickJob, tickKey } from '../../lib/leadership/tick.job.js';
import { TickLedger } from '../../lib/leadership/tick.ledger.js';
import { leaderState } from './tick-ledger-state.js';

const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);

/** Log lines by level. */
function capture() {
  const lines: Array<{ level: string; message: string }> = [];
  const push = (level: string) => (message: string) => lines.push({ level, message });
  return { lines, log: push('log'), warn: push('warn'), debug: push('debug') };
}

function job(label: string, cronTime: string, name?: string): TickJob {
  return { job: name ?? label, label, cron: { cronTime, name } };
}

describe('TickLedger job keys', () => {
  it('register refuses a second job with the same key in one ledger, naming both owners and the fix', () => {
    const ledger = new TickLedger(leaderState('jobs'), capture());
    const first = job('Jobs.run', '* * * * * *');
    ledger.register(first, 'Jobs.run (provider Jobs in BillingModule)');
    ledger.register(first, 'Jobs.run (provider Jobs in BillingModule)'); // the same job again: fine
    expect(() =>
      ledger.register(job('Jobs.run', '*/2 * * * * *'), 'Jobs.run (provider Jobs in ReportsModule)'),
    ).toThrow(/Jobs in ReportsModule.*Jobs in BillingModule.*"tick:Jobs\.run" of election "jobs".*\{ name:/);
    // A schedule name that equals another job's Class.method is the same key too.
    expect(() => ledger.register(job('Other.run', '* * * * * *', 'Jobs.run'), 'Other.run')).toThrow(/tick:Jobs\.run/);
    ledger.register(job('Jobs.run', '* * * * * *', 'reports.run'), 'Jobs.run (provider Jobs in ReportsModule)');
  });

  it('schedules are cached per job object, never by name: each job computes its own fire times', async () => {
    const state = leaderState('jobs');
    const clock = { now: T0 + 1_000 + 5 }; // an odd second: the every-other-second job's tick is T0
    const ledger = new TickLedger(state, capture(), () => clock.now);
    const ran: number[] = [];
    // Two jobs of one key, which only an unregistered use allows (register refuses it): the
    // schedule loaded for the first must not serve the second.
    const everyOther = job('Jobs.run', '*/2 * * * * *');
    const everySecond = job('Jobs.run', '* * * * * *');
    await ledger.runTick(everyOther, () => ran.push(T0));
    expect(state.entries.get(tickKey('Jobs.run'))?.value).toBe(T0);
    await ledger.runTick(everySecond, () => ran.push(T0 + 1_000));
    expect(ran).toEqual([T0, T0 + 1_000]);
    expect(state.entries.get(tickKey('Jobs.run'))?.value).toBe(T0 + 1_000);
  });
});

describe('TickLedger lost ticks', () => {
  it('a run more than ¾ of a 1 s period late counts as the next tick: the late tick is reported lost, at warn', async () => {
    const state = leaderState('jobs');
    const logger = capture();
    const clock = { now: T0 + 3 };
    const lost: number[] = [];
    const ledger = new TickLedger(state, logger, () => clock.now, { ticksLost: (_job, count) => lost.push(count) });
    const j = job('Jobs.run', '* * * * * *');
    const ran: number[] = [];
    await ledger.runTick(j, () => ran.push(T0));
    clock.now = T0 + 1_000 + 760; // the T0 + 1 s tick, 760 ms late: taken for T0 + 2 s
    await ledger.runTick(j, () => ran.push(T0 + 1_000));
    clock.now = T0 + 2_000 + 3; // the T0 + 2 s tick on time: recorded already
    await ledger.runTick(j, () => ran.push(T0 + 2_000));
    expect(ran).toEqual([T0, T0 + 1_000]);
    expect(state.entries.get(tickKey('Jobs.run'))?.value).toBe(T0 + 2_000);
    expect(lost).toEqual([1]);
    const warnings = logger.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    expect(warnings).toEqual([
      expect.stringContaining(`Jobs.run: the tick of ${new Date(T0 + 1_000).toISOString()} ran on no replica`),
    ]);
  });

  it('warns at most once per interval per job; the losses in between are counted into the next warning', async () => {
    const state = leaderState('jobs');
    const logger = capture();
    const clock = { now: T0 + 3 };
    let lostTotal = 0;
    const ledger = new TickLedger(state, logger, () => clock.now, {
      ticksLost: (_job, count) => {
        lostTotal += count;
      },
    });
    const a = job('A.run', '* * * * * *');
    const b = job('B.run', '* * * * * *');
    const tick = async (at: number) => {
      clock.now = at + 3;
      await ledger.runTick(a, () => undefined);
      await ledger.runTick(b, () => undefined);
    };
    await tick(T0);
    await tick(T0 + 5_000); // 4 lost each (a failover, a paused process): warned
    await tick(T0 + 8_000); // 2 lost each, within the interval: debug only
    await tick(T0 + 10_000); // 1 lost each: debug only
    await tick(T0 + 5_000 + TICKS_LOST_WARN_INTERVAL_MS); // many lost: warned, with the 3 not warned of
    await tick(T0 + 6_000 + TICKS_LOST_WARN_INTERVAL_MS); // none lost
    const warnings = logger.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    expect(warnings).toHaveLength(4); // two per job
    expect(warnings.filter((w) => w.startsWith('A.run: 4 ticks'))).toHaveLength(1);
    const gap = TICKS_LOST_WARN_INTERVAL_MS / 1000 - 5 - 1;
    expect(
      warnings.filter((w) => w.startsWith(`A.run: ${gap} ticks`) && w.includes('(and 3 more since the last warning)')),
    ).toHaveLength(1);
    expect(lostTotal).toBe(2 * (4 + 2 + 1 + gap));
    expect(
      logger.lines.filter((line) => line.level === 'debug' && /ran on no replica/.test(line.message)),
    ).toHaveLength(4);
  });

  it('no loss is reported for a first run, consecutive ticks, or a tick found recorded', async () => {
    const state = leaderState('jobs');
    const logger = capture();
    const clock = { now: T0 + 3 };
    const ledger = new TickLedger(state, logger, () => clock.now, {
      ticksLost: () => {
        throw new Error('no tick was lost');
      },
    });
    const j = job('Jobs.run', '*/5 * * * * *');
    for (const at of [T0, T0 + 5_000, T0 + 5_000, T0 + 10_000 - 300, T0 + 15_000]) {
      clock.now = at + 3;
      await ledger.runTick(j, () => undefined);
    }
    expect(logger.lines.filter((line) => line.level === 'warn')).toEqual([]);
  });
});
