// Faults between the store and its server, through the fixtures the caller gives: a reply lost after
// the server applied the request (an acquire leaves no orphan, a state write breaks nothing), and a
// black-holed connection that `close()` must still end within its bound.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { TransientLeaseStoreError } from '../shared/errors.js';
import { supportsState } from '../stores/lease-store.capabilities.js';
import type { Lease } from '../stores/lease-store.js';
import { STORE_CLOSE_BOUND_MS } from '../stores/store-support.js';
import { conformanceMessages as messages } from './conformance.messages.js';
import type { ConformanceCase, ReplyLosingStore, ReplyLoss } from './conformance.types.js';
import {
  callSignal,
  defineCase,
  electionName,
  FAST_TIMEOUT_MS,
  leaseFor,
  matches,
  same,
  sleep,
  type Target,
} from './conformance-kit.js';
import { readState, rejectsLost, writeState } from './state.cases.js';

/** The timeout of the call whose reply gets lost, and the follower's retry interval after it. */
const LOST_CALL_TIMEOUT_MS = 2_000;
const RETRY_MS = 250;
/** A loaded 2-core machine's slack over the close bound. */
const CLOSE_SLACK_MS = 3_000;
const WATCH_SETTLE_MS = 1_000;

export function faultCases(t: Target): ConformanceCase[] {
  const replyLosing = t.createReplyLosingStore ? {} : { skipReason: messages.noFixture('createReplyLosingStore') };
  const stateReplyLosing = t.leaderState ? replyLosing : { skipReason: messages.noCapability('leader state') };
  const closeStore = async (store: { close?(): Promise<void> }) => {
    if (t.closeStores !== false) await store.close?.();
  };
  const newLosing = async (): Promise<ReplyLosingStore> =>
    (t.createReplyLosingStore as () => ReplyLosingStore | Promise<ReplyLosingStore>).call(t);

  const acquireReplyLost = (how: ReplyLoss) =>
    defineCase(
      t,
      `faults: an acquire whose reply is lost after the server applied it (then: ${how}) leaves no orphan: another instance leads within the call timeout + one retry + 1 s`,
      t.slowTimeoutMs,
      async (s) => {
        const election = electionName('reply-lost');
        const lossy = await newLosing();
        try {
          const other = await s.newStore();
          // Long enough that an orphaned lease cannot pass for a prompt failover.
          const leaseMs = leaseFor(other, 10_000);
          const identity = `lossy-${randomBytes(4).toString('hex')}`;
          // Warm up: namespace, server-side script cache and the lossy store's connection exist, so
          // the lost reply is that of an acquire the server applied.
          await s.release(other, await s.acquireOk(other, election, 'warm-up'));
          matches(await s.read(lossy.store, election), { held: false });
          lossy.loseNextAcquireReply(identity, how);
          const startedAt = performance.now();
          const outcome = await lossy.store
            .acquire({ election, identity, leaseDurationMs: leaseMs, signal: callSignal(LOST_CALL_TIMEOUT_MS) })
            .catch((error: unknown) => error);
          assert.equal(lossy.repliesLost, 1, 'the fixture lost no reply');
          if (!(outcome instanceof Error)) {
            // A client that resends an unanswered command after reconnecting (ioredis) gets a clear
            // answer after all: it must be the lease it took, not "held by someone" (ourselves).
            matches(outcome, { acquired: true, lease: { election, holder: identity } });
            const { lease } = outcome as { lease: Lease };
            same(await s.read(other, election), { held: true, holder: identity, term: lease.term });
            await lossy.store.renew(lease, { leaseDurationMs: leaseMs, signal: callSignal() });
            await lossy.store.release(lease, { signal: callSignal() });
          } else {
            matches(outcome, { kind: 'transient' }, `the lost reply was answered with ${String(outcome)}`);
          }
          // A follower polling every RETRY_MS leads within the bound, never a whole lease later.
          const boundMs = LOST_CALL_TIMEOUT_MS + RETRY_MS + 1_000;
          let taken: Lease | undefined;
          while (!taken) {
            const result = await s.acquire(other, election, 'other', leaseMs);
            if (result.acquired) taken = result.lease;
            else if (performance.now() - startedAt > leaseMs + 5_000) break;
            else await sleep(RETRY_MS);
          }
          const ledAfterMs = performance.now() - startedAt;
          assert.ok(taken, `nobody led within ${leaseMs + 5_000} ms: the lost acquire left an orphaned lease`);
          assert.ok(
            ledAfterMs < boundMs,
            `another instance led after ${Math.round(ledAfterMs)} ms (bound ${boundMs} ms)`,
          );
          await s.release(other, taken);
          // Once the lossy store's clean-ups have settled (close waits for them), nothing is left
          // behind, and the second release (after the abandoned call ended) touched nobody else's.
          await closeStore(lossy.store);
          matches(await s.read(other, election), { held: false });
        } finally {
          await lossy.close?.();
        }
      },
      replyLosing,
    );

  return [
    acquireReplyLost('reset'),
    acquireReplyLost('silence'),

    defineCase(
      t,
      'faults: a leader-state write whose reply is lost after the server applied it breaks nothing',
      FAST_TIMEOUT_MS,
      async (s) => {
        const election = electionName('state-reply-lost');
        const losing = await newLosing();
        const { store } = losing;
        try {
          assert.ok(supportsState(store), `${store.name} does not declare writeState and readState`);
          assert.ok(losing.loseNextReplyContaining, 'the fixture has no loseNextReplyContaining');
          const other = await s.newStore();
          assert.ok(supportsState(other), `${other.name} does not declare writeState and readState`);
          const lease = await s.acquireOk(store, election, 'a');
          await writeState(store, lease, { n: 1 });
          const marker = `marker-${randomBytes(6).toString('hex')}`;
          losing.loseNextReplyContaining(marker, 'reset');
          const outcome = await store
            .writeState(lease, { n: 2, marker }, { signal: callSignal(LOST_CALL_TIMEOUT_MS) })
            .then(
              () => 'resolved',
              (error: unknown) => error,
            );
          assert.equal(losing.repliesLost, 1, 'the fixture lost no reply');
          // Unknown outcome: transient (or resolved, when the driver resent it), never "lost" or fatal.
          if (outcome !== 'resolved') {
            assert.ok(
              outcome instanceof TransientLeaseStoreError,
              `the lost reply was answered with ${String(outcome)}`,
            );
          }
          // The server applied it: the value landed whole, with our term.
          same(await readState(other, election), { value: { n: 2, marker }, term: lease.term });
          // The lease and the link recover: the leader renews and writes again.
          await s.renew(store, lease);
          await writeState(store, lease, { n: 3 });
          same(await readState(other, election), { value: { n: 3 }, term: lease.term });
          await s.release(store, lease);
          // And a stale write through the recovered link is still refused.
          await rejectsLost(writeState(store, lease, { n: 0 }));
        } finally {
          await closeStore(store);
          await losing.close?.();
        }
      },
      stateReplyLosing,
    ),

    defineCase(
      t,
      'faults: store.close() settles within its bound on a black-holed connection, with watches (if any) still open',
      FAST_TIMEOUT_MS,
      async () => {
        const boundMs = t.closeBoundMs ?? STORE_CLOSE_BOUND_MS;
        const harness = await (t.createBlackHoledStore as NonNullable<Target['createBlackHoledStore']>).call(t);
        const election = electionName('blackhole');
        try {
          harness.store.watch?.(election, () => undefined);
          harness.store.watch?.(`${election}-2`, () => undefined);
          // A call too, so the store has its connection open.
          await harness.store.read(election, { signal: callSignal() });
          await sleep(WATCH_SETTLE_MS);
          harness.blackHole();
          const startedAt = performance.now();
          const closed = Promise.resolve(harness.store.close?.()).then(
            () => performance.now() - startedAt,
            () => performance.now() - startedAt,
          );
          let timer: ReturnType<typeof setTimeout> | undefined;
          const cap = new Promise<number>((resolve) => {
            timer = setTimeout(() => resolve(Number.POSITIVE_INFINITY), boundMs + 2 * CLOSE_SLACK_MS);
          });
          const closedMs = await Promise.race([closed, cap]).finally(() => clearTimeout(timer));
          assert.ok(
            closedMs < boundMs + CLOSE_SLACK_MS,
            `close() took ${Math.round(closedMs)} ms (bound ${boundMs} ms)`,
          );
        } finally {
          // Healed first, so nothing left over waits on the silence.
          await harness.close();
        }
      },
      t.createBlackHoledStore ? {} : { skipReason: messages.noFixture('createBlackHoledStore') },
    ),
  ];
}
