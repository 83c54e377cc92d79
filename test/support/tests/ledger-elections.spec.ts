import { checkLedger, type LedgerEntry, type SendEvidence } from '../ledger.js';

// Several elections in one ledger: "no two acting leaders" holds per election. Two instances
// leading different elections at once is what spread is for; two leading one election never.
describe('chaos ledger checker, per election', () => {
  const term = (election: string, id: string, n: number, at: number, until: number, end?: number): LedgerEntry[] => [
    { t: 'term', election, id, term: n, at },
    { t: 'valid', election, id, term: n, until },
    ...(end === undefined ? [] : [{ t: 'end', election, id, term: n, at: end } as LedgerEntry]),
  ];

  it('accepts instances leading different elections at the same time, each with its own term numbers', () => {
    const report = checkLedger([...term('x', 'a', 5, 0, 3000), ...term('y', 'b', 1, 100, 3000)], 2000);
    expect(report.violations).toEqual([]);
    expect(report.intervals.map((i) => [i.election, i.id])).toEqual([
      ['x', 'a'],
      ['y', 'b'],
    ]);
    expect(report.longestGapMs(0, 2000, 'y')).toBe(100);
    expect(report.longestGapMs(0, 2000)).toBe(0);
  });

  it('flags two acting leaders of one election, naming it, among other elections', () => {
    const report = checkLedger(
      [...term('x', 'a', 1, 0, 1000), ...term('y', 'a', 1, 0, 3000), ...term('x', 'b', 2, 999, 3000)],
      2000,
    );
    expect(report.violations).toEqual([expect.stringMatching(/^overlap of x: a term 1 acted until 1000, b term 2/)]);
  });

  it('judges term order per election, and leader-only work by its own election', () => {
    const report = checkLedger(
      [
        ...term('x', 'a', 2, 0, 1000, 1000),
        ...term('x', 'b', 2, 1100, 3000),
        ...term('y', 'c', 7, 0, 3000),
        { t: 'step', election: 'y', id: 'b', term: 2, at: 1500, job: 'tick' },
      ],
      2000,
    );
    expect(report.violations).toEqual([
      expect.stringContaining('term did not increase of x: a#2 then b#2'),
      'step of tick by b term 2 of y at 1500 outside its acting interval',
    ]);
  });

  it("ends a term at its own election's last renewal: another election's renewals do not extend it", () => {
    const RD = 1_000;
    const evidence: SendEvidence = {
      renewDeadlineMs: new Map([
        ['a', RD],
        ['b', RD],
      ]),
      sends: [
        { id: 'a', election: 'x', op: 'acquire', at: 0, ok: true },
        { id: 'a', election: 'y', op: 'acquire', at: 0, ok: true },
        { id: 'a', election: 'x', op: 'renew', at: 500, ok: true },
        // x's renewals stop reaching the store; y's go on.
        ...[1_000, 1_500, 2_000, 2_500].map((at) => ({ id: 'a', election: 'y', op: 'renew' as const, at, ok: true })),
        { id: 'b', election: 'x', op: 'acquire', at: 1_600, ok: true },
      ],
    };
    // a claims x until 3500 (as if y's renewals counted): the independent bound is 500 + RD.
    const entries = [
      ...term('x', 'a', 1, 10, 3_500),
      ...term('y', 'a', 1, 10, 3_500),
      ...term('x', 'b', 2, 1_610, 2_600),
    ];
    const report = checkLedger(entries, 3_000, evidence);
    expect(report.intervals.find((i) => i.election === 'x' && i.id === 'a')?.end).toBe(1_500);
    expect(report.violations).toEqual([expect.stringMatching(/^x: a#1 claimed validity until 3500, 2000 ms past/)]);
    expect(report.violations.filter((v) => v.startsWith('overlap'))).toEqual([]);

    // Without the election on the sends, y's renewals would extend x's term into b's: an overlap.
    const blind = { ...evidence, sends: evidence.sends.map(({ election: _, ...send }) => send) };
    expect(checkLedger(entries, 3_000, blind).violations).toContainEqual(
      expect.stringMatching(/^overlap of x: a term 1/),
    );
  });
});
