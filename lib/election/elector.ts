import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type Observable, Subject } from 'rxjs';
import { messages } from '../leader-election.messages.js';
import {
  type Lease,
  type LeaseStore,
  type LeaseStoreError,
  type LeaseWatch,
  toLeaseStoreError,
} from '../stores/lease-store.js';
import { untilAborted } from '../shared/abort.js';
import { type Clock, type ClockTimer, systemClock, timeoutSignal } from '../shared/clock.js';
import { type ElectorTimings, resolveElectorOptions } from './elector-options.js';

export interface ElectorLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug?(message: string): void;
}

export interface ElectorOptions extends Partial<ElectorTimings> {
  store: LeaseStore;
  /** The lease name: blob name, row key or etcd key suffix. */
  election: string;
  /** Unique per process; default `hostname-pid-<4 hex chars>`. */
  identity?: string;
  clock?: Clock;
  logger?: ElectorLogger;
}

export type ElectorState = 'idle' | 'follower' | 'leader' | 'stopped';

export interface LeadershipEvent {
  /** `renewed` follows every successful renewal of our lease; the others mark changes. */
  type: 'elected' | 'renewed' | 'revoked' | 'leader-changed';
  /** Our term, for `elected`, `renewed` and `revoked`. */
  term?: number;
  /**
   * For `elected` and `renewed`: wall-clock time (epoch ms) until which we act as leader unless
   * the next renewal succeeds — for ledgers and metrics; {@link Elector.isLeader} is the authority.
   */
  validUntil?: number;
  /** The leader now known, for `leader-changed` (undefined when unknown). */
  leaderId?: string;
  /** Why leadership ended, for `revoked`. */
  reason?: string;
}

/** A JSON-able snapshot for status endpoints and health checks. */
export interface ElectorStatus {
  election: string;
  identity: string;
  isLeader: boolean;
  leaderId: string | null;
  term: number | null;
  state: ElectorState;
  /** Wall-clock time of the last successful acquire/renew of our lease, ISO 8601. */
  lastRenewAt: string | null;
  consecutiveFailures: number;
  lastError: { kind: string; message: string } | null;
}

export interface ElectorHealth {
  healthy: boolean;
  reason?: string;
}

export interface StopOptions {
  /** Release the lease if still ours (default true), so a follower takes over at once. */
  release?: boolean;
  /** Awaited after the term's signal aborted and before the release: let leader work wind down. */
  beforeRelease?: () => Promise<unknown>;
}

