// Timing rules of leader election. Every one is enforced where noted; tests in test/unit/elector-*.spec.ts.
//
// - A term lasts until its deadline, `renewDeadlineMs` after the successful acquire/renew was *sent*
//   (never after its answer: a slow answer must not lengthen the term). -> term.ts `extend`, election-loop.ts
//   `sentNow(...)` before each call.
// - Two clocks bound it: the monotonic deadline and a wall-clock deadline from the same send instant;
//   the earlier wins. The monotonic clock stops during a machine suspend, the wall clock may step back;
//   neither can extend a term. A wall step forward may end one term early (safe). -> term.ts `remainingMs`.
// - Step-down happens at the deadline. Every public read (isLeader, signal, term, state, status, leaderId,
//   health) checks it first, so an answer is exact to the millisecond. Without a read, the deadline timer
//   ends the term (signal aborts, `revoked`): a timer that fires early is re-armed, so the lag is the
//   timer's lateness, i.e. one event-loop stall, never a renew interval. The timer runs on the monotonic
//   clock, which stops while the machine is suspended, and Node has no resume event: so while leading it
//   sleeps at most one slice, max(50 ms, renewDeadlineMs / 16), and after a resume (or a wall step forward)
//   past the wall deadline the signal aborts within one slice plus that lateness of running again. A
//   suspend that outlasts the store's lease leaves that window with another leader possibly elected:
//   reads are exact, signal-following work is not (fence with `term`). -> term.ts `arm`, Elector getters
//   through term-keeper.ts `checkDeadline`.
// - The margin `leaseDurationMs - renewDeadlineMs` must hold that lag plus call latency, clock-rate drift and
//   the store's expiry granularity: at least max(MIN_MARGIN_MS, leaseDurationMs / MIN_MARGIN_DIVISOR),
//   refused at construction otherwise. The floor does not scale with the lease (a stall does not), so a
//   quarter margin passes for leases >= 4 x MIN_MARGIN_MS. -> elector-options.ts `resolveElectorOptions`.
// - Every store call is bounded, by an AbortSignal the store must honour and by our own wait, which ends
//   anyway: a follower's call (acquire) and a release after renewDeadlineMs - renewIntervalMs (so a win
//   still leaves time to renew), a renew at the term's deadline. -> bounded-calls.ts `call`.
// - Late results: an answer that comes after we stopped waiting never revives a term (a renew must find
//   its own term still current and not over; an acquire whose term would already be over is handed back).
//   A store that ignores its signal and wins an acquire late: the win is released (our guard for
//   third-party stores). -> election-loop.ts `acquireOnce`/`renewOnce`, bounded-calls.ts `onLate`.
// - Unknown outcomes: an acquire that did not clearly answer "held by someone else" may have won. The
//   built-in stores release that attempt's fresh lease id themselves (safe: nobody else knows it), so the
//   next leader waits a call timeout + a retry, not a lease. -> stores/store-support.ts `StoreCallKit.acquire`
//   (internal; a third-party store follows the contract in stores/lease-store.ts).
// - resign() wins over an acquire in flight (the win is released; for 2 x retryIntervalMs from the call we
//   only read, never acquire); stop() resolves only when nothing of the elector's is pending or will
//   start: it waits for its own late answers at most one call timeout, for releases their own timeout,
//   for the store's watch to close at most one call timeout (alongside; a cancel may wait on a silent
//   server), then sets no timer. A store's own give-backs (unknown outcomes above) are the store's:
//   store.close() waits for them. -> election-loop.ts `resign`/`leave`/`stop`, bounded-calls.ts `drain`/`closeWatch`.
// - Followers poll every retryIntervalMs ±15 %, and at once when a store pushes "may be free". On a
//   store with a watch that hints when the holder's lease expires, they poll instead just after that
//   expiry and at least every max(retryIntervalMs, leaseDurationMs) ±15 % (the watch reports releases).
//   A leader renews every renewIntervalMs counted from the previous send. -> follower-schedule.ts
//   `nextTickDelayMs`, `followerDelayMs` (pure; election-loop.ts `scheduleNext` applies them). With
//   `activeFollowers`, a follower holding none of the election's candidate slots polls every
//   standbyPollMs instead and ignores pushes; slots only schedule polls, never decide who leads. -> standby.ts.
//
// Not guaranteed: work that ignores `signal`/`isLeader()` keeps running after the term, and a write sent
// before the deadline may reach its target after the margin; fence such writes with `term` (it increases
// with every term). An Azure lease broken from outside with break period 0 is free at once; the Azure
// store counts it as held for one lease from when it first saw it broken, so the old holder's deadline
// has passed before another instance takes it (takeover after a break waits up to one lease).
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type Observable, Subject } from 'rxjs';
import { type Clock, systemClock } from '../shared/clock.js';
import { supportsHandover, supportsState } from '../stores/lease-store.capabilities.js';
import type { HandoverRequest, LeaderStateEntry, LeaseMeta, LeaseStore } from '../stores/lease-store.js';
import { electionMessages as messages } from './election.messages.js';
import { ElectionLoop } from './election-loop.js';
import {
  defaultLogger,
  type ElectorHealth,
  type ElectorOptions,
  type ElectorState,
  type ElectorStatus,
  type HandoverRequestOptions,
  type LeadershipEvent,
  type StopOptions,
} from './elector.types.js';
import { type ElectorTimings, resolveElectorOptions } from './elector-options.js';
import { FailureLog } from './failure-log.js';
import { OwnLeaseMeta } from './lease-meta.js';
import { ObservedLeader } from './observed-leader.js';
import { priorityOf } from './priority.js';
import type { RenewalRider } from './renewal.js';
import { checkUserStateKey } from './state-keys.js';
import { TermKeeper } from './term-keeper.js';

