import { checkContention, checkLedger, type LedgerEntry } from '../ledger.js';

// The chaos checker must catch what it exists to catch: these cases prove it can fail.
describe('chaos ledger checker', () => {
  const term = (id: string, n: number, at: number, until: number, end?: number): LedgerEntry[] => [
    { t: 'term', id, term: n, at },
    { t: 'valid', id, term: n, until },
    ...(end === undefined ? [] : [{ t: 'end', id, term: n, at: end } as LedgerEntry]),
  ];

  it('accepts clean hand-overs with increasing terms', () => {
    const report = checkLedger([...term('a', 1, 0, 1000, 900), ...term('b', 2, 950, 3000)], 2000);
    expect(report.violations).toEqual([]);
    expect(report.intervals.map((i) => [i.id, i.start, i.end])).toEqual([
      ['a', 0, 900],
      ['b', 950, 2000],
    ]);
    expect(report.longestGapMs(0, 2000)).toBe(50);
  });

  it('caps a paused instance at its validity bound even if it wrote its end late', () => {
    const report = checkLedger([...term('a', 1, 0, 1000, 5000), ...term('b', 2, 1200, 9000)], 6000);
    expect(report.violations).toEqual([]);
    expect(report.intervals[0].end).toBe(1000);
  });

  it('flags overlapping acting intervals', () => {
    const report = checkLedger([...term('a', 1, 0, 1000), ...term('b', 2, 999, 3000)], 2000);
    expect(report.violations).toEqual([expect.stringContaining('overlap: a term 1')]);
  });

  it('flags a term that does not increase across holders', () => {
    const report = checkLedger([...term('a', 2, 0, 1000, 1000), ...term('b', 2, 1100, 3000)], 2000);
    expect(report.violations).toEqual([expect.stringContaining('term did not increase')]);
  });

  it('flags leader-only work outside the acting interval, and errors', () => {
    const report = checkLedger(
      [
        ...term('a', 1, 0, 1000, 1000),
        { t: 'step', id: 'a', term: 1, at: 500, job: 'tick' },
        { t: 'step', id: 'a', term: 1, at: 1001, job: 'tick' },
        { t: 'exec', id: 'b', term: 7, start: 10, end: 20, job: 'tick', aborted: false },
        { t: 'error', id: 'b', at: 5, message: 'boom' },
      ],
      2000,
    );
    expect(report.violations).toEqual([
      'b: unhandled error: boom',
      expect.stringContaining('step of tick by a term 1 at 1001'),
      expect.stringContaining('exec of tick by b term 7'),
    ]);
  });

  it('measures the longest leaderless gap', () => {
    const report = checkLedger([...term('a', 1, 100, 500, 500), ...term('b', 2, 2500, 9000)], 3000);
    expect(report.longestGapMs(0, 3000)).toBe(2000);
    expect(report.longestGapMs(0, 5000)).toBe(2000);
  });

  it('flags an instance that went quiet inside a window where it must contend', () => {
    const calls = [0, 900, 1800, 2700, 6000, 6900].map((at) => ({ id: 'a', at }));
    calls.push({ id: 'b', at: 100 });
    expect(checkContention(calls, [{ id: 'a', from: 0, until: 7000 }], 1500)).toEqual([
      expect.stringContaining('a made no store call for 3300 ms (from 2700 to 6000'),
    ]);
    // Silence outside the window (e.g. while SIGSTOPped) is fine; so is a short window.
    expect(
      checkContention(
        calls,
        [
          { id: 'a', from: 0, until: 2800 },
          { id: 'a', from: 6000, until: 7000 },
        ],
        1500,
      ),
    ).toEqual([]);
    // A window with no call at all, longer than allowed, fails; b's one call does not count for a.
    expect(checkContention(calls, [{ id: 'b', from: 200, until: 2000 }], 1500)).toEqual([
      expect.stringContaining('b made no store call for 1800 ms'),
    ]);
  });
});