const JITTER = 0.15;
const STILL_FAILING_EVERY = 10;
/** Without a logger, only trouble is printed: a library must not chatter on stdout. */
const defaultLogger: ElectorLogger = {
  log: () => undefined,
  warn: (message) => console.warn(message),
  error: (message) => console.error(message),
};

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
  private readonly logger: ElectorLogger;
  private readonly events = new Subject<LeadershipEvent>();
  private readonly stopController = new AbortController();

  private currentState: ElectorState = 'idle';
  private lease?: Lease;
  private deadline = 0;
  private termController?: AbortController;
  private observedLeader?: string;
  private lastRenewAt?: number;
  private lastRenewSentAt?: number;
  private consecutiveFailures = 0;
  private failingSince = 0;
  private lastError?: LeaseStoreError;
  private contendNotBefore = 0;

  private tickTimer?: ClockTimer;
  private deadlineTimer?: ClockTimer;
  private inFlight?: Promise<void>;
  private pushPending = false;
  private watchHandle?: LeaseWatch;
  private readonly releases = new Set<Promise<void>>();
  private stopping?: Promise<void>;

  constructor(options: ElectorOptions) {
    const resolved = resolveElectorOptions(options);
    this.store = options.store;
    this.election = resolved.election;
    this.identity = resolved.identity ?? defaultIdentity();
    this.timings = resolved.timings;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? defaultLogger;
    this.events$ = this.events.asObservable();
  }

  get state(): ElectorState {
    this.checkDeadline();
    return this.currentState;
  }

  /** Leading and before the deadline, right now. Steps down on the spot if the deadline has passed. */
  isLeader(): boolean {
    return !this.checkDeadline() && this.currentState === 'leader';
  }

  /** The current holder as last observed; ours while we lead. */
  get leaderId(): string | undefined {
    return this.isLeader() ? this.identity : this.observedLeader;
  }

  /** Fencing token of our current term; undefined when not leading. */
  get term(): number | undefined {
    return this.isLeader() ? this.lease?.term : undefined;
  }

  /** Aborted the moment the current term ends; an already-aborted signal when not leading. */
  get signal(): AbortSignal {
    if (this.isLeader() && this.termController) return this.termController.signal;
    return AbortSignal.abort(new DOMException(messages.notLeading, 'AbortError'));
  }

  /** Resolves after the first acquire attempt (won, lost or failed); never waits a poll interval. */
  async start(): Promise<void> {
    if (this.currentState !== 'idle') throw new Error(messages.alreadyStarted(this.election));
    this.currentState = 'follower';
    this.openWatch();
    await this.runTick();
  }

  /** Give up leadership now and sit out one acquire round so another instance wins. */
  async resign(): Promise<void> {
    const lease = this.lease;
    this.contendNotBefore = this.clock.now() + 2 * this.timings.retryIntervalMs;
    if (!lease || this.currentState !== 'leader') return;
    this.stepDown(messages.reasonResigned, false);
    await this.releaseLease(lease);
    this.scheduleNext();
  }

  /** Stop contending, end the term (its signal aborts), release if asked, clear every timer. */
  stop(options: StopOptions = {}): Promise<void> {
    this.stopping ??= this.doStop(options);
    return this.stopping;
  }

  status(): ElectorStatus {
    const isLeader = this.isLeader();
    return {
      election: this.election,
      identity: this.identity,
      isLeader,
      leaderId: this.leaderId ?? null,
      term: this.term ?? null,
      state: this.currentState,
      lastRenewAt: this.lastRenewAt === undefined ? null : new Date(this.lastRenewAt).toISOString(),
      consecutiveFailures: this.consecutiveFailures,
      lastError:
        this.consecutiveFailures > 0 && this.lastError
          ? { kind: this.lastError.kind, message: this.lastError.message }
          : null,
    };
  }

  /**
   * Unhealthy when not running, when the store refuses us (auth/config), or when it has been
   * failing for longer than the renew deadline.
   */
  health(): ElectorHealth {
    const state = this.state;
    if (state === 'idle' || state === 'stopped') return { healthy: false, reason: messages.notRunning(state) };
    if (this.consecutiveFailures > 0 && this.lastError) {
      if (this.lastError.kind === 'fatal') return { healthy: false, reason: this.lastError.message };
      if (this.clock.now() - this.failingSince >= this.timings.renewDeadlineMs) {
        return {
          healthy: false,
          reason: messages.unhealthyFailing(this.consecutiveFailures, this.lastError.message),
        };
      }
    }
    return { healthy: true };
  }

  // ---- the loop -------------------------------------------------------------------------------

  private runTick(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    this.clearTimer('tickTimer');
    const tick = (this.currentState === 'leader' ? this.renewOnce() : this.acquireOnce()).finally(() => {
      this.inFlight = undefined;
      this.scheduleNext();
    });
    this.inFlight = tick;
    return tick;
  }

  private scheduleNext(): void {
    if (this.stopController.signal.aborted || this.inFlight) return;
    let delay: number;
    if (this.currentState === 'leader') {
      delay = this.timings.renewIntervalMs - (this.clock.now() - (this.lastRenewSentAt ?? 0));
      delay = Math.min(Math.max(0, delay), this.timings.renewIntervalMs);
    } else if (this.pushPending && this.clock.now() >= this.contendNotBefore) {
      delay = 0;
    } else {
      const jittered = this.timings.retryIntervalMs * (1 + (Math.random() * 2 - 1) * JITTER);
      delay = Math.max(jittered, this.contendNotBefore - this.clock.now());
    }
    this.pushPending = false;
    this.clearTimer('tickTimer');
    this.tickTimer = this.clock.setTimeout(() => {
      this.tickTimer = undefined;
      void this.runTick();
    }, delay);
  }

  private async acquireOnce(): Promise<void> {
    const sentAt = this.clock.now();
    try {
      const result = await this.callStore(
        this.callTimeoutMs,
        (signal) =>
          this.store.acquire({
            election: this.election,
            identity: this.identity,
            leaseDurationMs: this.timings.leaseDurationMs,
            signal,
          }),
        // An acquire we stopped waiting for may still have won: hand that lease back.
        (late) => late.acquired && void this.releaseLease(late.lease),
      );
      this.noteSuccess();
      if (!result.acquired) {
        this.setObservedLeader(result.holder);
        return;
      }
      // Won, but too late to act on it (or we are stopping): hand it straight back.
      if (this.stopController.signal.aborted || this.clock.now() >= sentAt + this.timings.renewDeadlineMs) {
        await this.releaseLease(result.lease);
        return;
      }
      this.becomeLeader(result.lease, sentAt);
    } catch (error) {
      this.noteFailure(toLeaseStoreError(error), sentAt);
    }
  }

  private async renewOnce(): Promise<void> {
    const lease = this.lease;
    if (!lease || this.checkDeadline()) return;
    const sentAt = this.clock.now();
    this.lastRenewSentAt = sentAt;
    try {
      // The call may not outlive our leadership: we stop waiting at the deadline at the latest.
      await this.callStore(this.deadline - sentAt, (signal) =>
        this.store.renew(lease, { leaseDurationMs: this.timings.leaseDurationMs, signal }),
      );
      this.noteSuccess();
      if (this.lease !== lease || this.checkDeadline()) return;
      this.deadline = sentAt + this.timings.renewDeadlineMs;
      this.lastRenewAt = Date.now();
      this.armDeadline();
      this.events.next({ type: 'renewed', term: lease.term, validUntil: this.validUntil() });
    } catch (raw) {
      const error = toLeaseStoreError(raw);
      if (error.kind === 'lost') {
        this.noteSuccess();
        if (this.lease !== lease) return;
        this.stepDown(messages.reasonLost, false);
        return;
      }
      // Counted even when the deadline timer ended the term first: the store did fail.
      this.noteFailure(error, sentAt, false);
      if (this.lease === lease && !this.checkDeadline()) {
        this.logger.warn(messages.renewFailed(this.election, error.message, this.deadline - this.clock.now()));
      }
    }
  }

  private becomeLeader(lease: Lease, sentAt: number): void {
    this.lease = lease;
    this.deadline = sentAt + this.timings.renewDeadlineMs;
    this.lastRenewSentAt = sentAt;
    this.lastRenewAt = Date.now();
    this.termController = new AbortController();
    this.currentState = 'leader';
    this.armDeadline();
    this.logger.log(messages.elected(this.election, this.identity, lease.term));
    this.events.next({ type: 'elected', term: lease.term, validUntil: this.validUntil() });
    this.setObservedLeader(this.identity);
  }

  /** Steps down if leading past the deadline; true when it did (or had already). */
  private checkDeadline(): boolean {
    if (this.currentState !== 'leader') return false;
    if (this.clock.now() < this.deadline) return false;
    this.stepDown(messages.reasonDeadline, true);
    return true;
  }

  private stepDown(reason: string, release: boolean): void {
    const lease = this.lease;
    if (!lease || this.currentState !== 'leader') return;
    this.lease = undefined;
    this.deadline = 0;
    this.currentState = 'follower';
    this.clearTimer('deadlineTimer');
    this.termController?.abort(new DOMException(messages.termEnded(reason), 'AbortError'));
    this.termController = undefined;
    this.logger.log(messages.revoked(this.election, this.identity, lease.term, reason));
    this.events.next({ type: 'revoked', term: lease.term, reason });
    if (this.observedLeader === this.identity) this.setObservedLeader(undefined);
    // A stale lease in the store would only delay the next leader: hand it back, best effort.
    if (release) void this.releaseLease(lease);
    this.scheduleNext();
  }

  private armDeadline(): void {
    this.clearTimer('deadlineTimer');
    this.deadlineTimer = this.clock.setTimeout(() => {
      this.deadlineTimer = undefined;
      this.checkDeadline();
    }, this.deadline - this.clock.now());
  }

  private validUntil(): number {
    return Date.now() + (this.deadline - this.clock.now());
  }

  private setObservedLeader(leaderId: string | undefined): void {
    if (this.observedLeader === leaderId) return;
    this.observedLeader = leaderId;
    this.logger.debug?.(messages.leaderChanged(this.election, leaderId));
    this.events.next({ type: 'leader-changed', leaderId });
  }

  // ---- store helpers --------------------------------------------------------------------------

  /** A follower's call must end early enough that a win still leaves time to renew. */
  private get callTimeoutMs(): number {
    return this.timings.renewDeadlineMs - this.timings.renewIntervalMs;
  }

  private releaseLease(lease: Lease): Promise<void> {
    const release = this.callStore(
      this.callTimeoutMs,
      (signal) => this.store.release(lease, { signal }),
      undefined,
      false,
    )
      .catch((raw) => this.logger.warn(messages.releaseFailed(this.election, toLeaseStoreError(raw).message)))
      .finally(() => this.releases.delete(release));
    this.releases.add(release);
    return release;
  }

  /**
   * One store call under a timeout (and under `stop()` unless `stoppable` is false). Stores should
   * honour the signal; if one does not, we stop waiting at the timeout anyway, so a misbehaving
   * store can stall neither the loop nor shutdown. `onLate` gets a result that came after that.
   */
  private callStore<T>(
    timeoutMs: number,
    call: (signal: AbortSignal) => Promise<T>,
    onLate?: (value: T) => unknown,
    stoppable = true,
  ): Promise<T> {
    const parent = stoppable ? this.stopController.signal : undefined;
    const { signal, dispose } = timeoutSignal(this.clock, timeoutMs, parent);
    const answer = (async () => call(signal))();
    return untilAborted(signal, answer, () => onLate && answer.then(onLate, () => undefined)).finally(dispose);
  }

  private openWatch(): void {
    if (!this.store.watch) return;
    try {
      this.watchHandle = this.store.watch(this.election, () => this.onMayBeFree());
    } catch (raw) {
      this.logger.warn(messages.watchFailed(this.election, toLeaseStoreError(raw).message));
    }
  }

  private onMayBeFree(): void {
    if (this.currentState !== 'follower' || this.stopController.signal.aborted) return;
    if (this.clock.now() < this.contendNotBefore) return;
    if (this.inFlight) {
      this.pushPending = true;
      return;
    }
    void this.runTick();
  }

  private noteSuccess(): void {
    if (this.consecutiveFailures > 0) this.logger.log(messages.storeRecovered(this.election, this.store.name));
    this.consecutiveFailures = 0;
  }

  /** `sentAt`: when the failed call was sent, so "failing for" counts from the first failed attempt. */
  private noteFailure(error: LeaseStoreError, sentAt: number, log = true): void {
    if (this.stopController.signal.aborted) return;
    const changed = error.kind !== this.lastError?.kind || error.message !== this.lastError?.message;
    if (this.consecutiveFailures === 0) this.failingSince = sentAt;
    this.consecutiveFailures += 1;
    this.lastError = error;
    if (!log) return;
    if (this.consecutiveFailures === 1 || changed) {
      const line = messages.storeFailing(this.election, this.store.name, error.kind, error.message);
      if (error.kind === 'fatal') this.logger.error(line);
      else this.logger.warn(line);
    } else if (this.consecutiveFailures % STILL_FAILING_EVERY === 0) {
      this.logger.warn(messages.storeStillFailing(this.election, this.store.name, this.consecutiveFailures));
    }
  }

  private async doStop({ release = true, beforeRelease }: StopOptions): Promise<void> {
    if (this.currentState === 'idle') this.currentState = 'follower';
    const lease = this.currentState === 'leader' ? this.lease : undefined;
    // Abort first so stepping down schedules nothing and in-flight calls settle at once.
    this.stopController.abort(new DOMException(messages.reasonStopped, 'AbortError'));
    this.stepDown(messages.reasonStopped, false);
    this.clearTimer('tickTimer');
    await this.inFlight?.catch(() => undefined);
    try {
      await beforeRelease?.();
    } finally {
      if (lease && release) await this.releaseLease(lease);
      await Promise.all(this.releases);
      await this.watchHandle?.close().catch(() => undefined);
      this.clearTimer('tickTimer');
      this.clearTimer('deadlineTimer');
      this.currentState = 'stopped';
      this.events.complete();
    }
  }

  private clearTimer(which: 'tickTimer' | 'deadlineTimer'): void {
    const timer = this[which];
    if (timer !== undefined) this.clock.clearTimeout(timer);
    this[which] = undefined;
  }
}

function defaultIdentity(): string {
  return `${hostname()}-${process.pid}-${randomBytes(2).toString('hex')}`;
}
