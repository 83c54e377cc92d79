import type { Elector } from '../../lib/election/elector.js';
import type { Scenario } from './scenario.js';
import type { SentCall, SimLeaseServer, SimStoreClient } from './sim-store.js';
import { switchesFromEnv } from './switches.js';
import type { NodeClock, World } from './world.js';

/**
 * The checks, each named so it can be switched (`SIM_CHECKS=lag,overlap`). They trust only what
 * the simulation itself knows: true time, the store's lease, and when each request was *sent*
 * (the network's log). The electors are only observed: their events and the term signals they
 * handed out are read without calling them. What `isLeader()` would answer is computed at every
 * instant from the node's clocks and the send of the success that last extended the term (each
 * `elected`/`renewed` event's `validUntil` must agree with it: a deadline later than the rule's is
 * a `wall` violation). `isLeader()` itself is called only at probe instants, the way a guard would,
 * because every call of it may step down and so would hide a late step-down.
 */
export const CHECKS = [
  'overlap',
  'lag',
  'wall',
  'probe',
  'terms',
  'orphan',
  'stop',
  'resign',
  'liveness',
  'jump',
  'livelock',
  'model',
  // Liveness of the feature world (features.ts, bounds in feature-bounds.ts):
  /** (a) every election has an acting leader within its bound once a live replica can reach the store. */
  'acting',
  /** (b) a replica holding a lease acts as leader or reports unhealthy within one renew interval. */
  'health',
  /** (c) an operator's handover request is honoured, or visibly replaced by another, within its bound. */
  'request',
  /** (d) no tick runs twice; none is lost on a stable leader (only ticks across a failover may be). */
  'tick',
  /** (e) every stop() and removeElection() settles within its bound. */
  'settle',
  /** (f) the preferred leader: moves go up in priority, the placement settles, then nothing moves (priority-check.ts). */
  'priority',
  /**
   * (g) job control: no scheduled run of a paused job once applied, a resume restarts its runs, a
   * run-now runs once, only on a leader, within its bound (job-control.ts).
   */
  'jobs',
] as const;
export type CheckName = (typeof CHECKS)[number];

/** `SIM_CHECKS=lag,overlap` runs only those checks; default all. */
export const enabledChecks = (spec = process.env.SIM_CHECKS) => switchesFromEnv(spec, CHECKS);

/** Node counts timer delays in whole ms (at least 1): a re-armed deadline timer may be ~1 ms late. */
const TIMER_GRANULARITY_MS = 1;

/**
 * The stated bound (docs/design/timing-rules.md), written out here rather than imported, so a change of
 * the library's constant is caught: while leading, the deadline timer sleeps at most this long.
 */
export const deadlineSlice = (renewDeadlineMs: number) => Math.max(50, renewDeadlineMs / 16);

export interface Violation {
  check: CheckName;
  at: number;
  message: string;
}

/** A term as the checker knows it: its deadlines on the node's clocks, counted from the send that last extended it. */
interface TermView {
  term: number;
  monoDeadline: number;
  wallDeadline: number;
}

/** One elector instance as the checker follows it. */
export interface Watched {
  name: string;
  identity: string;
  elector: Elector;
  clock: NodeClock;
  client: SimStoreClient;
  term?: number;
  leaseId?: string;
  /** The term's signal, taken at `elected`: user loops hold it without asking again. */
  signal?: AbortSignal;
  /** The last acquire/renew whose success reached the elector: its deadline counts from that send. */
  lastSuccess?: SentCall;
  started?: boolean;
  /** Last suspend end and wall step back (true time): the model keeps them apart. */
  suspendEndAt?: number;
  wallBackAt?: number;
  resignedAt?: number;
  stopRequested?: boolean;
  /** True time stop() was called. */
  stopRequestedAt?: number;
  stopped?: boolean;
  /** Killed (kill -9): nothing of it runs again. */
  crashed?: boolean;
  revokes: number[];
}

export class Checker {
  readonly violations: Violation[] = [];
  readonly watched: Watched[] = [];
  private maxTerm = 0;
  private readonly reported = new Set<string>();
  /** Leases known to an elector (its acquire's success reached it). */
  readonly known = new Set<string>();
  /** Pauses and suspends, by node and true time. */
  readonly frozen: Array<{ node: string; from: number; to?: number }> = [];
  stats = {
    elections: 0,
    maxLagMs: 0,
    takeovers: [] as number[],
    /** Terms whose signal outlived their store lease after a resume, within the stated slice. */
    resumeOverlaps: 0,
    maxResumeOverlapMs: 0,
    /** Orphaned leases excused: the owner was frozen or killed, or its release of that lease id failed. */
    orphanExcused: { frozen: 0, releaseFailed: 0 },
  };
  private readonly excused = new Set<string>();
  private readonly resumeOverlapping = new Set<string>();
  /** Each term's deadlines by the signal the elector handed out for it (recorded at `elected`, moved at `renewed`). */
  private readonly terms = new WeakMap<AbortSignal, TermView>();

