import { checkLedger, type LedgerEntry, type SendEvidence } from '../ledger.js';

// The chaos checker's acting intervals end by the proxy's log of requests (renewDeadline after the
// last successful acquire/renew arrived), not by the elector's own `validUntil`: an elector that
// overstates its deadline must not move the checker's bound with it.
describe('independent ledger', () => {
  const RD = 1_000;
  const evidence = (sends: SendEvidence['sends'], ids = ['a', 'b']): SendEvidence => ({
    renewDeadlineMs: new Map(ids.map((id) => [id, RD])),
    sends,
  });
  // a: acquire sent at 100 (elected at 120), renewals at 400 and 700 (the one at 1000 failed).
  const aSends: SendEvidence['sends'] = [
    { id: 'a', op: 'acquire', at: 100, ok: true },
    { id: 'a', op: 'renew', at: 400, ok: true },
    { id: 'a', op: 'renew', at: 700, ok: true },
    { id: 'a', op: 'renew', at: 1_000, ok: false },
  ];
  const honestBound = 700 + RD;

  /** a's ledger with each answer arriving `answerMs` after its send, deadline counted from `from`. */
  const aLedger = (from: 'send' | 'answer', answerMs: number): LedgerEntry[] => {
    const claim = (sentAt: number) => sentAt + RD + (from === 'answer' ? answerMs : 0);
    return [
      { t: 'term', id: 'a', term: 1, at: 100 + answerMs },
      { t: 'valid', id: 'a', term: 1, until: claim(100) },
      { t: 'valid', id: 'a', term: 1, until: claim(400) },
      { t: 'valid', id: 'a', term: 1, until: claim(700) },
    ];
  };

  it('accepts an honest elector and ends its term at the independent deadline', () => {
    const report = checkLedger(
      [...aLedger('send', 30), { t: 'step', id: 'a', term: 1, at: honestBound - 1, job: 'tick' }],
      5_000,
      evidence(aSends),
    );
    expect(report.violations).toEqual([]);
    expect(report.intervals[0].end).toBe(honestBound);
  });

  it('catches a planted overstated claim (deadline counted from the answer) that the claim-based check accepts', () => {
    // The overstating elector acts until 1730; b takes over after that, so no interval overlaps by
    // the claims, and a's late step sits inside its claimed interval.
    const entries: LedgerEntry[] = [
      ...aLedger('answer', 30),
      { t: 'step', id: 'a', term: 1, at: honestBound + 20, job: 'tick' },
      { t: 'end', id: 'a', term: 1, at: honestBound + 30 },
      { t: 'term', id: 'b', term: 2, at: honestBound + 31 },
      { t: 'valid', id: 'b', term: 2, until: honestBound + 25 + RD },
    ];
    const bSends: SendEvidence['sends'] = [{ id: 'b', op: 'acquire', at: honestBound + 25, ok: true }];

    expect(checkLedger(entries, 5_000).violations).toEqual([]);

    const report = checkLedger(entries, 5_000, evidence([...aSends, ...bSends]));
    expect(report.violations).toEqual([
      expect.stringMatching(/^a#1 claimed validity until 1730, 30 ms past its independent deadline 1700 .*overstates/),
      expect.stringContaining('step of tick by a term 1 at 1720 outside its acting interval'),
    ]);
    expect(report.intervals[0].end).toBe(honestBound);
  });

  it('caps a paused instance at its independent deadline, not at its (overstated) claim', () => {
    // a was paused from 900 and wrote its end at 2400; it claimed validity until 2500. b led from
    // 2000. By the claim, a "acted" until 2400: an overlap. By the rule, a stopped at 1100.
    const entries: LedgerEntry[] = [
      { t: 'term', id: 'a', term: 1, at: 120 },
      { t: 'valid', id: 'a', term: 1, until: 2_500 },
      { t: 'end', id: 'a', term: 1, at: 2_400 },
      { t: 'term', id: 'b', term: 2, at: 2_000 },
      { t: 'valid', id: 'b', term: 2, until: 2_990 },
    ];
    const sends: SendEvidence['sends'] = [
      { id: 'a', op: 'acquire', at: 100, ok: true },
      { id: 'b', op: 'acquire', at: 1_990, ok: true },
    ];
    expect(checkLedger(entries, 5_000).violations).toEqual([expect.stringContaining('overlap: a term 1')]);
    const report = checkLedger(entries, 5_000, evidence(sends));
    expect(report.violations).toEqual([expect.stringContaining('a#1 claimed validity until 2500, 1400 ms past')]);
    expect(report.intervals[0].end).toBe(100 + RD);
  });

  it('counts only successful requests, and only those of the term', () => {
    const entries: LedgerEntry[] = [
      ...aLedger('send', 10),
      { t: 'end', id: 'a', term: 1, at: 1_500 },
      // a's second term: its renewals must not extend the first, nor the first's the second.
      { t: 'term', id: 'a', term: 3, at: 4_010 },
      { t: 'valid', id: 'a', term: 3, until: 5_000 },
    ];
    const sends: SendEvidence['sends'] = [...aSends, { id: 'a', op: 'acquire', at: 4_000, ok: true }];
    const report = checkLedger(entries, 9_000, evidence(sends, ['a']));
    expect(report.violations).toEqual([]);
    expect(report.intervals.map((i) => [i.term, i.end])).toEqual([
      [1, 1_500],
      [3, 5_000],
    ]);
  });

  it('flags a term with no successful acquire in the proxy log', () => {
    const report = checkLedger(aLedger('send', 10), 5_000, evidence([{ id: 'a', op: 'acquire', at: 100, ok: false }]));
    expect(report.violations).toEqual([
      expect.stringContaining('a#1: elected without a successful acquire'),
      expect.stringContaining('a#1 claimed validity'),
    ]);
  });
});
