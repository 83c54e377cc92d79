// Chaos scenarios 10 and 11 (issue 11): an operator breaks the Azure lease from outside (10: with
// Azure's default break period, 10b: break period 0, free at once), and a whole deployment is
// replaced at once while its lease is still held (11: all old replicas killed, 11b: the old holder
// frozen instead, so an overlap is possible and the ledger would see it). Real processes, real Azurite.
import { BlobServiceClient } from '@azure/storage-blob';
import {
  chaosFile,
  connectionStringFor,
  FAILOVER_BOUND_MS,
  type Instance,
  ms,
  RETRY_MAX_MS,
  Scenario,
  SLACK_MS,
  scenario,
  sleep,
  T,
} from './harness.js';

/**
 * What the old holder's proxy says about when the store lets its lease go: Azurite received the
 * last successful acquire/renew between its arrival at the proxy and the proxy's answer, so the
 * lease expires in [arrival + lease, answer + lease]. The same proxy log gives the new leader's
 * winning acquire: granted between its arrival and its answer.
 */
function storeEvidence(s: Scenario, old: Instance, next: Instance, cut: number) {
  const sends = (i: Instance) => (i.proxy?.log ?? []).filter((c) => c.op === 'lease:acquire' || c.op === 'lease:renew');
  const granted = (c: { status?: number }) => c.status !== undefined && c.status >= 200 && c.status < 300;
  const lastOld = sends(old)
    .filter((c) => granted(c) && c.at <= cut && c.path.includes(s.election))
    .at(-1);
  const win = sends(next).find(
    (c) => granted(c) && c.op === 'lease:acquire' && c.at > cut && c.path.includes(s.election),
  );
  if (!lastOld || !win || win.answeredAt === undefined || lastOld.answeredAt === undefined) {
    throw new Error(
      `[${s.name}] no proxy evidence: last old send ${JSON.stringify(lastOld)}, win ${JSON.stringify(win)}`,
    );
  }
  return {
    /** Earliest instant the store could have let the old lease go. */
    oldExpiresFrom: lastOld.at + T.leaseMs,
    /** Latest instant it let it go. */
    oldExpiresBy: lastOld.answeredAt + T.leaseMs,
    /** The new lease was granted in [winFrom, winBy]. */
    winFrom: win.at,
    winBy: win.answeredAt,
  };
}

/** A new deployment of three replicas, started at once; resolves with them and when the last was ready. */
async function redeploy(s: Scenario): Promise<{ fresh: Instance[]; readyAt: number }> {
  const fresh = await Promise.all([1, 2, 3].map((i) => s.spawn(`new${i}`)));
  await s.waitFor('the new deployment ready', () => fresh.every((p) => p.event('ready')), 90_000);
  return { fresh, readyAt: Math.max(...fresh.map((p) => p.event('ready')?.at ?? 0)) };
}

/**
 * The held lease was respected, as the store saw it: the new lease was not granted (answered)
 * before the old one could expire, counted from the old holder's last successful renewal; coarser,
 * not before a lease less one renewal from the cut. And within the lease: one poll after it
 * expired, or after the new replicas were up if that came later. (Measured from the cut, the time
 * to lead also holds the new deployment's startup: 60 s on a machine at load 26, which says
 * nothing about the election.)
 */
function expectOldLeaseRespected(evidence: ReturnType<typeof storeEvidence>, failover: number, readyAt: number): void {
  expect(evidence.winBy).toBeGreaterThanOrEqual(evidence.oldExpiresFrom);
  expect(failover).toBeGreaterThanOrEqual(T.leaseMs - T.renewIntervalMs - 1_000);
  expect(evidence.winFrom - Math.max(evidence.oldExpiresBy, readyAt)).toBeLessThanOrEqual(RETRY_MAX_MS + SLACK_MS);
  if (readyAt <= evidence.oldExpiresFrom) expect(failover).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
}