  constructor(
    private readonly world: World,
    private readonly server: SimLeaseServer,
    private readonly scenario: Scenario,
    private readonly checks: Set<CheckName>,
  ) {}

  fail(check: CheckName, message: string, key = `${check}:${message}`): void {
    if (!this.checks.has(check) || this.reported.has(key)) return;
    this.reported.add(key);
    this.violations.push({ check, at: Math.round(this.world.now * 1000) / 1000, message });
  }

  watch(w: Watched): void {
    this.watched.push(w);
    const { retryIntervalMs } = this.scenario.timings;
    // Only successes of the current term's lease count, latest send first: an abandoned call
    // that succeeds late (a driver that ignored its signal) is a store-side extension, so using
    // it can only make the bound looser, never hide a late step-down.
    const successes = new Map<string, SentCall>();
    w.client.onSuccess = (call) => {
      const id = call.leaseId as string;
      const best = successes.get(id);
      if (!best || call.local > best.local) successes.set(id, call);
      if (id === w.leaseId) w.lastSuccess = successes.get(id);
    };
    w.client.onKnownAcquire = (leaseId) => this.known.add(leaseId);
    w.elector.events$.subscribe((event) => {
      if (process.env.SIM_TRACE) {
        console.log(
          `${this.world.now.toFixed(2)} ${w.identity} ${JSON.stringify({ ...event, validUntil: undefined })} slot=${JSON.stringify(this.server.slot())}`,
        );
      }
      if (event.type === 'elected') {
        const term = event.term as number;
        this.stats.elections += 1;
        if (term <= this.maxTerm)
          this.fail('terms', `${w.identity} elected with term ${term} after term ${this.maxTerm}`);
        this.maxTerm = Math.max(this.maxTerm, term);
        if (this.server.slot().term !== term) {
          this.fail('terms', `${w.identity} elected with term ${term}, store term is ${this.server.slot().term}`);
        }
        // Resigning sits out the round: no win from an acquire that was in flight at resign().
        if (w.resignedAt !== undefined && w.clock.now() < w.resignedAt + retryIntervalMs * 0.85) {
          this.fail('resign', `${w.identity} elected ${(w.clock.now() - w.resignedAt).toFixed(1)} ms after resign()`);
        }
        w.term = term;
        w.signal = w.elector.signal;
        const slot = this.server.slot();
        if (slot.leaseId && slot.term === term) this.known.add(slot.leaseId);
        w.leaseId = slot.leaseId;
        w.lastSuccess = slot.leaseId === undefined ? undefined : successes.get(slot.leaseId);
        if (w.lastSuccess?.kind !== 'acquire') this.fail('model', `${w.identity} elected without a delivered acquire`);
        this.extended(w, term, event.validUntil);
      } else if (event.type === 'renewed') {
        // The renew's success reached the elector just before (its answer settles first): it extended the term.
        if (w.term !== undefined && w.term === event.term) this.extended(w, w.term, event.validUntil);
      } else if (event.type === 'revoked') {
        w.revokes.push(this.world.now);
        if (w.signal && !w.signal.aborted)
          this.fail('lag', `${w.identity} term ${w.term} revoked with its signal still live`);
        w.term = undefined;
        w.signal = undefined;
        w.leaseId = undefined;
      }
    });
  }

  /**
   * The term was made or extended by the success last delivered (`w.lastSuccess`): its deadlines are
   * that send's instants + renewDeadlineMs on each clock, the earlier one wins. The elector's own
   * claim (`validUntil`, wall-clock) must say the same: later is leading past the rule.
   */
  private extended(w: Watched, term: number, validUntil: number | undefined): void {
    const { renewDeadlineMs } = this.scenario.timings;
    const sent = w.lastSuccess;
    if (!w.signal || !sent) return;
    const view = { term, monoDeadline: sent.local + renewDeadlineMs, wallDeadline: sent.wall + renewDeadlineMs };
    this.terms.set(w.signal, view);
    if (validUntil === undefined) return;
    const rule = w.clock.wallNow() + this.remainingMs(w, view);
    if (validUntil > rule + 1e-6)
      this.fail(
        'wall',
        `${w.identity} term ${term} claims validUntil ${(validUntil - rule).toFixed(2)} ms past its deadline counted from the send of its last success`,
        `claim:${w.identity}:${term}`,
      );
    else if (validUntil < rule - 1e-6)
      this.fail(
        'model',
        `${w.identity} term ${term} claims validUntil ${(rule - validUntil).toFixed(2)} ms before its deadline`,
      );
  }

