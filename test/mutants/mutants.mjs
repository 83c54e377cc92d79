// @ts-check
// The safety mutants `npm run test:mutants` plants, one at a time (test/mutants/run.mjs). Each is a
// specific wrong idea a maintainer could have, stated in `rule`; `from` must occur exactly once in
// `file` (else the mutant is reported STALE: the code moved, update the pattern); a mutant that
// needs more than one edit lists them all in `also`, planted together; `tests` are the test files
// expected to kill it (`testNamePattern`: only the tests whose name matches, when the point is
// *which* test catches it). `quick` ones form the short run in `npm test`-sized budgets.

/**
 * @typedef {object} Edit
 * @property {string} file
 * @property {string} from
 * @property {string} to
 */

/**
 * @typedef {object} Mutant
 * @property {string} id
 * @property {string} rule the safety rule the mutant breaks
 * @property {string} file
 * @property {string} from
 * @property {string} to
 * @property {Edit[]} [also] further edits of the same mutant
 * @property {string[]} tests
 * @property {string} [testNamePattern] Jest `-t`
 * @property {{ from?: number, runs: number, featureRuns: number, fold?: 'never' }} [campaign] for the simulation (tests SIM):
 *   `runs` schedules of seed SIM_SEED from run `from` (default 0), of which the first `featureRuns` also in the
 *   feature world — a part of the default campaign (runs 0–199, features in 0–39; each run has its own seed,
 *   so run n is the same schedule in any campaign) that holds runs catching the mutant (measured on the
 *   code of 2026-11-27; if a change of the library moves them, the mutant survives: find them again with
 *   the default campaign)
 * @property {boolean} [quick]
 * @property {{ number: number, text: string }} [finding] the finding of the safety issue (#11) it reintroduces
 */

/** Every edit of a mutant, the main one first. @param {Mutant} mutant @returns {Edit[]} */
export function editsOf(mutant) {
  return [{ file: mutant.file, from: mutant.from, to: mutant.to }, ...(mutant.also ?? [])];
}

/** The unit spec files that hold the tests of the elector's timing, lifecycle and options. */
const TIMING = ['test/unit/elector-timing.spec.ts'];
const LIFECYCLE = ['test/unit/elector-lifecycle.spec.ts'];
const PG = ['test/conformance/postgres.spec.ts'];
const MYSQL = ['test/conformance/mysql.spec.ts'];
const REDIS = ['test/conformance/redis.spec.ts'];
const ETCD = ['test/conformance/etcd.spec.ts'];
const AZURE = ['test/conformance/azure-blob.spec.ts'];
/**
 * Findings 1–4 of the safety issue (#11), reintroduced one at a time with only the deterministic
 * simulation to catch them: proof that the simulation alone would have found each (its failure
 * names the check, the run and the seed; bench/results/sim-findings.json records them). Each sim
 * mutant runs the part of the default campaign (its `campaign`) that holds schedules catching it:
 * the whole campaign takes minutes, mostly its 40 feature-world runs.
 */