describe('chaos: broken from outside, whole deployment replaced', () => {
  const { store, results } = chaosFile('outside-and-redeploy');

  it.concurrent('10. an operator breaks the lease (Azure SDK, Break Lease) → the holder steps down at its next renewal; nobody overlaps', async () => {
    await scenario('10-break-lease', store.port, async (s) => {
      await s.start(3);
      const first = await s.waitForLeader();
      await sleep(3_000);
      // The operator talks to the storage account directly, not through any instance's proxy.
      const operator = BlobServiceClient.fromConnectionString(connectionStringFor(store.port), {
        retryOptions: { maxTries: 1 },
      });
      const blob = operator.getContainerClient(s.container).getBlobClient(s.election);
      // No break period given (as `az storage blob lease break` without --lease-break-period): the
      // lease stays "breaking" for what is left of it; nobody can acquire it meanwhile.
      const breakAt = Date.now();
      await blob.getBlobLeaseClient().breakLease(undefined as unknown as number);
      expect((await blob.getProperties()).leaseState).toBe('breaking');

      const end = await s.waitFor(
        'the holder to step down',
        () => s.ledger().find((e) => e.t === 'end' && e.id === first.id && e.term === first.term),
        T.renewIntervalMs + SLACK_MS,
      );
      const stepDown = (end as { at: number }).at - breakAt;
      const next = await s.waitForTerm('a leader after the break', breakAt, FAILOVER_BOUND_MS + 10_000);
      await sleep(3_000);
      const summary = await s.finish();
      results.from(s, summary, 'Break Lease → holder steps down', ms(stepDown), `≤ ${ms(T.renewIntervalMs)} + slack`);

      expect(summary.violations).toEqual([]);
      // At its next renewal (every renewIntervalMs), because the store says the lease is not ours.
      expect(end).toMatchObject({ reason: expect.stringContaining('no longer ours') });
      expect(stepDown).toBeLessThanOrEqual(T.renewIntervalMs + SLACK_MS);
      // The next term starts only once the break period (what was left of the lease) is over.
      expect(next.term).toBeGreaterThan(first.term);
      expect(next.at - breakAt).toBeLessThanOrEqual(T.leaseMs + RETRY_MAX_MS + SLACK_MS);
    });
  }, 180_000);

  it.concurrent("10b. an operator breaks the lease with break period 0 (free at once) → the holder steps down at its next renewal; only the store's one-lease wait keeps the others out; nobody overlaps", async () => {
    await scenario('10b-break-lease-0', store.port, async (s) => {
      await s.start(3);
      const first = await s.waitForLeader();
      await sleep(3_000);
      const operator = BlobServiceClient.fromConnectionString(connectionStringFor(store.port), {
        retryOptions: { maxTries: 1 },
      });
      const blob = operator.getContainerClient(s.container).getBlobClient(s.election);
      // Break period 0 (`az storage blob lease break --lease-break-period 0`): Azure frees the lease at
      // once; any acquire would now succeed, while the holder acts until its next renewal fails.
      const breakAt = Date.now();
      await blob.getBlobLeaseClient().breakLease(0);
      expect((await blob.getProperties()).leaseState).toBe('broken');

      const end = (await s.waitFor(
        'the holder to step down',
        () => s.ledger().find((e) => e.t === 'end' && e.id === first.id && e.term === first.term),
        T.renewIntervalMs + SLACK_MS,
      )) as { at: number; reason: string };
      const stepDown = end.at - breakAt;
      const next = await s.waitForTerm(
        'a leader after the break',
        breakAt,
        T.leaseMs + RETRY_MAX_MS + SLACK_MS + 10_000,
      );
      const takeover = next.at - breakAt;
      await sleep(3_000);
      const summary = await s.finish();
      results.from(
        s,
        summary,
        'Break Lease, period 0 → holder steps down; → next leader',
        `${ms(stepDown)}; ${ms(takeover)}`,
        `≤ ${ms(T.renewIntervalMs)} + slack; ${ms(T.leaseMs)}–${ms(T.leaseMs + RETRY_MAX_MS)} + slack`,
      );

      // The ledger judged every acting interval by the proxies' evidence: no two overlap.
      expect(summary.violations).toEqual([]);
      expect(end.reason).toContain('no longer ours');
      expect(stepDown).toBeLessThanOrEqual(T.renewIntervalMs + SLACK_MS);
      expect(next.term).toBeGreaterThan(first.term);
      // The lease was free the whole time; only the store's rule (a broken lease counts as held for
      // one lease from first sight, which is after the break) kept every follower out. Without it a
      // follower polling every second takes it before the holder's next renewal notices.
      expect(takeover).toBeGreaterThanOrEqual(T.leaseMs);
      expect(next.at).toBeGreaterThan(end.at);
      expect(takeover).toBeLessThanOrEqual(T.leaseMs + RETRY_MAX_MS + SLACK_MS);
    });
  }, 180_000);

  it.concurrent('11. every replica is killed and a new deployment starts at once against the held lease → one leader within the lease, no overlap with the old holder', async () => {
    await scenario('11-redeploy', store.port, async (s) => {
      const old = await s.start(3, {}, 'old');
      const first = await s.waitForLeader();
      await sleep(3_000);
      const killAt = Date.now();
      for (const p of old) p.signal('SIGKILL');
      await Promise.all(old.map((p) => p.exited));
      const { fresh, readyAt } = await redeploy(s);
      const next = await s.waitForTerm('a leader of the new deployment', killAt, FAILOVER_BOUND_MS + 10_000);
      const failover = next.at - killAt;
      await sleep(5_000);
      const until = Date.now();
      const summary = await s.finish();
      const evidence = storeEvidence(s, s.instance(first.id), s.instance(next.id), killAt);
      results.from(
        s,
        summary,
        'kill -9 all + redeploy → new leader; its acquire granted after the old lease expired, by',
        `${ms(failover)}; ${ms(evidence.winBy - evidence.oldExpiresFrom)}`,
        `≤ ${ms(FAILOVER_BOUND_MS)}; ≥ 0`,
      );

      expect(summary.violations).toEqual([]);
      expect(fresh.map((p) => p.id)).toContain(next.id);
      expect(next.term).toBeGreaterThan(first.term);
      expectOldLeaseRespected(evidence, failover, readyAt);
      // Exactly one leader of the new deployment: one term since the kill, still running.
      const since = s.terms().filter((t) => t.at > killAt);
      expect(since).toHaveLength(1);
      expect(summary.report.longestGapMs(Math.max(killAt, readyAt), until)).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
    });
  }, 180_000);

  it.concurrent("11b. the old holder is frozen (SIGSTOP), the rest killed, a new deployment starts → it leads only after the frozen holder's lease expired; no overlap; the resumed holder does no leader work", async () => {
    await scenario('11b-redeploy-frozen', store.port, async (s) => {
      const old = await s.start(3, {}, 'old');
      const first = await s.waitForLeader();
      await sleep(3_000);
      const holder = s.instance(first.id);
      // A frozen holder (a stuck node, a paused VM) still counts as acting until its deadline: the
      // ledger judges it by its proxy's evidence, so a new leader starting too early is an overlap.
      const { sentAt: stopAt, frozenAt } = await holder.freeze();
      for (const p of old.filter((p) => p !== holder)) p.signal('SIGKILL');
      const { fresh, readyAt } = await redeploy(s);
      const next = await s.waitForTerm('a leader of the new deployment', stopAt, FAILOVER_BOUND_MS + 10_000, holder.id);
      const failover = next.at - stopAt;
      // Resume the old holder only once it is past its lease: it must find its term over.
      await sleep(Math.max(1_000, stopAt + T.leaseMs + 2_000 - Date.now()));
      const resumeAt = holder.signal('SIGCONT');
      await s.waitForHttp(
        holder,
        '/status',
        'the resumed old holder to follow the new leader',
        ({ body }) => body.isLeader === false && body.leaderId === next.id,
        10_000,
      );
      await sleep(3_000);
      const until = Date.now();
      const entries = s.ledger();
      const summary = await s.finish();
      const evidence = storeEvidence(s, holder, s.instance(next.id), stopAt);
      results.from(
        s,
        summary,
        'SIGSTOP holder + redeploy → new leader; its acquire granted after the old lease expired, by',
        `${ms(failover)}; ${ms(evidence.winBy - evidence.oldExpiresFrom)}`,
        `≤ ${ms(FAILOVER_BOUND_MS)}; ≥ 0`,
      );

      // The overlap check that matters: the frozen holder's interval (to its independent deadline)
      // and the new leader's do not overlap.
      expect(summary.violations).toEqual([]);
      expect(fresh.map((p) => p.id)).toContain(next.id);
      expect(next.term).toBeGreaterThan(first.term);
      expectOldLeaseRespected(evidence, failover, readyAt);
      // After resuming: no leader-only work, no new term; its old term ended at or after the resume.
      const mine = entries.filter((e) => 'id' in e && e.id === holder.id);
      expect(mine.filter((e) => e.t === 'step' && e.at > frozenAt)).toEqual([]);
      expect(mine.filter((e) => e.t === 'exec' && e.start > frozenAt)).toEqual([]);
      expect(mine.filter((e) => e.t === 'term' && e.at > frozenAt)).toEqual([]);
      const end = mine.find((e) => e.t === 'end' && e.term === first.term);
      expect((end as { at: number }).at).toBeGreaterThanOrEqual(resumeAt);
      expect(summary.report.longestGapMs(Math.max(stopAt, readyAt), until)).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
    });
  }, 180_000);
});