  /** What the term's deadline check answers now: time left on the earlier deadline (≤ 0 once over). */
  private remainingMs(w: Watched, view: TermView): number {
    return Math.min(view.monoDeadline - w.clock.now(), view.wallDeadline - w.clock.wallNow());
  }

  /** Runs at every simulated instant. */
  instant(): void {
    const { renewDeadlineMs } = this.scenario.timings;
    const slot = this.server.slot();
    const lateMs = this.scenario.timer.lateMs;
    const timerBound = lateMs + TIMER_GRANULARITY_MS + 1e-6;
    const slice = deadlineSlice(renewDeadlineMs);
    for (const w of this.watched) {
      if (!w.signal || w.signal.aborted || !w.clock.running) continue;
      const mine = slot.held && slot.holder === w.identity && slot.term === w.term;
      // Step-down lag, from the send time of the last success: the rule, not the elector's claim.
      const deadline = (w.lastSuccess?.local ?? Number.NEGATIVE_INFINITY) + renewDeadlineMs;
      const lag = w.clock.now() - deadline;
      if (lag > 0) this.stats.maxLagMs = Math.max(this.stats.maxLagMs, lag);
      if (lag > timerBound) {
        this.fail(
          'lag',
          `${w.identity} term ${w.term} signal still live ${lag.toFixed(2)} ms past its deadline (late timers ≤ ${lateMs.toFixed(2)} ms + ${TIMER_GRANULARITY_MS} ms granularity)`,
          `lag:${w.identity}:${w.term}`,
        );
      }
      // The wall-clock deadline (same send instant) can pass while the monotonic one has not: a
      // suspend stops the monotonic clock, a wall step forward jumps past it. The signal must then
      // abort within one deadline slice of running time after the later of the crossing and the
      // wake-up (resume, pause end, step): no resume event exists, only the timer's next wake-up.
      const wallDeadline = (w.lastSuccess?.wall ?? Number.NEGATIVE_INFINITY) + renewDeadlineMs;
      const wallPast = w.clock.wallNow() - wallDeadline;
      let inSlice = false;
      if (wallPast > 0) {
        const crossedAt = w.clock.now() - wallPast * w.clock.rate;
        const wallLag = w.clock.now() - Math.max(crossedAt, w.clock.wokeAt);
        inSlice = wallLag <= slice + timerBound;
        if (!inSlice) {
          this.fail(
            'lag',
            `${w.identity} term ${w.term} signal still live ${wallLag.toFixed(2)} ms of running time past its wall-clock deadline (slice ${slice.toFixed(1)} ms + late timers ≤ ${lateMs.toFixed(2)} ms + ${TIMER_GRANULARITY_MS} ms)`,
            `walllag:${w.identity}:${w.term}`,
          );
        }
      }
      // What isLeader() would answer now, computed without stepping it down: exact, whatever the
      // timers do, so it must never claim a lease the store does not hold for it, nor lead past
      // either deadline counted from the send of its last success.
      const term = this.terms.get(w.signal);
      if (!term) {
        this.fail('model', `${w.identity} term ${w.term}: no term recorded behind its signal`);
        continue;
      }
      if (this.remainingMs(w, term) > 0) {
        if (!mine) {
          this.fail(
            'probe',
            `${w.identity} would answer isLeader() while ${slot.held ? `${slot.holder} holds term ${slot.term}` : 'the store lease has expired'}`,
            `probe:${w.identity}:${w.term}`,
          );
        }
        if (wallPast > 1e-6 || lag > 1e-6) {
          this.fail(
            'wall',
            `${w.identity} would answer isLeader() ${Math.max(wallPast, lag).toFixed(2)} ms past its ${wallPast > lag ? 'wall-clock' : 'monotonic'} deadline`,
            `wall:${w.identity}:${w.term}`,
          );
        }
      }
      if (!mine) {
        // The one stated exception: after a resume, for at most one slice, the signal of a term whose
        // store lease expired during the suspend is still live. Counted, and bounded above.
        if (inSlice && wallPast > 0) {
          const key = `${w.identity}:${w.term}`;
          if (!this.resumeOverlapping.has(key)) {
            this.resumeOverlapping.add(key);
            this.stats.resumeOverlaps += 1;
          }
          const since = Math.max(w.clock.now() - wallPast * w.clock.rate, w.clock.wokeAt);
          this.stats.maxResumeOverlapMs = Math.max(this.stats.maxResumeOverlapMs, w.clock.now() - since);
          continue;
        }
        const other = slot.held ? `${slot.holder} holds term ${slot.term}` : 'the store lease has expired';
        this.fail(
          'overlap',
          `${w.identity} term ${w.term} signal live while ${other}`,
          `overlap:${w.identity}:${w.term}`,
        );
      }
    }
    this.checkOrphan(slot);
  }

