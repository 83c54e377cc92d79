// Standby followers on every real backend: the candidate slots are ordinary leases under keys no
// election can have (`~standby.<i>.<election>`: a blob name, a row, a key), only the slot holder
// polls the election every retry interval, and a graceful stop is still taken over at once.
import { Elector } from '../../lib/election/elector.js';
import { STANDBY_KEY_PREFIX, standbySlotKey } from '../../lib/election/standby.js';
import type { AcquireRequest, LeaseStore } from '../../lib/stores/lease-store.js';
import { uniqueName } from '../setup/servers.js';
import { backends } from './backends.js';
import { SLACK_MS, sleep, waitFor } from './helpers.js';

const RETRY_MS = 400;
const STANDBY_POLL_MS = 2_000;
const REPLICAS = 5;
const WINDOW_MS = 4_000;
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** The replica's own store client, counting its acquires of the election (slots apart). */
function counting(store: LeaseStore): { store: LeaseStore; polls: number[] } {
  const polls: number[] = [];
  const acquire = store.acquire.bind(store);
  store.acquire = (request: AcquireRequest) => {
    if (!request.election.startsWith(STANDBY_KEY_PREFIX)) polls.push(Date.now());
    return acquire(request);
  };
  return { store, polls };
}

describe('standby followers on real backends', () => {
  afterAll(async () => {
    await Promise.all(backends.map((backend) => backend.cleanup?.()));
  });

  it.concurrent.each(backends)(
    '$name: one active follower, the rest stand by; a stop is taken over within a retry',
    async (backend) => {
      const election = uniqueName('standby').replace(/_/g, '-');
      const replicas = Array.from({ length: REPLICAS }, () => counting(backend.store()));
      const electors = replicas.map(
        ({ store }, i) =>
          new Elector({
            store,
            election,
            identity: `${election}-${i}`,
            leaseDurationMs: backend.leaseDurationMs,
            retryIntervalMs: RETRY_MS,
            activeFollowers: 1,
            standbyPollMs: STANDBY_POLL_MS,
            logger: quiet,
          }),
      );
      try {
        for (const elector of electors) await elector.start();
        await waitFor('one leader', () => electors.filter((e) => e.isLeader()).length === 1, 5_000);
        // Slots are taken right after the first poll; one standby poll later everyone is on schedule.
        await sleep(STANDBY_POLL_MS * 1.15);
        const slot = await replicas[0].store.read(standbySlotKey(election, 0), { signal: AbortSignal.timeout(5_000) });
        const leader = electors.find((e) => e.isLeader());
        expect(slot.held).toBe(true);
        expect(slot.holder).not.toBe(leader?.identity);

        const from = Date.now();
        await sleep(WINDOW_MS);
        const counts = new Map(electors.map((e, i) => [e.identity, replicas[i].polls.filter((t) => t >= from).length]));
        const active = counts.get(slot.holder ?? '') ?? 0;
        const standbys = electors
          .filter((e) => e !== leader && e.identity !== slot.holder)
          .map((e) => counts.get(e.identity) ?? 0);
        // Active: every retry (≈ 10 in the window; a push store's follower polls on the expiry hint
        // instead, so only its upper bound is checked); standbys: every standby poll (≈ 2, at most 3).
        expect(active).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / (RETRY_MS * 0.85)) + 1);
        if (!replicas[0].store.watch)
          expect(active).toBeGreaterThanOrEqual(Math.floor(WINDOW_MS / (RETRY_MS * 1.15)) - 2);
        expect(standbys).toHaveLength(REPLICAS - 2);
        for (const count of standbys)
          expect(count).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / (STANDBY_POLL_MS * 0.85)));

        const stoppedAt = Date.now();
        await leader?.stop();
        await waitFor(
          'a new leader',
          () => electors.some((e) => e !== leader && e.isLeader()),
          RETRY_MS * 1.15 + SLACK_MS,
        );
        // The graceful bound holds: within one retry interval of the stop (plus a loaded machine's lag).
        expect(Date.now() - stoppedAt).toBeLessThanOrEqual(RETRY_MS * 1.15 + SLACK_MS);
      } finally {
        await Promise.all(electors.map((e) => e.stop()));
        await Promise.all(replicas.map(({ store }) => store.close?.()));
      }
      const reader = backend.store();
      try {
        const after = await reader.read(standbySlotKey(election, 0), { signal: AbortSignal.timeout(5_000) });
        expect(after.held).toBe(false);
      } finally {
        await reader.close?.();
      }
    },
  );
});
