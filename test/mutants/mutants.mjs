// @ts-check
// The safety mutants `npm run test:mutants` plants, one at a time (scripts/mutants.mjs). Each is a
// specific wrong idea a maintainer could have, stated in `rule`; `from` must occur exactly once in
// `file` (else the mutant is reported STALE: the code moved, update the pattern); `tests` are the
// test files expected to kill it. `quick` ones form the short run in `npm test`-sized budgets.

/**
 * @typedef {object} Mutant
 * @property {string} id
 * @property {string} rule the safety rule the mutant breaks
 * @property {string} file
 * @property {string} from
 * @property {string} to
 * @property {string[]} tests
 * @property {boolean} [quick]
 */

const UNIT = ['test/unit'];
const PG = ['test/conformance/postgres.spec.ts'];
/** A template literal's `${…}` of the SQL file, spelled so this file holds no template placeholder. */
const RENEW_TAIL = ['$', '{IN_MS}$', '{set}'].join('');

/** @type {Mutant[]} */
export const mutants = [
  {
    id: 'deadline-from-answer',
    rule: 'the deadline counts from when the renew was sent, not when its answer came',
    file: 'lib/election/election-loop.ts',
    from: 'term.extend(sent);',
    to: 'term.extend(sentNow(this.d.clock));',
    tests: UNIT,
    quick: true,
  },
  {
    id: 'is-leader-without-deadline',
    rule: 'isLeader() checks the deadline at call time',
    file: 'lib/election/elector.ts',
    from: 'return !this.loop.checkDeadline() && this.loop.state === ',
    to: 'return this.loop.state === ',
    tests: UNIT,
    quick: true,
  },
  {
    id: 'no-rearm-early-timer',
    rule: 'a deadline timer that fires early is re-armed',
    file: 'lib/election/term.ts',
    from: 'if (this.isOver()) this.onDeadline?.();\n        else this.arm();',
    to: 'if (this.isOver()) this.onDeadline?.();',
    tests: UNIT,
    quick: true,
  },
  {
    id: 'monotonic-clock-only',
    rule: 'a suspend (monotonic clock stopped, wall clock moved) ends the term',
    file: 'lib/election/term.ts',
    from: 'return Math.min(this.monoDeadline - this.clock.now(), this.wallDeadline - this.clock.wallNow());',
    to: 'return this.monoDeadline - this.clock.now();',
    tests: UNIT,
  },
  {
    id: 'followers-stop-retrying',
    rule: 'followers contend for the whole process lifetime',
    file: 'lib/election/election-loop.ts',
    from: '      this.inFlight = undefined;\n      this.scheduleNext();',
    to: "      this.inFlight = undefined;\n      if (this.state === 'leader') this.scheduleNext();",
    tests: UNIT,
    quick: true,
  },
  {
    id: 'signal-not-aborted',
    rule: "the term's AbortSignal aborts the moment leadership ends",
    file: 'lib/election/term.ts',
    from: "this.controller.abort(new DOMException(messages.termEnded(reason), 'AbortError'));",
    to: 'void reason;',
    tests: UNIT,
    quick: true,
  },
  {
    id: 'resign-loses-to-acquire',
    rule: 'resign() wins over an acquire in flight',
    file: 'lib/election/election-loop.ts',
    from: 'this.stopController.signal.aborted || resignations !== this.resignations || term.isOver()',
    to: 'this.stopController.signal.aborted || term.isOver()',
    tests: UNIT,
  },
  {
    id: 'margin-unchecked',
    rule: 'a safety margin below the stated minimum is refused at construction',
    file: 'lib/election/elector-options.ts',
    from: 'if (timings.leaseDurationMs - timings.renewDeadlineMs < minMargin) {',
    to: 'if (timings.leaseDurationMs - timings.renewDeadlineMs < 1) {',
    tests: UNIT,
  },
  {
    id: 'unknown-outcome-kept',
    rule: 'an acquire of unknown outcome releases its fresh lease id',
    file: 'lib/stores/store-support.ts',
    from: '      this.track(giveBack());\n      this.track(running.then(giveBack, giveBack));',
    to: '',
    tests: ['test/conformance/memory.spec.ts'],
    quick: true,
  },
  {
    id: 'memory-term-not-bumped',
    rule: 'terms strictly increase across acquisitions',
    file: 'lib/stores/memory.store.ts',
    from: 'slot.term += 1;',
    to: '',
    tests: ['test/conformance/memory.spec.ts'],
    quick: true,
  },
  {
    id: 'pg-term-not-bumped',
    rule: 'terms strictly increase across acquisitions (PostgreSQL)',
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: 'term = l.term + 1, expires_at = excluded.expires_at,',
    to: 'term = l.term, expires_at = excluded.expires_at,',
    tests: PG,
  },
  {
    id: 'pg-renew-without-lease-id',
    rule: 'renew is conditional on our own lease id',
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: `${RENEW_TAIL}\n        WHERE election = $1 AND lease_id = $2 AND term = $3`,
    to: `${RENEW_TAIL}\n        WHERE election = $1 AND $2::uuid IS NOT NULL AND $3::bigint IS NOT NULL`,
    tests: PG,
  },
  {
    id: 'pg-release-without-lease-id',
    rule: 'release is conditional on our own lease id',
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: 'AND lease_id = $2 AND ($3::bigint IS NULL OR term = $3::bigint)',
    to: 'AND $2::uuid IS NOT NULL AND ($3::bigint IS NULL OR $3::bigint IS NOT NULL)',
    tests: PG,
  },
  {
    id: 'pg-renew-does-not-extend',
    rule: 'a renew extends the lease at the store',
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: `SET expires_at = clock_timestamp() + ${RENEW_TAIL}`,
    to: `SET expires_at = expires_at + 0 * ${RENEW_TAIL}`,
    tests: PG,
  },
  {
    id: 'pg-expiry-by-client-clock',
    rule: "expiry is judged by the store's clock, never the client's",
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: 'WHERE l.expires_at <= clock_timestamp()\n            AND (l.reserved_for',
    // Planted into a template literal: the process clock, read when the statement is built.
    to: ['WHERE l.expires_at <= to_timestamp($', '{Date.now()} / 1000.0)\n            AND (l.reserved_for'].join(''),
    tests: PG,
  },
  {
    id: 'metadata-not-copied',
    rule: "@LeaderOnly keeps every other decorator's metadata (either order)",
    file: 'lib/leader-only.decorator.ts',
    from: '      Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, original), wrapper);',
    to: '      void key;',
    tests: ['test/e2e/jobs.spec.ts'],
    quick: true,
  },
  {
    id: 'release-before-drain',
    rule: 'shutdown drains in-flight leader work before it releases',
    file: 'lib/election.handle.ts',
    from: 'const stillRunning = await this.inFlight.whenIdle(shutdownTimeoutMs);',
    to: 'const stillRunning = this.inFlight.size;',
    tests: ['test/e2e/jobs.spec.ts'],
    quick: true,
  },
  {
    id: 'tick-run-twice',
    rule: 'a cron tick already recorded by any leader is skipped (once per tick)',
    file: 'lib/tick.ledger.ts',
    from: "if (typeof recorded === 'number' && recorded >= fireTime) {",
    to: 'if (false) {',
    tests: ['test/unit/tick-ledger.spec.ts', 'test/e2e/leader-state.spec.ts'],
    quick: true,
  },
  {
    id: 'state-write-unfenced',
    rule: 'leader state is written only under the current lease, as judged by the store',
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: '$5::jsonb, true)\n        WHERE election = $1 AND lease_id = $2 AND term = $3 AND expires_at > clock_timestamp()',
    to: '$5::jsonb, true)\n        WHERE election = $1 AND $2::uuid IS NOT NULL AND $3::bigint IS NOT NULL',
    tests: PG,
  },
  {
    id: 'guard-lets-followers-through',
    rule: 'followers answer leader-only routes with 503',
    file: 'lib/leader-only.guard.ts',
    from: 'if (handle.isLeader()) return true;',
    to: 'return true;',
    tests: ['test/e2e/routes.spec.ts'],
    quick: true,
  },
  {
    id: 'push-follower-ignores-expiry',
    rule: "a push store's watch reports releases, not expiries: a follower contends when the holder's lease can have expired (crash failover ≤ lease + retry)",
    file: 'lib/election/election-loop.ts',
    from: 'return Math.min(untilExpiry + afterExpiry, jitter(Math.max(timings.retryIntervalMs, timings.leaseDurationMs)));',
    to: 'return jitter(Math.max(timings.retryIntervalMs, timings.leaseDurationMs));',
    tests: ['test/unit/elector-push-polling.spec.ts', 'test/conformance/memory-push.spec.ts'],
    quick: true,
  },
  {
    id: 'handover-any-term',
    rule: 'a handover request is honoured only by the leader of the term it names (a stale one never moves a later leader)',
    file: 'lib/election/handover.ts',
    from: '    if (request.term !== term.lease.term) return;\n',
    to: '',
    tests: ['test/unit/elector-handover.spec.ts'],
    quick: true,
  },
  {
    id: 'handover-release-before-step-down',
    rule: 'an honoured handover ends the term (signal aborted, isLeader false) before the lease is released',
    file: 'lib/election/election-loop.ts',
    from: '    this.stepDown(reason, false);\n    try {\n      await beforeRelease?.();\n    } finally {\n      const reservation = to === undefined ? undefined : { handoverTo: to, reserveMs: this.d.timings.leaseDurationMs };\n      await this.calls.release(lease, reservation);\n',
    to: '    try {\n      await beforeRelease?.();\n    } finally {\n      const reservation = to === undefined ? undefined : { handoverTo: to, reserveMs: this.d.timings.leaseDurationMs };\n      await this.calls.release(lease, reservation);\n      this.stepDown(reason, false);\n',
    tests: ['test/unit/elector-handover.spec.ts'],
  },
  {
    id: 'spread-margin-one',
    rule: 'spread moves an election only when the leader leads at least 2 more than the requester (else it flaps)',
    file: 'lib/election/handover.ts',
    from: '(this.leaderships ?? 0) < (request.requesterLeaderships ?? 0) + 2',
    to: '(this.leaderships ?? 0) < (request.requesterLeaderships ?? 0) + 1',
    tests: ['test/unit/elector-handover.spec.ts'],
  },
  {
    id: 'pg-reservation-ignored',
    rule: 'a reserved lease is taken only by the identity it is reserved for, until the reservation ends',
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: 'AND (l.reserved_for IS NULL OR l.reserved_for = excluded.holder OR l.reserved_until <= clock_timestamp()',
    to: 'AND (TRUE OR l.reserved_for = excluded.holder OR l.reserved_until <= clock_timestamp()',
    tests: PG,
  },
];