  /**
   * A guard's view: `isLeader()` right now (with its side effect), checked against the store and the
   * wall-clock rule, and against what the term answered without the call.
   */
  probe(w: Watched): void {
    if (!w.clock.running || w.stopped) return;
    const live = w.signal && !w.signal.aborted ? this.terms.get(w.signal) : undefined;
    const expected = live !== undefined && this.remainingMs(w, live) > 0;
    const answered = w.elector.isLeader();
    if (answered !== expected) {
      this.fail('model', `${w.identity} isLeader() answered ${answered}, its term's deadline says ${expected}`);
    }
    if (!answered) return;
    const slot = this.server.slot();
    if (!slot.held || slot.holder !== w.identity || slot.term !== w.term) {
      this.fail(
        'probe',
        `${w.identity} isLeader() while ${slot.held ? `${slot.holder} holds term ${slot.term}` : 'the store lease has expired'}`,
        `probe:${w.identity}:${w.term}`,
      );
    }
    const wallDeadline = (w.lastSuccess?.wall ?? Number.NEGATIVE_INFINITY) + this.scenario.timings.renewDeadlineMs;
    if (w.clock.wallNow() > wallDeadline + 1e-6) {
      this.fail(
        'wall',
        `${w.identity} isLeader() ${(w.clock.wallNow() - wallDeadline).toFixed(0)} ms past its wall-clock deadline`,
        `wall:${w.identity}:${w.term}`,
      );
    }
  }

  /**
   * An acquire whose answer the elector never got may have won; its lease must be handed back
   * within the call timeout and a round trip, unless that node was itself frozen or its release of
   * that lease id failed meanwhile (then the lease simply expires). Each excuse is counted.
   */
  private checkOrphan(slot: ReturnType<SimLeaseServer['slot']>): void {
    if (!slot.held || !slot.leaseId || this.known.has(slot.leaseId)) return;
    const sent = this.server.granted.get(slot.leaseId);
    if (!sent || sent.repliedAt === undefined) return;
    // A store that undoes nothing lost the answer: nobody can know that lease (a store bug, not ours).
    if (sent.deaf && sent.fault === 'lost') return;
    // Nor can a stopped elector hand back a win such a store answered after stop() gave up waiting:
    // nothing of it may start after stop(); the lease expires by itself.
    const owner = this.watched.find((w) => w.identity === sent.node);
    if (sent.deaf && owner?.stopRequestedAt !== undefined && owner.stopRequestedAt <= sent.repliedAt) return;
    const { renewDeadlineMs, renewIntervalMs } = this.scenario.timings;
    const callTimeout = (renewDeadlineMs - renewIntervalMs) / (1 - 0.011);
    const due =
      Math.max(sent.at + callTimeout, sent.repliedAt) +
      2 * this.scenario.net.latencyMs +
      this.scenario.timer.lateMs +
      5;
    if (this.world.now <= due) return;
    if (this.excused.has(slot.leaseId)) return;
    if (
      this.frozen.some((f) => f.node === sent.node && (f.to ?? Number.POSITIVE_INFINITY) >= sent.at && f.from <= due)
    ) {
      this.excuse(slot.leaseId, 'frozen');
      return;
    }
    // Only a give-back of this very lease id that never took effect (failed before the server,
    // blackholed, or slowed past the window) excuses it; a lost or duplicated release was applied.
    const releaseFailed = this.server.sent.some(
      (c) =>
        c.node === sent.node &&
        c.kind === 'release' &&
        c.leaseId === slot.leaseId &&
        (c.fault === 'error' || c.fault === 'blackhole' || c.fault === 'slow') &&
        c.at >= sent.at &&
        c.at <= due,
    );
    if (releaseFailed) {
      this.excuse(slot.leaseId, 'releaseFailed');
      return;
    }
    this.fail(
      'orphan',
      `lease ${slot.leaseId} (term ${slot.term}) won by an acquire whose answer ${sent.fault === 'lost' ? 'was lost' : 'came too late'} is still held ${(this.world.now - sent.at).toFixed(0)} ms after it was sent`,
      `orphan:${slot.leaseId}`,
    );
  }

  private excuse(leaseId: string, why: keyof Checker['stats']['orphanExcused']): void {
    this.excused.add(leaseId);
    this.stats.orphanExcused[why] += 1;
  }
}
