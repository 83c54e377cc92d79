// Issue 16, chaos: once-per-tick cron runs and fenced leader state across real handovers, on the
// machine's PostgreSQL. The long version (50 handovers, figures): node --import
// ./test/support/swc-register.mjs bench/experiments/once-per-tick.ts
import { runTickHandovers, sleep, TickCluster, type TickEntry } from './tick-handovers.js';

describe('chaos: once per tick and leader state (PostgreSQL)', () => {
  it("4 handovers (SIGTERM and kill -9, each both ways between replicas 500 ms apart): every tick runs at most once, by the library's record and by each run's own clock; with missed: 'catch-up' the most recent tick before each election runs exactly once", async () => {
    const report = await runTickHandovers({ handovers: 4, missed: 'catch-up' });
    try {
      const summary = report.handovers.map(
        (h) => `${h.kind} ${h.direction} ${h.from}→${h.to} last=${h.lastTickRuns} skipped=${h.skippedTicks}`,
      );
      expect({
        duplicates: report.duplicates,
        ownDuplicates: report.ownDuplicates,
        unknownFire: report.unknownFire,
        summary,
      }).toEqual({
        duplicates: [],
        ownDuplicates: [],
        unknownFire: 0,
        summary: report.handovers.map(
          (h) => `${h.kind} ${h.direction} ${h.from}→${h.to} last=1 skipped=${h.skippedTicks}`,
        ),
      });
      // Both kinds of handover, each towards the replica whose clock is behind and the one ahead.
      expect(new Set(report.handovers.map((h) => `${h.kind} ${h.direction}`))).toEqual(
        new Set(['SIGTERM ahead→behind', 'SIGTERM behind→ahead', 'SIGKILL ahead→behind', 'SIGKILL behind→ahead']),
      );
      expect(report.runs).toBeGreaterThanOrEqual(8);
      // After a crash the gap spans several ticks: only the most recent was caught up.
      for (const h of report.handovers.filter((x) => x.kind === 'SIGKILL'))
        expect(h.skippedTicks).toBeGreaterThanOrEqual(1);
    } finally {
      await report.cluster.dispose();
    }
  }, 180_000);

  it('a SIGSTOPped leader resumes and writes its checkpoint with the lease it held: the store refuses it; the sequence never goes backwards', async () => {
    const cluster = new TickCluster({ CHECKPOINT_MS: '150', MISSED: 'skip' });
    try {
      await cluster.spawn('p1', 0);
      await cluster.spawn('p2', 0);
      const first = await cluster.waitFor('a leader', () => cluster.leader(), 20_000);
      const ckpts = (id: string) => cluster.ledger().filter((e) => e.t === 'ckpt' && e.ok && e.id === id);
      await cluster.waitFor('checkpoints', () => ckpts(first.replica.id).length >= 3, 10_000);
      first.replica.child.kill('SIGSTOP');
      const other = first.replica.id === 'p1' ? 'p2' : 'p1';
      await cluster.waitFor(
        'the successor',
        () => cluster.ledger().find((e) => e.t === 'elected' && e.id === other && (e.term ?? 0) > first.term),
        20_000,
      );
      const theirs = ckpts(other).length;
      await cluster.waitFor('the successor’s checkpoints', () => ckpts(other).length >= theirs + 3, 10_000);
      first.replica.child.kill('SIGCONT');
      const stale = await cluster.waitFor(
        'the resumed leader’s write',
        () => cluster.ledger().find((e) => e.t === 'stale-write' && e.id === first.replica.id),
        10_000,
      );
      await sleep(1_000);
      await cluster.stop();
      // Refused by PostgreSQL's own condition (raw store call), and by the elector before that.
      expect({ raw: stale.raw, service: stale.service }).toEqual({ raw: 'LeaseLostError', service: 'LeaseLostError' });
      const written = cluster
        .ledger()
        .filter((e): e is TickEntry & { seq: number; term: number } => e.t === 'ckpt' && e.ok === true);
      const terms = [...new Set(written.map((e) => e.term))].sort((a, b) => a - b);
      expect(terms.length).toBeGreaterThanOrEqual(2);
      for (const term of terms) {
        const seqs = written.filter((e) => e.term === term).map((e) => e.seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      }
      // Across handovers: every sequence number of a later term is above all of an earlier one.
      for (let i = 1; i < terms.length; i++) {
        const earlier = Math.max(...written.filter((e) => e.term <= terms[i - 1]).map((e) => e.seq));
        const later = Math.min(...written.filter((e) => e.term === terms[i]).map((e) => e.seq));
        expect(later).toBeGreaterThan(earlier);
      }
      expect(new Set(written.map((e) => e.seq)).size).toBe(written.length);
      expect(await cluster.readState('checkpoint')).toBe(Math.max(...written.map((e) => e.seq)));
    } finally {
      await cluster.dispose();
    }
  }, 120_000);
});
