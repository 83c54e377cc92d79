import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type Observable, Subject } from 'rxjs';
import { messages } from '../leader-election.messages.js';
import { type Clock, systemClock } from '../shared/clock.js';
import type { LeaseStore } from '../stores/lease-store.js';
import { ElectionLoop } from './election-loop.js';
import {
  defaultLogger,
  type ElectorHealth,
  type ElectorOptions,
  type ElectorState,
  type ElectorStatus,
  type LeadershipEvent,
  type StopOptions,
} from './elector.types.js';
import { type ElectorTimings, resolveElectorOptions } from './elector-options.js';
import { FailureLog } from './failure-log.js';

export type {
  ElectorHealth,
  ElectorLogger,
  ElectorOptions,
  ElectorState,
  ElectorStatus,
  LeadershipEvent,
  StopOptions,
} from './elector.types.js';

/**
 * Follower ⇄ leader state machine over a {@link LeaseStore}. Leadership is time-bounded:
 * {@link isLeader} is computed from the deadline at call time, so a paused process never acts on a
 * stale belief, whatever its timers do.
 */
export class Elector {
  readonly identity: string;
  readonly election: string;
  readonly store: LeaseStore;
  readonly timings: Readonly<ElectorTimings>;
  readonly events$: Observable<LeadershipEvent>;

  private readonly clock: Clock;
  private readonly failures: FailureLog;
  private readonly loop: ElectionLoop;
  private stopping?: Promise<void>;

  constructor(options: ElectorOptions) {
    const resolved = resolveElectorOptions(options);
    this.store = options.store;
    this.election = resolved.election;
    this.identity = resolved.identity ?? defaultIdentity();
    this.timings = resolved.timings;
    this.clock = options.clock ?? systemClock;
    const logger = options.logger ?? defaultLogger;
    const events = new Subject<LeadershipEvent>();
    this.events$ = events.asObservable();
    this.failures = new FailureLog(this.election, this.store.name, logger);
    this.loop = new ElectionLoop({
      store: this.store,
      election: this.election,
      identity: this.identity,
      timings: this.timings,
      clock: this.clock,
      logger,
      events,
      failures: this.failures,
    });
  }

  get state(): ElectorState {
    this.loop.checkDeadline();
    return this.loop.state;
  }

  /** Leading and before the deadline, right now. Steps down on the spot if the deadline has passed. */
  isLeader(): boolean {
    return !this.loop.checkDeadline() && this.loop.state === 'leader';
  }

  /** The current holder as last observed; ours while we lead. */
  get leaderId(): string | undefined {
    return this.isLeader() ? this.identity : this.loop.observedLeader;
  }

  /** Fencing token of our current term; undefined when not leading. */
  get term(): number | undefined {
    return this.isLeader() ? this.loop.term?.lease.term : undefined;
  }

  /** Aborted the moment the current term ends; an already-aborted signal when not leading. */
  get signal(): AbortSignal {
    const term = this.loop.term;
    if (this.isLeader() && term) return term.signal;
    return AbortSignal.abort(new DOMException(messages.notLeading, 'AbortError'));
  }

  /** Resolves after the first acquire attempt (won, lost or failed); never waits a poll interval. */
  async start(): Promise<void> {
    if (this.loop.state !== 'idle') throw new Error(messages.alreadyStarted(this.election));
    await this.loop.start();
  }

  /** Give up leadership now and sit out one acquire round so another instance wins. */
  resign(): Promise<void> {
    return this.loop.resign();
  }

  /** Stop contending, end the term (its signal aborts), release if asked, clear every timer. */
  stop(options: StopOptions = {}): Promise<void> {
    this.stopping ??= this.loop.stop(options);
    return this.stopping;
  }

  status(): ElectorStatus {
    const isLeader = this.isLeader();
    const { lastRenewAt } = this.loop;
    return {
      election: this.election,
      identity: this.identity,
      isLeader,
      leaderId: this.leaderId ?? null,
      term: this.term ?? null,
      state: this.loop.state,
      lastRenewAt: lastRenewAt === undefined ? null : new Date(lastRenewAt).toISOString(),
      consecutiveFailures: this.failures.consecutiveFailures,
      lastError: this.failures.currentError,
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
