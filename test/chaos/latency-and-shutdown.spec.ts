// Chaos scenarios 5 and 6: a slow store (2 s on every call) must not make leadership flap, and a
// graceful SIGTERM drains leader-only work before the lease is released. Run concurrently.
import type { LedgerEntry } from '../support/ledger.js';
import { chaosFile, FAILOVER_BOUND_MS, HANDOVER_BOUND_MS, type Instance, ms, scenario, sleep, T } from './harness.js';

type Exec = Extract<LedgerEntry, { t: 'exec' }>;
type End = Extract<LedgerEntry, { t: 'end' }>;

const LATENCY_MS = 2_000;
const LATENCY_FOR_MS = 30_000;

describe('chaos: latency and graceful shutdown', () => {
  const { store, results } = chaosFile('latency-and-shutdown');

  it.concurrent('5. 2 s latency on every store call → still exactly one leader, no flapping', async () => {
    await scenario('5-latency', store.port, async (s) => {
      const group = await s.start(3);
      const first = await s.waitForLeader();
      await sleep(3_000);
      const from = Date.now();
      for (const p of group) p.proxy!.set({ kind: 'latency', ms: LATENCY_MS });
      // Sample who acts, every 500 ms: always exactly the first leader.
      const seen = new Set<string>();
      while (Date.now() - from < LATENCY_FOR_MS) {
        for (const i of s.acting()) seen.add(`${i.id}#${i.term}`);
        await sleep(500);
      }
      for (const p of group) p.proxy!.set({ kind: 'pass' });
      const to = Date.now();
      await sleep(3_000);
      const leader = s.instance(first.id);
      const slowCalls = s.calls().filter((c) => c.at >= from && c.at < to);
      const renewals = slowCalls.filter((c) => c.id === leader.id && c.op === 'lease:renew');
      const until = Date.now();
      const entries = s.ledger();
      const summary = await s.finish();
      results.from(
        s,
        summary,
        `${LATENCY_MS} ms on every call for ${LATENCY_FOR_MS / 1000} s → leadership changes`,
        `0 (${slowCalls.length} slow calls, ${renewals.length} renewals)`,
        '0',
      );

      expect(summary.violations).toEqual([]);
      expect([...seen]).toEqual([`${first.id}#${first.term}`]);
      expect(summary.report.longestGapMs(first.start, until)).toBe(0);
      expect(entries.filter((e) => e.t === 'term')).toHaveLength(1);
      expect(entries.filter((e) => e.t === 'end' && e.reason !== 'stopped')).toEqual([]);
      // Renewals kept going, each taking the injected latency, and every one succeeded.
      expect(renewals.length).toBeGreaterThanOrEqual(LATENCY_FOR_MS / (LATENCY_MS + T.renewIntervalMs) - 2);
      expect(renewals.filter((c) => c.status !== 200)).toEqual([]);
      // Followers kept polling: while the lease is held a poll is one (slow) properties read.
      for (const p of group.filter((p) => p.id !== leader.id)) {
        expect(slowCalls.filter((c) => c.id === p.id && c.op === 'read').length).toBeGreaterThanOrEqual(3);
        expect(slowCalls.filter((c) => c.id === p.id && c.op === 'lease:acquire')).toEqual([]);
      }
    });
  }, 180_000);

  it.concurrent('6. graceful SIGTERM while a long job runs → the job finishes (or is aborted at the drain timeout) before the release; handover within a retry interval', async () => {
    await scenario('6-sigterm', store.port, async (s) => {
      // Every instance runs a 2.5 s job when leading; shutdown waits up to 5 s for it.
      await s.start(3, { env: { LONG_JOB_MS: '2500' } });

      /** SIGTERM `leader` `afterMs` into its long job; returns what the handover looked like. */
      const sigtermDuringJob = async (leader: Instance, term: number, afterMs: number, since: number) => {
        const started = await s.waitFor(
          `${leader.id}'s long job to start`,
          () => leader.events.find((e) => e.type === 'long-start' && e.term === term && e.at >= since),
          10_000,
        );
        await sleep(Math.max(0, started.at + afterMs - Date.now()));
        const sigtermAt = await s.terminate(leader);
        const release = leader.proxy!.log.find((c) => c.op === 'lease:release' && c.at >= sigtermAt);
        const next = await s.waitForTerm('a new leader', sigtermAt, FAILOVER_BOUND_MS, leader.id);
        const entries = s.ledger();
        const exec = entries.find(
          (e): e is Exec =>
            e.t === 'exec' && e.job === 'long' && e.id === leader.id && e.start <= sigtermAt && e.end >= sigtermAt,
        );
        const end = entries.find((e): e is End => e.t === 'end' && e.id === leader.id && e.term === term);
        return { sigtermAt, release, next, exec, end, exit: leader.exit! };
      };

      // (a) The job ends within the drain: it completes, then the term ends, then the release.
      const l1 = await s.waitForLeader();
      const first = s.instance(l1.id);
      // Whoever leads next runs a job longer than the drain timeout.
      for (const p of s.instances.filter((p) => p !== first)) p.send('job 60000');
      // The job runs again and again while leading: catch the start of a fresh run.
      const a = await sigtermDuringJob(first, l1.term, 500, Date.now());

      expect(a.exec).toMatchObject({ aborted: false });
      expect(a.exec!.end).toBeGreaterThan(a.sigtermAt);
      expect(a.end).toMatchObject({ reason: 'stopped' });
      expect(a.exec!.end).toBeLessThanOrEqual(a.end!.at);
      expect(a.release).toBeDefined();
      expect(a.exec!.end).toBeLessThanOrEqual(a.release!.at);
      expect(a.release!.status).toBe(200);
      const handoverA = a.next.at - a.release!.at;

      // (b) The job outlives the drain: its signal aborts at shutdownTimeoutMs, then the release.
      const second = s.instance(a.next.id);
      const b = await sigtermDuringJob(second, a.next.term, 1_000, a.next.at);

      expect(b.exec).toMatchObject({ aborted: true });
      expect(b.end).toMatchObject({ reason: 'stopped' });
      const drainMs = b.end!.at - b.sigtermAt;
      expect(drainMs).toBeGreaterThanOrEqual(T.shutdownTimeoutMs - 100);
      expect(drainMs).toBeLessThanOrEqual(T.shutdownTimeoutMs + 3_000);
      expect(b.release).toBeDefined();
      expect(b.exec!.end).toBeLessThanOrEqual(b.release!.at);
      expect(b.release!.status).toBe(200);
      const handoverB = b.next.at - b.release!.at;

      await sleep(2_000);
      const until = Date.now();
      const summary = await s.finish();
      results.from(
        s,
        summary,
        'SIGTERM, job finishes in the drain: release → new leader',
        ms(handoverA),
        `≤ ${ms(HANDOVER_BOUND_MS)}`,
      );
      results.from(
        s,
        summary,
        `SIGTERM, job aborted at the ${T.shutdownTimeoutMs} ms drain timeout: release → new leader`,
        ms(handoverB),
        `≤ ${ms(HANDOVER_BOUND_MS)}`,
      );
      results.from(
        s,
        summary,
        'SIGTERM → process exit (finished job / aborted job)',
        `${ms(a.exit.at - a.sigtermAt)} / ${ms(b.exit.at - b.sigtermAt)}`,
        '≤ 15000 ms',
      );

      expect(summary.violations).toEqual([]);
      // Leaderless only between each release and the next acquisition.
      expect(summary.report.longestGapMs(l1.start, until)).toBeLessThanOrEqual(HANDOVER_BOUND_MS);
      expect(handoverA).toBeLessThanOrEqual(HANDOVER_BOUND_MS);
      expect(handoverB).toBeLessThanOrEqual(HANDOVER_BOUND_MS);
      expect(a.next.term).toBeGreaterThan(l1.term);
      expect(b.next.term).toBeGreaterThan(a.next.term);
    });
  }, 180_000);
});