export type {
  ElectorHealth,
  ElectorLogger,
  ElectorOptions,
  ElectorState,
  ElectorStatus,
  HandoverHooks,
  HandoverRequestOptions,
  LeadershipEvent,
  StopOptions,
} from './elector.types.js';

/**
 * Follower ⇄ leader state machine over a {@link LeaseStore}. Leadership is time-bounded:
 * {@link isLeader} is computed from the deadline at call time, so a paused process never acts on a
 * stale belief, whatever its timers do.
 */
export class Elector {
  /** This replica's identity, stored as the lease holder while it leads. */
  readonly identity: string;
  /** The lease name. */
  readonly election: string;
  /** The store holding the lease. */
  readonly store: LeaseStore;
  /** The timings in force: the defaults with the options applied, validated. */
  readonly timings: Readonly<ElectorTimings>;
  /** Every leadership change (and each renewal) as it happens; hot, no replay. */
  readonly events$: Observable<LeadershipEvent>;
  /** Where to reach this replica, stored with our lease while we lead (the `advertise` option). */
  readonly advertise?: string;

  private readonly clock: Clock;
  private readonly failures: FailureLog;
  /** Who leads as the store last told, what our lease publishes, our state and term: the loop drives them. */
  private readonly observed: ObservedLeader;
  private readonly meta: OwnLeaseMeta;
  private readonly terms: TermKeeper;
  private readonly loop: ElectionLoop;
  private stopping?: Promise<void>;

  constructor(options: ElectorOptions) {
    const resolved = resolveElectorOptions(options);
    this.store = options.store;
    this.election = resolved.election;
    this.identity = resolved.identity ?? defaultIdentity();
    this.timings = resolved.timings;
    this.advertise = options.advertise;
    this.clock = options.clock ?? systemClock;
    const logger = options.logger ?? defaultLogger;
    const events = new Subject<LeadershipEvent>();
    this.events$ = events.asObservable();
    this.failures = new FailureLog(this.election, this.store.name, logger);
    this.observed = new ObservedLeader(this.election, this.identity, logger, events);
    this.meta = new OwnLeaseMeta(options.advertise, options.priority);
    const { election, identity, clock, observed } = this;
    this.terms = new TermKeeper({ election, identity, clock, logger, events, observed });
    this.loop = new ElectionLoop({
      store: this.store,
      election: this.election,
      identity: this.identity,
      timings: this.timings,
      clock: this.clock,
      logger,
      events,
      failures: this.failures,
      observed: this.observed,
      meta: this.meta,
      terms: this.terms,
      handover: options.handover,
      handoverHoldMs: resolved.handoverHoldMs,
      ...(resolved.standby ? { standby: resolved.standby } : {}),
    });
  }

  /** The current state, with the deadline checked first (past it, a leader is a follower). */
  get state(): ElectorState {
    this.terms.checkDeadline();
    return this.terms.state;
  }

  /** Leading and before the deadline, right now. Steps down on the spot if the deadline has passed. */
  isLeader(): boolean {
    return !this.terms.checkDeadline() && this.terms.state === 'leader';
  }

  /** The current holder as last observed; ours while we lead. */
  get leaderId(): string | undefined {
    return this.isLeader() ? this.identity : this.observed.leaderId;
  }

  /** Fencing token of our current term; undefined when not leading. */
  get term(): number | undefined {
    return this.isLeader() ? this.terms.term?.lease.term : undefined;
  }

  /** Aborted the moment the current term ends; an already-aborted signal when not leading. */
  get signal(): AbortSignal {
    const term = this.terms.term;
    if (this.isLeader() && term) return term.signal;
    return AbortSignal.abort(new DOMException(messages.notLeading, 'AbortError'));
  }

