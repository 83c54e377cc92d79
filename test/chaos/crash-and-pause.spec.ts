// Chaos scenarios 1 and 2: the leader process dies (kill -9) or freezes (SIGSTOP) — real
// processes, real Azurite, each scenario its own election, run concurrently.
import { chaosFile, FAILOVER_BOUND_MS, ms, scenario, sleep, T } from './harness.js';

describe('chaos: crash and pause', () => {
  const { store, results } = chaosFile('crash-and-pause');

  it.concurrent('1. kill -9 the leader → another leads within lease + retry + slack', async () => {
    await scenario('1-kill-9', store.port, async (s) => {
      await s.start(3);
      const first = await s.waitForLeader();
      await sleep(3_000);
      const leader = s.instance(first.id);
      const killAt = leader.signal('SIGKILL');
      await leader.exited;
      const next = await s.waitForTerm('a takeover after kill -9', killAt, FAILOVER_BOUND_MS + 10_000, leader.id);
      const failover = next.at - killAt;
      await sleep(3_000);
      const until = Date.now();
      const summary = await s.finish();
      results.from(s, summary, 'kill -9 → new leader', ms(failover), `≤ ${ms(FAILOVER_BOUND_MS)}`);

      expect(summary.violations).toEqual([]);
      expect(next.term).toBeGreaterThan(first.term);
      expect(failover).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
      // Nobody took over before the lease the dead leader last renewed (≤ 2 s before) could expire.
      expect(failover).toBeGreaterThanOrEqual(T.leaseMs - T.renewIntervalMs - 1_000);
      expect(summary.report.longestGapMs(killAt, until)).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
    });
  }, 180_000);

  it.concurrent('2. SIGSTOP the leader past its lease → another leads; after SIGCONT it does no leader-only work and rejoins as a follower', async () => {
    await scenario('2-sigstop', store.port, async (s) => {
      await s.start(3);
      const first = await s.waitForLeader();
      await sleep(3_000);
      const leader = s.instance(first.id);
      const { sentAt: stopAt, frozenAt } = await leader.freeze();
      const next = await s.waitForTerm(
        'a takeover while the leader is frozen',
        stopAt,
        FAILOVER_BOUND_MS + 10_000,
        leader.id,
      );
      // Frozen for longer than the lease, and until someone else leads.
      await sleep(Math.max(1_000, stopAt + T.leaseMs + 2_000 - Date.now()));
      const resumeAt = leader.signal('SIGCONT');

      // It rejoins as a follower that knows the new leader, and stays healthy.
      await s.waitForHttp(
        leader,
        '/status',
        'the resumed leader to follow the new one',
        ({ body }) => body.isLeader === false && body.leaderId === next.id && body.state === 'follower',
        10_000,
      );
      expect((await leader.get('/health')).status).toBe(200);
      await sleep(5_000);
      const until = Date.now();
      const entries = s.ledger();
      const summary = await s.finish();
      const frozen = Math.round((resumeAt - stopAt) / 1000);
      results.from(
        s,
        summary,
        `SIGSTOP (${frozen} s) → new leader`,
        ms(next.at - stopAt),
        `≤ ${ms(FAILOVER_BOUND_MS)}`,
      );

      expect(summary.violations).toEqual([]);
      expect(next.term).toBeGreaterThan(first.term);
      expect(next.at - stopAt).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
      // After resuming: no leader-only side effect, no new execution; its term ended late but
      // the checker capped it at its deadline, long before the new term began.
      const mine = entries.filter((e) => 'id' in e && e.id === leader.id);
      expect(mine.filter((e) => e.t === 'step' && e.at > frozenAt)).toEqual([]);
      expect(mine.filter((e) => e.t === 'exec' && e.start > frozenAt)).toEqual([]);
      expect(mine.filter((e) => e.t === 'term' && e.at > frozenAt)).toEqual([]);
      const end = mine.find((e) => e.t === 'end' && e.term === first.term);
      expect(end).toMatchObject({ reason: expect.stringMatching(/deadline|no longer ours/) });
      expect((end as { at: number }).at).toBeGreaterThanOrEqual(resumeAt);
      expect(summary.report.longestGapMs(stopAt, until)).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
    });
  }, 180_000);
});
