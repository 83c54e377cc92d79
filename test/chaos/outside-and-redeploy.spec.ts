// Chaos scenarios 10 and 11 (issue 11): an operator breaks the Azure lease from outside, and a whole
// deployment is replaced at once while its lease is still held. Real processes, real Azurite.
import { BlobServiceClient } from '@azure/storage-blob';
import {
  connectionStringFor,
  FAILOVER_BOUND_MS,
  ms,
  RETRY_MAX_MS,
  Results,
  Scenario,
  SLACK_MS,
  sharedAzurite,
  sleep,
  T,
} from './harness.js';

describe('chaos: broken from outside, whole deployment replaced', () => {
  let store: Awaited<ReturnType<typeof sharedAzurite>>;
  const results = new Results('outside-and-redeploy');

  beforeAll(async () => {
    store = await sharedAzurite();
  });

  afterAll(async () => {
    results.flush();
    await store?.stop();
  });

  it.concurrent('10. an operator breaks the lease (Azure SDK, Break Lease) → the holder steps down at its next renewal; nobody overlaps', async () => {
    const s = new Scenario('10-break-lease', store.port);
    let ok = false;
    try {
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
      ok = true;
    } finally {
      await s.finish();
      s.cleanup(!ok);
    }
  }, 180_000);

  it.concurrent('11. every replica is killed and a new deployment starts at once against the held lease → one leader within the lease, no overlap with the old holder', async () => {
    const s = new Scenario('11-redeploy', store.port);
    let ok = false;
    try {
      const old = await s.start(3, {}, 'old');
      const first = await s.waitForLeader();
      await sleep(3_000);
      const killAt = Date.now();
      for (const p of old) p.signal('SIGKILL');
      await Promise.all(old.map((p) => p.exited));
      const fresh = await Promise.all([1, 2, 3].map((i) => s.spawn(`new${i}`)));
      await s.waitFor('the new deployment ready', () => fresh.every((p) => p.event('ready')), 90_000);
      const next = await s.waitForTerm('a leader of the new deployment', killAt, FAILOVER_BOUND_MS + 10_000);
      const failover = next.at - killAt;
      await sleep(5_000);
      const until = Date.now();
      const summary = await s.finish();
      results.from(s, summary, 'kill -9 all + redeploy → new leader', ms(failover), `≤ ${ms(FAILOVER_BOUND_MS)}`);

      expect(summary.violations).toEqual([]);
      expect(fresh.map((p) => p.id)).toContain(next.id);
      expect(next.term).toBeGreaterThan(first.term);
      expect(failover).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
      // The held lease was respected: nobody led before it could have expired.
      expect(failover).toBeGreaterThanOrEqual(T.leaseMs - T.renewIntervalMs - 1_000);
      // Exactly one leader of the new deployment: one term since the kill, still running.
      const since = s.terms().filter((t) => t.at > killAt);
      expect(since).toHaveLength(1);
      expect(summary.report.longestGapMs(killAt, until)).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
      ok = true;
    } finally {
      await s.finish();
      s.cleanup(!ok);
    }
  }, 180_000);
});