  /** The leader's lease meta (its `advertise` value, spread counters) as last observed; ours while we lead. */
  get leaderMeta(): LeaseMeta | undefined {
    return this.leaderId === undefined ? undefined : this.observed.meta;
  }

  /** The store implements handover requests. */
  get supportsHandover(): boolean {
    return supportsHandover(this.store);
  }

  /**
   * Asks the current leader of this election — on whichever replica it runs — to hand over: it
   * drains, releases, and `to` (or, without it, any other replica) leads next. Resolves once the
   * request is recorded in the store, with the request; undefined when `to` already leads. Rejects
   * when nobody leads, or when the store lacks the capability. The leader honours it at its next
   * renewal (within `renewIntervalMs`), unless its term ended first.
   */
  requestHandover(options: HandoverRequestOptions = {}): Promise<HandoverRequest | undefined> {
    return this.loop.requestHandover(options);
  }

  /** @internal Spread: the number of elections this replica leads, published with our lease. */
  setLeaderships(count: number | undefined): void {
    this.meta.setLeaderships(count);
  }

  /** The store implements leader state (readState and writeState). */
  get supportsState(): boolean {
    return supportsState(this.store);
  }

  /**
   * The leader-state value under `key` (default `'state'`, the user's value) with the term that
   * wrote it; undefined when never written. Any replica may read. Needs a store with the state
   * capability (every built-in store has it).
   */
  async readState<T = unknown>(key?: string): Promise<LeaderStateEntry<T> | undefined> {
    return (await this.loop.readState(key)) as LeaderStateEntry<T> | undefined;
  }

  /**
   * Writes `value` (JSON-serialisable) under `key`, fenced by the store: it succeeds only while our
   * lease is still the current one there, so a process resumed from a pause can never overwrite
   * what a newer leader wrote. Not leading (or past the deadline): rejects at once with
   * `LeaseLostError`, without calling the store. Bounded by the term's remaining time, like a renew;
   * a `LeaseLostError` from the store ends the term. Keys starting with `tick:` are the once-per-tick
   * records' and reject with a `TypeError`.
   */
  async writeState<T = unknown>(value: T, key?: string): Promise<void> {
    checkUserStateKey(key);
    return this.loop.writeState(value, key);
  }

  /** @internal The library's write of its own `tick:` and `jobs:` keys, fenced like any state write. */
  writeTickRecord(value: unknown, key: string): Promise<void> {
    return this.loop.writeState(value, key);
  }

  /** @internal What rides on our renewals (job control's reads and run records); returns its removal. */
  carry(rider: RenewalRider): () => void {
    return this.loop.carry(rider);
  }

  /** Resolves after the first acquire attempt (won, lost or failed); never waits a poll interval. */
  async start(): Promise<void> {
    if (this.terms.state !== 'idle') throw new Error(messages.alreadyStarted(this.election));
    await this.loop.start();
  }

  /**
   * Give up leadership now (an acquire in flight that wins is handed back) and, for
   * 2 × `retryIntervalMs` from this call, only read who leads, never acquire, so another instance wins.
   */
  resign(): Promise<void> {
    return this.loop.resign();
  }

  /** Stop contending, end the term (its signal aborts), release if asked, clear every timer. */
  stop(options: StopOptions = {}): Promise<void> {
    this.stopping ??= this.loop.stop(options);
    return this.stopping;
  }

  /** A JSON-able snapshot of this election as this replica sees it, for status pages and the CLI. */
  status(): ElectorStatus {
    const isLeader = this.isLeader();
    const { lastRenewAt } = this.terms;
    return {
      election: this.election,
      identity: this.identity,
      isLeader,
      leaderId: this.leaderId ?? null,
      term: this.term ?? null,
      state: this.terms.state,
      lastRenewAt: lastRenewAt === undefined ? null : new Date(lastRenewAt).toISOString(),
      consecutiveFailures: this.failures.consecutiveFailures,
      lastError: this.failures.currentError,
      leaderAdvertise: this.leaderMeta?.advertise ?? null,
      leaderTerm: isLeader ? (this.term ?? null) : this.leaderId === undefined ? null : (this.observed.term ?? null),
      priority: this.meta.priority,
      leaderPriority: this.leaderId === undefined ? null : priorityOf(this.leaderMeta),
    };
  }

  /**
   * Unhealthy when not running, when the store refuses us (auth/config), or when it has been
   * failing for longer than the renew deadline.
   */
  health(): ElectorHealth {
    const state = this.state;
    if (state === 'idle' || state === 'stopped') return { healthy: false, reason: messages.notRunning(state) };
    return this.failures.health(this.clock.now(), this.timings.renewDeadlineMs);
  }
}

function defaultIdentity(): string {
  return `${hostname()}-${process.pid}-${randomBytes(2).toString('hex')}`;
}