const SIM = ['test/sim/simulation.spec.ts'];
/** The default campaign's seed (test/sim/simulation.spec.ts): every `campaign` below is a part of its campaign. */
export const SIM_SEED = 20_261_123;
/** Conformance cases run concurrently; these name the ones a mutant is about, to keep its run short. */
const STRANGER = 'stranger';
/** Azure's leases last 15 s at least: its slow stranger case (an expired lease) only where it is the point. */
const HOLDER_ONLY = 'only the holder renews and releases';
const TERM_BUMPED = 'term strictly increases';
const REPLY_LOST = 'acquire whose reply is lost';
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
    tests: TIMING,
    quick: true,
  },
  {
    id: 'is-leader-without-deadline',
    rule: 'isLeader() checks the deadline at call time',
    file: 'lib/election/elector.ts',
    from: 'return !this.terms.checkDeadline() && this.terms.state === ',
    to: 'return this.terms.state === ',
    tests: TIMING,
    quick: true,
  },
  {
    id: 'no-rearm-early-timer',
    rule: 'a deadline timer that fires early is re-armed',
    file: 'lib/election/term.ts',
    from: 'if (this.isOver()) this.onDeadline?.();\n        else this.arm();',
    to: 'if (this.isOver()) this.onDeadline?.();',
    tests: TIMING,
    quick: true,
  },
  {
    id: 'monotonic-clock-only',
    rule: 'a suspend (monotonic clock stopped, wall clock moved) ends the term',
    file: 'lib/election/term.ts',
    from: 'return Math.min(this.monoDeadline - this.clock.now(), this.wallDeadline - this.clock.wallNow());',
    to: 'return this.monoDeadline - this.clock.now();',
    tests: TIMING,
  },
  {
    id: 'followers-stop-retrying',
    rule: 'followers contend for the whole process lifetime',
    file: 'lib/election/election-loop.ts',
    from: '      this.inFlight = undefined;\n      this.scheduleNext();',
    to: "      this.inFlight = undefined;\n      if (this.state === 'leader') this.scheduleNext();",
    tests: ['test/unit/elector-push-polling.spec.ts'],
    quick: true,
  },
  {
    id: 'signal-not-aborted',
    rule: "the term's AbortSignal aborts the moment leadership ends",
    file: 'lib/election/term.ts',
    from: "this.controller.abort(new DOMException(messages.termEnded(reason), 'AbortError'));",
    to: 'void reason;',
    tests: TIMING,
    quick: true,
  },
  {
    id: 'resign-loses-to-acquire',
    rule: 'resign() wins over an acquire in flight',
    file: 'lib/election/election-loop.ts',
    from: 'this.stopController.signal.aborted || resignations !== this.resignations || term.isOver()',
    to: 'this.stopController.signal.aborted || term.isOver()',
    tests: LIFECYCLE,
  },
  {
    id: 'no-rearm-after-renew',
    rule: 'a renewal re-arms the deadline timer for the new deadline',
    file: 'lib/election/term.ts',
    from: 'this.wallDeadline = sent.wall + this.renewDeadlineMs;\n    this.arm();',
    to: 'this.wallDeadline = sent.wall + this.renewDeadlineMs;',
    tests: TIMING,
  },
  {
    id: 'stop-before-late-release',
    rule: "stop() resolves only once a late-won acquire's release has run; nothing starts after it",
    file: 'lib/election/bounded-calls.ts',
    from: 'await Promise.race([Promise.all(this.lateAnswers), bound]);\n      this.clock.clearTimeout(timer);\n    }\n    this.closed = true;',
    to: 'this.clock.clearTimeout(timer);\n    }',
    tests: LIFECYCLE,
  },
  {
    id: 'stop-drops-late-release',
    rule: "stop() waits for a late-won acquire's answer (up to one call timeout) and releases it; it does not close first",
    file: 'lib/election/bounded-calls.ts',
    from: 'await Promise.race([Promise.all(this.lateAnswers), bound]);\n      this.clock.clearTimeout(timer);',
    to: 'this.clock.clearTimeout(timer);',
    tests: LIFECYCLE,
  },
  {
    id: 'sim-no-rearm-early-timer',
    rule: 'finding 1 of #11, simulation only: a deadline timer that fires early is re-armed',
    file: 'lib/election/term.ts',
    from: 'if (this.isOver()) this.onDeadline?.();\n        else this.arm();',
    to: 'if (this.isOver()) this.onDeadline?.();',
    tests: SIM,
    // Caught by `lag` in 7 of the first 10 schedules (in 86 of 200).
    campaign: { runs: 10, featureRuns: 0 },
    finding: {
      number: 1,
      text: 'the deadline timer fires a hair early and is never re-armed: the step-down waits for the next renew tick',
    },
  },
  {
    id: 'sim-unknown-outcome-kept',
    rule: 'finding 2 of #11, simulation only: an acquire of unknown outcome releases its fresh lease id',
    file: 'lib/stores/store-support.ts',
    from: '      this.track(giveBack());\n      this.track(running.then(giveBack, giveBack));',
    to: '',
    tests: SIM,
    // Caught by `orphan` in 5 of the first 10 schedules (in 57 of 200).
    campaign: { runs: 10, featureRuns: 0 },
    finding: {
      number: 2,
      text: 'an acquire whose outcome is unknown leaves an orphaned lease that blocks failover for a whole lease',
    },
  },
  {
    id: 'sim-stop-before-late-release',
    rule: "finding 3 of #11, simulation only: stop() resolves only once a late-won acquire's release has run",
    file: 'lib/election/bounded-calls.ts',
    from: 'await Promise.race([Promise.all(this.lateAnswers), bound]);\n      this.clock.clearTimeout(timer);\n    }\n    this.closed = true;',
    to: 'this.clock.clearTimeout(timer);\n    }',
    tests: SIM,
    // Caught by `stop` in 2 schedules of 200 (56 and 66): the whole elector campaign.
    campaign: { runs: 200, featureRuns: 0 },
    finding: {
      number: 3,
      text: 'stop() resolves before the release of a late-won acquire has even started; a timer is created after stop',
    },
  },
  {
    id: 'sim-resign-loses-to-acquire',
    rule: 'finding 4 of #11, simulation only: resign() wins over an acquire in flight',
    file: 'lib/election/election-loop.ts',
    from: 'this.stopController.signal.aborted || resignations !== this.resignations || term.isOver()',
    to: 'this.stopController.signal.aborted || term.isOver()',
    tests: SIM,
    // Caught by `resign` in 4 of the first 110 schedules (53, 80, 97, 105; in 7 of 200).
    campaign: { runs: 110, featureRuns: 0 },
    finding: {
      number: 4,
      text: 'resign() while an acquire is in flight does nothing: the instance leads right after resigning',
    },
  },
  // #24: each interaction defect, reintroduced against the feature world of the simulation alone.
  {
    id: 'sim-stepdown-outlives-term',
    rule: '#24 defect 1, simulation only: a step-down belongs to its term (an abandoned handover never keeps a later term from acting, and health says so)',
    file: 'lib/leadership/step-down.state.ts',
    from: 'return step !== undefined && step.term === this.view.term;',
    to: 'return step !== undefined;',
    also: [
      {
        file: 'lib/leadership/step-down.state.ts',
        from: 'if (step && !step.releasing && step.term === term) this.step = undefined;',
        to: 'void step;',
      },
      {
        file: 'lib/leadership/step-down.state.ts',
        from: 'if (!this.view.holdsLease() || acting) return undefined;',
        to: 'return undefined;',
      },
    ],
    tests: SIM,
    // Caught by `health` (and `acting`) in feature runs 0, 3 and 5.
    campaign: { runs: 6, featureRuns: 6 },
  },
  {
    id: 'sim-reservation-capped-at-an-hour',
    rule: "#24 defect 2, simulation only: a directed handover's reservation is valid for every timing the options accept, and a release whose reservation fails is retried without one",
    file: 'lib/stores/handover-support.ts',
    from: 'const max = maxReserveMs(limits);',
    to: 'const max = 3_600_000;',
    also: [{ file: 'lib/election/bounded-calls.ts', from: 'return plain();', to: 'throw raw;' }],
    tests: SIM,
    // Caught by `request` in feature runs 30 and 31 (and 12; none other of 40): those two alone.
    campaign: { from: 30, runs: 2, featureRuns: 2 },
  },
  {
    id: 'sim-tick-keys-shared',
    rule: '#24 defect 4, simulation only: two once-per-tick jobs of one election never share a key (refused at startup)',
    file: 'lib/leadership/tick.ledger.ts',
    from: 'if (known && known.job !== job) {',
    to: 'if (known && known.job !== job && known.owner === owner) {',
    tests: SIM,
    // Caught by `tick` in feature runs 4 and 7 (and 11).
    campaign: { runs: 8, featureRuns: 8 },
  },
  {
    id: 'sim-unwatch-unbounded',
    rule: "#24 defect 5, simulation only: stop() bounds the store's watch cancel (a black-holed etcd connection never answers it)",
    file: 'lib/election/bounded-calls.ts',
    from: 'await Promise.race([closed, bound]);',
    to: 'await closed;',
    tests: SIM,
    // Caught by `settle` in feature runs 0, 6 and 7.
    campaign: { runs: 8, featureRuns: 8 },
  },
  {
    id: 'sim-spread-replaces-operator-request',
    rule: "#24 defect 3, simulation only: a spread request never replaces an operator's pending request for the same term (the store refuses it)",
    file: 'lib/stores/memory/memory.store.ts',
    from: 'if (spreadRequestYields(decodeHandoverRequest(slot.handover), request)) return false;',
    to: '',
    tests: SIM,
    // Caught by `request` in feature runs 62 and 64 on the separate-call shape (20 of runs 0–299;
    // re-measured after the drain and resignation reads of stop 35 moved leadership in runs 8 and 32,
    // which caught it before; before #28, run 13, and before #27 run 39). Since #29 half the runs fold
    // the renewal, where the holder reads the request in the renewal itself, a round trip earlier, and
    // the race (spread-race.ts) no longer lands before it: so this campaign runs without the fold.
    // Weak: a race that lands on the fold too is a follow-up.
    campaign: { from: 62, runs: 3, featureRuns: 3, fold: 'never' },
  },
  // #28: job control in the feature world.
  {
    id: 'sim-job-board-read-once-per-term',
    rule: '#28, simulation only: the leader reads the job board at every read turn of its renewals (#29: brought back by the renewal), not only when its term starts (a pause or resume recorded mid-term applies within a renew interval, and a run-now waits no longer)',
    file: 'lib/leadership/jobs/job.control.ts',
    from: '...(turn.read ? { readRecords: [JOB_BOARD_KEY] } : {}),',
    to: '...{},',
    tests: SIM,
    // Caught by `jobs` in 23 of the 25 feature runs with job control among 0–39, 2 and 3 the first.
    campaign: { from: 2, runs: 2, featureRuns: 2 },
  },
  {
    id: 'margin-unchecked',
    rule: 'a safety margin below the stated minimum is refused at construction',
    file: 'lib/election/elector-options.ts',
    from: 'if (timings.leaseDurationMs - timings.renewDeadlineMs < minMargin) {',
    to: 'if (timings.leaseDurationMs - timings.renewDeadlineMs < 1) {',
    tests: ['test/unit/elector-options.spec.ts'],
  },
  {
    id: 'unknown-outcome-kept',
    rule: 'an acquire of unknown outcome releases its fresh lease id',
    file: 'lib/stores/store-support.ts',
    from: '      this.track(giveBack());\n      this.track(running.then(giveBack, giveBack));',
    to: '',
    tests: ['test/conformance/memory.spec.ts'],
    testNamePattern: REPLY_LOST,
    quick: true,
  },
  {
    id: 'memory-term-not-bumped',
    rule: 'terms strictly increase across acquisitions',
    file: 'lib/stores/memory/memory.store.ts',
    from: 'slot.term += 1;',
    to: '',
    tests: ['test/conformance/memory.spec.ts'],
    testNamePattern: TERM_BUMPED,
    quick: true,
  },
  {
    id: 'pg-term-not-bumped',
    rule: 'terms strictly increase across acquisitions (PostgreSQL)',
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: 'term = l.term + 1, expires_at = excluded.expires_at,',
    to: 'term = l.term, expires_at = excluded.expires_at,',
    tests: PG,
    testNamePattern: TERM_BUMPED,
  },
  {
    id: 'pg-renew-without-lease-id',
    rule: 'renew is conditional on our own lease id',
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: `${RENEW_TAIL}\n        WHERE election = $1 AND lease_id = $2 AND term = $3`,
    to: `${RENEW_TAIL}\n        WHERE election = $1 AND $2::uuid IS NOT NULL AND $3::bigint IS NOT NULL`,
    tests: PG,
    testNamePattern: STRANGER,
  },
  {
    id: 'pg-release-without-lease-id',
    rule: 'release is conditional on our own lease id',
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: 'AND lease_id = $2 AND ($3::bigint IS NULL OR term = $3::bigint)',
    to: 'AND $2::uuid IS NOT NULL AND ($3::bigint IS NULL OR $3::bigint IS NOT NULL)',
    tests: PG,
    testNamePattern: STRANGER,
  },
  {
    id: 'pg-renew-does-not-extend',
    rule: 'a renew extends the lease at the store',
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: `SET expires_at = clock_timestamp() + ${RENEW_TAIL}`,
    to: `SET expires_at = expires_at + 0 * ${RENEW_TAIL}`,
    tests: PG,
    testNamePattern: 'renew extends the lease',
  },
  {
    id: 'pg-expiry-by-client-clock',
    rule: "expiry is judged by the store's clock, never the client's",
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: 'WHERE l.expires_at <= clock_timestamp()\n            AND (l.reserved_for',
    // The client's clock read at every acquire, sent as the statement's expiry reference.
    to: 'WHERE l.expires_at <= $6::timestamptz\n            AND (l.reserved_for',
    also: [
      {
        file: 'lib/stores/postgres/postgres.store.ts',
        from: 'this.sql.acquire, [...values, meta ?? null])',
        to: 'this.sql.acquire, [...values, meta ?? null, new Date()])',
      },
    ],
    tests: PG,
    // The skew case is the one that must catch it (a true client clock hides it elsewhere).
    testNamePattern: 'client clock minutes off',
  },
  {
    id: 'pg-expiry-a-lease-late',
    rule: 'an expired lease is free at once (the conformance lease is 1 s: this keeps it a second lease)',
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: 'WHERE l.expires_at <= clock_timestamp()\n            AND (l.reserved_for',
    to: "WHERE l.expires_at + interval '1 second' <= clock_timestamp()\n            AND (l.reserved_for",
    tests: PG,
    testNamePattern: 'expired lease is taken over',
  },
  {
    id: 'metadata-not-copied',
    rule: "@LeaderOnly keeps every other decorator's metadata (either order)",
    file: 'lib/nest/decorators/leader-only.decorator.ts',
    from: '      Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, original), wrapper);',
    to: '      void key;',
    tests: ['test/e2e/jobs.spec.ts'],
    quick: true,
  },
  {
    id: 'release-before-drain',
    rule: 'shutdown drains in-flight leader work before it releases',
    file: 'lib/leadership/work.drain.ts',
    from: 'const stillRunning = await inFlight.whenIdle(shutdownTimeoutMs, this.idleWait(signal));',
    to: 'const stillRunning = inFlight.size;',
    tests: ['test/e2e/jobs.spec.ts'],
    quick: true,
  },
  {
    id: 'spread-drain-ignores-operator',
    rule: "where spread meets an operator: an operator's request written while the leader drains for a spread (or priority) request takes the release",
    file: 'lib/election/handover.ts',
    from: 'if (isReplicaRequest(request.reason)) done = (await this.operatorsDuringDrain(term, request)) ?? done;',
    to: 'void 0;',
    tests: ['test/unit/elector-handover.spec.ts'],
    quick: true,
  },
  {
    id: 'resign-ignores-operator',
    rule: 'where a resignation meets an operator: a directed request pending for the term reserves the released lease for its target',
    file: 'lib/election/election-loop.ts',
    from: 'return this.leave(messages.reasonResigned, ...this.handovers.resignation());',
    to: 'return this.leave(messages.reasonResigned);',
    tests: ['test/unit/elector-handover.spec.ts'],
    quick: true,
  },
  {
    id: 'resign-read-unbounded',
    rule: 'the read of the pending request at a resignation or the end of a drain waits at most half a renew interval, so the release stays within the step-down bound',
    file: 'lib/election/pending-operator.ts',
    from: 'Math.min(lent.callTimeoutMs, d.timings.renewIntervalMs / 2)',
    to: 'lent.callTimeoutMs',
    tests: ['test/unit/elector-handover.spec.ts'],
    quick: true,
  },
  {
    id: 'run-now-claim-dropped',
    rule: 'where run now meets a handover: a run-now claimed by a term that ended before it could run goes back on the board for the next leader (never run, so still at most once)',
    file: 'lib/leadership/jobs/run-now.claims.ts',
    from: 'if (unrun.length > 0) await this.giveBack(unrun);',
    to: 'void unrun;',
    tests: ['test/unit/job-control.spec.ts'],
    quick: true,
  },
  {
    id: 'run-now-claim-aborted-with-term',
    rule: "where run now meets a handover: a claim's answer is awaited past the end of its term (bounded by the call timeout), so what it took is known and given back",
    file: 'lib/leadership/jobs/run-now.claims.ts',
    from: '// be answered, so what it took can be given back.\n    const { signal, dispose } = timeoutSignal(host.clock, callTimeoutMs(host.timings));',
    to: '// be answered, so what it took can be given back.\n    const { signal, dispose } = timeoutSignal(host.clock, callTimeoutMs(host.timings), host.signal);',
    tests: ['test/unit/job-control.spec.ts'],
    quick: true,
  },
  {
    id: 'tick-run-twice',
    rule: 'a cron tick already recorded by any leader is skipped (once per tick)',
    file: 'lib/leadership/tick.ledger.ts',
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
    testNamePattern: 'cannot write',
  },
  {
    id: 'guard-lets-followers-through',
    rule: 'followers answer leader-only routes with 503',
    file: 'lib/nest/leader-only.guard.ts',
    from: 'if (handle.isLeader()) return true;',
    to: 'return true;',
    tests: ['test/e2e/routes.spec.ts'],
    quick: true,
  },
  {
    id: 'push-follower-ignores-expiry',
    rule: "a push store's watch reports releases, not expiries: a follower contends when the holder's lease can have expired (crash failover ≤ lease + retry)",
    file: 'lib/election/follower-schedule.ts',
    from: 'return Math.min(untilExpiry + afterExpiry, jitter(Math.max(retry, lease)));',
    to: 'return jitter(Math.max(retry, lease));',
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
    from: '    this.d.terms.stepDown(reason, false);\n    try {\n      await beforeRelease?.();\n    } finally {\n      const reserveMs = handoverReserveMs(this.d.timings, this.d.standby);\n      const handoverTo = to?.();\n      await this.calls.release(lease, handoverTo === undefined ? undefined : { handoverTo, reserveMs });\n',
    to: '    try {\n      await beforeRelease?.();\n    } finally {\n      const reserveMs = handoverReserveMs(this.d.timings, this.d.standby);\n      const handoverTo = to?.();\n      await this.calls.release(lease, handoverTo === undefined ? undefined : { handoverTo, reserveMs });\n      this.d.terms.stepDown(reason, false);\n',
    tests: ['test/unit/elector-handover.spec.ts'],
  },
  {
    id: 'spread-margin-one',
    rule: 'spread moves an election only when the leader leads at least 2 more than the requester (else it flaps)',
    file: 'lib/election/handover.ts',
    from: 'return mine < theirs + 2 ? electionMessages.handoverNotAhead',
    to: 'return mine < theirs + 1 ? electionMessages.handoverNotAhead',
    tests: ['test/unit/elector-handover.spec.ts'],
  },
  {
    id: 'pg-reservation-ignored',
    rule: 'a reserved lease is taken only by the identity it is reserved for, until the reservation ends',
    file: 'lib/stores/postgres/postgres-sql.ts',
    from: 'AND (l.reserved_for IS NULL OR l.reserved_for = excluded.holder OR l.reserved_until <= clock_timestamp()',
    to: 'AND (TRUE OR l.reserved_for = excluded.holder OR l.reserved_until <= clock_timestamp()',
    tests: PG,
    testNamePattern: 'reserves the lease for it',
  },
  {
    id: 'mysql-renew-without-lease-id',
    rule: 'renew is conditional on our own lease id (MySQL)',
    file: 'lib/stores/mysql/mysql-sql.ts',
    from: [' * 1000, $', '{NOW}) WHERE $', '{MINE}`'].join(''),
    to: [' * 1000, $', '{NOW}) WHERE election = ? AND ? IS NOT NULL AND term = ? AND expires_at > $', '{NOW}`'].join(
      '',
    ),
    tests: MYSQL,
    testNamePattern: STRANGER,
  },
  {
    id: 'mysql-release-without-lease-id',
    rule: 'release is conditional on our own lease id (MySQL)',
    file: 'lib/stores/mysql/mysql-sql.ts',
    from: 'WHERE election = ? AND lease_id = ? AND (? IS NULL OR term = ?)',
    to: 'WHERE election = ? AND ? IS NOT NULL AND (? IS NULL OR term = ?)',
    tests: MYSQL,
    testNamePattern: STRANGER,
  },
  {
    id: 'redis-renew-without-lease-id',
    rule: 'renew is conditional on our own lease id (Redis script)',
    file: 'lib/stores/redis/redis-scripts.ts',
    from: "lease.leaseId ~= ARGV[1] or lease.term ~= tonumber(ARGV[2]) then return 0 end\nif ARGV[4] == ''",
    to: "lease.term ~= tonumber(ARGV[2]) then return 0 end\nif ARGV[4] == ''",
    tests: REDIS,
    testNamePattern: STRANGER,
  },
  {
    id: 'redis-renew-with-writes-before-check',
    rule: "a folded renewal's leader-state writes apply only once the renewal succeeded (Redis script, issue 29)",
    file: 'lib/stores/redis/redis-renewal.ts',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text of the script, not a template
    from: "export const RENEW_WITH = script(`${RENEW_STEP}\nlocal n = tonumber(ARGV[5])\nfor i = 0, n - 1 do\n  redis.call('HSET', KEYS[2], ARGV[6 + 2 * i], ARGV[7 + 2 * i])\nend",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text of the script, not a template
    to: "export const RENEW_WITH = script(`local n = tonumber(ARGV[5])\nfor i = 0, n - 1 do\n  redis.call('HSET', KEYS[2], ARGV[6 + 2 * i], ARGV[7 + 2 * i])\nend\n${RENEW_STEP}",
    tests: REDIS,
    testNamePattern: 'folded renewal',
  },
  {
    id: 'renewal-failed-writes-landed',
    rule: 'what a failed renewal carried did not land: the run records go back to the buffer for the next renewal (issue 29)',
    file: 'lib/election/renewal.ts',
    from: 'if (load) rider.unload(sent.term, { writeErrors });',
    to: 'if (load) rider.unload(sent.term, {});',
    tests: ['test/unit/job-control.spec.ts'],
    testNamePattern: 'carried run records and failed',
    quick: true,
  },
  {
    id: 'redis-release-without-lease-id',
    rule: 'release is conditional on our own lease id (Redis script)',
    file: 'lib/stores/redis/redis-scripts.ts',
    from: 'or lease.leaseId ~= ARGV[1] then return 0 end',
    to: 'then return 0 end',
    tests: REDIS,
    testNamePattern: STRANGER,
  },
  {
    id: 'redis-acquire-not-idempotent',
    rule: "an acquire resent after a lost reply answers with its own lease, not 'held by ourselves' (Redis)",
    file: 'lib/stores/redis/redis-scripts.ts',
    from: "  if ok and type(lease) == 'table' and lease.leaseId == ARGV[1] then return {1, current} end\n",
    to: '',
    tests: REDIS,
    testNamePattern: 'reply is lost',
  },
  {
    id: 'etcd-renew-without-lease-compare',
    rule: 'renew proves the key is still attached to our own etcd lease, not only that our lease lives',
    file: 'lib/stores/etcd/etcd.store.ts',
    from: 'const ours = longEnough && kv?.lease === lease.leaseId && kv.create_revision',
    to: 'const ours = longEnough && kv !== undefined && kv.create_revision',
    tests: ETCD,
    testNamePattern: STRANGER,
  },
  {
    id: 'etcd-txn-without-lease-compare',
    rule: 'writes under our lease (meta, a release with a reservation) compare the etcd lease of the key',
    file: 'lib/stores/etcd/etcd-txns.ts',
    from: "return etcd.if(key, 'Lease', '==', lease.leaseId).and(key, 'Create', '==', lease.term);",
    to: "return etcd.if(key, 'Create', '==', lease.term);",
    tests: ETCD,
    testNamePattern: STRANGER,
  },
  {
    id: 'azure-renewed-lease-id-unchecked',
    rule: 'a renew answered for another lease id is a lost lease (Azurite renews an expired lease for anyone)',
    file: 'lib/stores/azure/azure-blob.store.ts',
    from: 'if (renewed !== lease.leaseId) throw new LeaseLostError(azureMessages.renewedForeignLease(lease.election));',
    to: 'void renewed;',
    tests: AZURE,
    testNamePattern: 'a stranger cannot renew an expired lease',
  },
  {
    id: 'azure-release-without-lease-id',
    rule: 'release is conditional on our own lease id (Azure: release, never break)',
    file: 'lib/stores/azure/azure-blob.store.ts',
    from: 'await leaseClient.releaseLease({ abortSignal: signal });',
    to: 'await leaseClient.breakLease(0, { abortSignal: signal });',
    tests: AZURE,
    testNamePattern: HOLDER_ONLY,
  },
  {
    id: 'azure-term-not-bumped',
    rule: 'terms strictly increase across acquisitions (Azure blob metadata)',
    file: 'lib/stores/azure/azure-blob.store.ts',
    from: 'const term = termOf(leased.metadata) + 1;',
    to: 'const term = termOf(leased.metadata);',
    tests: AZURE,
    testNamePattern: TERM_BUMPED,
  },
];
