// Chaos scenarios 3 and 4: the leader's path to the store fails — blackholed, or answering 5xx —
// while the other replicas' paths work. Each scenario its own election, run concurrently.
import type { ProxyCall } from '../support/fault-proxy.js';
import type { LedgerEntry } from '../support/ledger.js';
import { chaosFile, FAILOVER_BOUND_MS, type Instance, ms, Scenario, scenario, sleep, T } from './harness.js';

/** The last renewal (or acquisition) of `instance` that reached the store before `before`. */
function lastRenewReaching(instance: Instance, before: number): ProxyCall {
  const calls = instance.proxy!.log.filter(
    (c) =>
      c.forwarded &&
      c.at < before &&
      (c.op === 'lease:renew' || c.op === 'lease:acquire') &&
      c.status !== undefined &&
      c.status >= 200 &&
      c.status < 300,
  );
  const last = calls.at(-1);
  if (!last) throw new Error(`${instance.id} never renewed before ${before}`);
  return last;
}

/**
 * Checks a step-down forced by store faults: the term ended by its deadline (on time, not only
 * capped by the checker), before the lease the store last extended could expire.
 */
function expectSteppedDownInTime(s: Scenario, entries: LedgerEntry[], leader: Instance, term: number, faultAt: number) {
  const interval = s.check().intervals.find((i) => i.id === leader.id && i.term === term)!;
  const lastRenew = lastRenewReaching(leader, faultAt);
  const leaseExpiresNoSoonerThan = lastRenew.at + T.leaseMs;
  expect(interval.end).toBeLessThanOrEqual(lastRenew.at + T.renewDeadlineMs);
  expect(interval.end).toBeLessThan(leaseExpiresNoSoonerThan);
  const validUntil = Math.max(
    ...entries
      .filter((e) => e.t === 'valid' && e.id === leader.id && e.term === term)
      .map((e) => (e as { until: number }).until),
  );
  const end = entries.find((e) => e.t === 'end' && e.id === leader.id && e.term === term) as
    | { at: number; reason: string }
    | undefined;
  expect(end?.reason).toMatch(/deadline/);
  // The instance itself noticed at its deadline (timers on a loaded machine fire a little late).
  expect(end!.at - validUntil).toBeLessThan(2_000);
  return leaseExpiresNoSoonerThan - interval.end;
}

describe('chaos: store faults on the leader', () => {
  const { store, results } = chaosFile('store-faults');

  it.concurrent("3. blackhole the leader's store traffic → it steps down by its deadline, before the lease can expire; another takes over; heal → follower", async () => {
    await scenario('3-blackhole', store.port, async (s) => {
      await s.start(3);
      const first = await s.waitForLeader();
      await sleep(3_000);
      const leader = s.instance(first.id);
      const holeAt = Date.now();
      leader.proxy!.set({ kind: 'blackhole' });
      const next = await s.waitForTerm('a takeover', holeAt, FAILOVER_BOUND_MS + 10_000, leader.id);
      await sleep(2_000);
      const healAt = Date.now();
      leader.proxy!.set({ kind: 'pass' });
      await s.waitForHttp(
        leader,
        '/status',
        'the healed old leader to follow the new one',
        ({ body }) => body.isLeader === false && body.leaderId === next.id && body.state === 'follower',
        15_000,
      );
      await s.waitForHttp(
        leader,
        '/health',
        'the healed old leader to be healthy',
        ({ status }) => status === 200,
        15_000,
      );
      await sleep(3_000);
      const until = Date.now();
      const entries = s.ledger();
      const summary = await s.finish();
      const margin = expectSteppedDownInTime(s, entries, leader, first.term, holeAt);
      results.from(s, summary, 'blackhole → new leader', ms(next.at - holeAt), `≤ ${ms(FAILOVER_BOUND_MS)}`);
      results.from(s, summary, 'old leader stopped acting before its lease could expire, by', ms(margin), '> 0 ms');

      expect(summary.violations).toEqual([]);
      expect(next.term).toBeGreaterThan(first.term);
      expect(next.at - holeAt).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
      // The old leader never led again, and did nothing leader-only after its term.
      expect(entries.filter((e) => e.t === 'term' && e.id === leader.id && e.at > holeAt)).toEqual([]);
      expect(summary.report.longestGapMs(healAt, until)).toBe(0);
    });
  }, 180_000);

  it.concurrent('4. 503/500 bursts shorter than the renew deadline → no leadership change; longer → clean step-down and takeover', async () => {
    await scenario('4-5xx', store.port, async (s) => {
      await s.start(3);
      const first = await s.waitForLeader();
      await sleep(3_000);
      const leader = s.instance(first.id);
      const proxy = leader.proxy!;

      // Short bursts: 5 s of 503, then 5 s of 500 (renew deadline 10 s, renewals every 2 s).
      const burstFrom = Date.now();
      await proxy.window({ kind: 'status', status: 503 }, 5_000);
      await sleep(3_000);
      await proxy.window({ kind: 'status', status: 500 }, 5_000);
      await sleep(3_000);
      const injected = proxy.log.filter((c) => c.at >= burstFrom && (c.status === 503 || c.status === 500)).length;
      expect(injected).toBeGreaterThanOrEqual(2);
      expect(s.terms()).toHaveLength(1);
      expect(s.ledger().filter((e) => e.t === 'end')).toEqual([]);
      expect(s.acting().map((i) => [i.id, i.term])).toEqual([[first.id, first.term]]);

      // A long burst: 500 until someone else leads.
      const longAt = Date.now();
      proxy.set({ kind: 'status', status: 500 });
      const next = await s.waitForTerm('a takeover', longAt, FAILOVER_BOUND_MS + 10_000, leader.id);
      // Failing for longer than the renew deadline: the old leader's health is down.
      const down = await s.waitForHttp(leader, '/health', 'health down', ({ status }) => status === 503, 10_000);
      await sleep(1_000);
      const healAt = Date.now();
      proxy.set({ kind: 'pass' });
      await s.waitForHttp(
        leader,
        '/status',
        'the old leader to follow the new one',
        ({ body }) => body.isLeader === false && body.leaderId === next.id,
        15_000,
      );
      await s.waitForHttp(leader, '/health', 'health up again', ({ status }) => status === 200, 15_000);
      await sleep(3_000);
      const until = Date.now();
      const entries = s.ledger();
      const summary = await s.finish();
      const margin = expectSteppedDownInTime(s, entries, leader, first.term, longAt);
      results.from(s, summary, 'two 5 s bursts (503, 500) → leadership changes', `0 (${injected} calls failed)`, '0');
      results.from(
        s,
        summary,
        '500 for longer than the renew deadline → new leader',
        ms(next.at - longAt),
        `≤ ${ms(FAILOVER_BOUND_MS)}`,
      );
      results.from(s, summary, 'old leader stopped acting before its lease could expire, by', ms(margin), '> 0 ms');

      expect(summary.violations).toEqual([]);
      expect(next.term).toBe(first.term + 1);
      expect(down.body.details).toMatchObject({
        leaderElection: { status: 'down', reason: expect.stringMatching(/failing/) },
      });
      expect(summary.report.longestGapMs(healAt, until)).toBe(0);
    });
  }, 180_000);
});
