import type { Logger } from '@nestjs/common';
import {
  defer,
  distinctUntilChanged,
  filter,
  map,
  merge,
  type Observable,
  Subject,
  type Subscription,
  startWith,
} from 'rxjs';
import type { ElectorHealth, ElectorStatus, LeadershipEvent } from '../election/elector.js';
import type { HandoverRequestOptions } from '../election/elector.types.js';
import type { ElectorTimings } from '../election/elector-options.js';
import { messages } from '../messages/leader-election.messages.js';
import { ElectionMetrics } from '../metrics/election.metrics.js';
import type { StoreCallSink } from '../metrics/instrumented.store.js';
import type { Meter } from '../metrics/otel-api.js';
import type { ResolvedLeaderElectionOptions } from '../nest/interfaces/leader-election-options.interface.js';
import { ABORT_GRACE_MS } from '../nest/leader-election.constants.js';
import { type ClockSource, systemClock } from '../shared/clock.js';
import { errorMessage } from '../shared/errors.js';
import type { HandoverRequest, LeaderStateEntry } from '../stores/lease-store.js';
import { type IdleWait, InFlightTracker } from './in-flight.tracker.js';
import type { LeaderElector } from './leader-elector.interface.js';
import { onSettled } from './settled.js';
import { type StuckAfter, type StuckWork, StuckWorkDetector } from './stuck-work.detector.js';

/** `status().state`: the elector's state, or `stepping-down` while the app drains before releasing. */
export type LeaderElectionState = ElectorStatus['state'] | 'stepping-down';

/** A plain, JSON-able snapshot for status endpoints, logs and health checks. */
export interface LeaderElectionStatus extends Omit<ElectorStatus, 'state'> {
  state: LeaderElectionState;
}

/** One term of leadership: its fencing token and the signal that aborts when it ends. */
export interface LeadershipTerm {
  term: number;
  signal: AbortSignal;
}

/** What a handle needs from the service that owns it. */
export interface HandleContext {
  options: ResolvedLeaderElectionOptions;
  logger: Logger;
  /**
   * Times drains, stuck work and how long a lease was held without acting (a test's, e.g. the
   * simulation's fake clock). Default: the system clock, with a plain timer for the drain.
   */
  clock?: ClockSource;
}

/**
 * A step-down this handle started, for the one term it applies to: a new term starts clean, so
 * an abandoned handover (its term ended mid-drain) never keeps a later term from acting.
 */
interface StepDown {
  term: number;
  /** When it started, on the handle's clock: health bounds how long the lease may be held meanwhile. */
  since: number;
  /** A handover drain (lasts up to shutdownTimeoutMs) rather than a resignation (immediate). */
  drains: boolean;
  /** The term has ended and the handover's grace and release are under way. */
  releasing: boolean;
}

/**
 * One election of the application, as `LeaderElectionService.election(name)` returns it: the same
 * members the service has for its default election. Owns one elector and the election's leader-only
 * work (tracked for drain), its stepping-down flag, its metrics and its stuck-work detector.
 */
export class ElectionHandle {
  /** Emits the current value on subscription, then every change; completes when the election stops. */
  readonly isLeader$: Observable<boolean>;

  /** @internal */
  readonly elector: LeaderElector;
  /** @internal Where this election's store calls are timed (its own view of the shared store). */
  readonly storeCalls: StoreCallSink = {};
  /** Running `@LeaderOnly` / `runIfLeader` calls: a handover or shutdown waits for them before releasing. */
  private readonly inFlight = new InFlightTracker();
  /** Running leadership-hook handlers (queue pumps): they get a grace after the abort. */
  private readonly hookCalls = new InFlightTracker();
  private readonly steppingDownChanges = new Subject<void>();
  /** The handover or resignation under way, for its term only (see {@link StepDown}). */
  private stepDown?: StepDown;
  /** When shutdown started (handle clock): stepping down for good, whatever the term. */
  private shutdownSince?: number;
  /** resignWhenStuck: the last term we resigned for stuck work (at most once per term). */
  private resignedTerm?: number;
  private readonly clock: ClockSource;
  private stopping?: Promise<void>;
  private metrics?: ElectionMetrics;
  /** `@LeaderOnly` handlers known so far: their counters start at 0 once metrics exist. */
  private readonly leaderOnlyHandlers = new Set<string>();
  /** Made when the module or a handler sets a `stuckAfterMs`. */
  private stuckWork?: StuckWorkDetector;
  /**
   * @internal Counts changes of this instance's view of the election (elected, revoked, a new
   * leader, stepping down or back): a skipped `@LeaderOnly` handler logs once per change.
   */
  changes = 0;

  constructor(
    private readonly context: HandleContext,
    createElector: (handle: ElectionHandle) => LeaderElector,
  ) {
    this.clock = context.clock ?? systemClock;
    if (context.options.stuckAfterMs !== undefined) this.stuckWork = this.newStuckWorkDetector();
    this.elector = createElector(this);
    // First subscriber: what it changes is seen by every later one (isLeader$, the hooks).
    this.elector.events$.subscribe((event) => {
      if (event.type !== 'renewed') this.changes += 1;
      const step = this.stepDown;
      // No flag outlives its term (the release phase of a handover comes after the revoke).
      if (event.type === 'revoked' && step && !step.releasing && step.term === event.term) this.stepDown = undefined;
      if (event.type === 'elected') this.resignIfStillStuck();
    });
    this.isLeader$ = defer(() =>
      merge(
        this.elector.events$.pipe(filter((event) => event.type === 'elected' || event.type === 'revoked')),
        this.steppingDownChanges,
      ).pipe(
        map(() => this.isLeader()),
        startWith(this.isLeader()),
        distinctUntilChanged(),
      ),
    );
  }

  /** The election (lease) name. */
  get election(): string {
    return this.elector.election;
  }

  get identity(): string {
    return this.elector.identity;
  }

  /** The current leader as last observed (ours while we hold the lease); undefined when unknown. */
  get leaderId(): string | undefined {
    return this.elector.leaderId;
  }

  /** The leader's `advertise` value (where to reach it), as stored with its lease; undefined when unknown. */
  get leaderAdvertise(): string | undefined {
    return this.elector.leaderMeta?.advertise;
  }

  /** Fencing token of our current term; undefined when not leading. */
  get term(): number | undefined {
    return this.elector.term;
  }

  /** Aborts the moment the current term ends; already aborted when not leading. */
  get signal(): AbortSignal {
    return this.elector.signal;
  }

  get events$(): Observable<LeadershipEvent> {
    return this.elector.events$;
  }

  get timings(): Readonly<ElectorTimings> {
    return this.elector.timings;
  }

  /** True while this instance holds the lease (before its deadline) and is not stepping down. */
  isLeader(): boolean {
    if (!this.elector.isLeader() || this.shutdownSince !== undefined) return false;
    const step = this.stepDown;
    return step === undefined || step.term !== this.elector.term;
  }

  /**
   * True from the start of shutdown (for good), or of an honoured handover or a resignation for
   * stuck work until that term's release: no new leader-only work starts. Derived from the term
   * it was started for, so it never applies to a later term.
   */
  get isSteppingDown(): boolean {
    if (this.shutdownSince !== undefined) return true;
    const step = this.stepDown;
    if (!step) return false;
    const term = this.elector.term;
    return term === undefined ? step.releasing : step.term === term;
  }

  /**
   * Resolves with the term once this instance leads (at once if it does). Rejects with the
   * signal's reason when `signal` aborts, or when the election stops first.
   */
  waitForLeadership(signal?: AbortSignal): Promise<LeadershipTerm> {
    return new Promise<LeadershipTerm>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      let settled = false;
      let subscription: Subscription | undefined;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        subscription?.unsubscribe();
        outcome();
      };
      const onAbort = () => settle(() => reject(signal?.reason));
      signal?.addEventListener('abort', onAbort, { once: true });
      subscription = this.isLeader$.subscribe({
        next: (leader) => {
          const term = this.term;
          if (leader && term !== undefined) settle(() => resolve({ term, signal: this.signal }));
        },
        complete: () => settle(() => reject(new Error(messages.waitStopped(this.election)))),
      });
      // The first value arrives during subscribe(), before `subscription` was assigned.
      if (settled) subscription.unsubscribe();
    });
  }

  /**
   * Runs `fn` with the term's `{ term, signal }` if this instance leads this election right now,
   * and counts it until it settles, so a handover or shutdown waits for it before releasing;
   * otherwise returns undefined without calling it. For work registered at run time (jobs added
   * through `SchedulerRegistry`, queue consumers). `name` (default `'runIfLeader'`) is the handler
   * label of its metrics and of a stuck-work report.
   */
  runIfLeader<T>(fn: (term: LeadershipTerm) => T): T | undefined;
  runIfLeader<T>(name: string, fn: (term: LeadershipTerm) => T): T | undefined;
  runIfLeader<T>(nameOrFn: string | ((term: LeadershipTerm) => T), named?: (term: LeadershipTerm) => T): T | undefined {
    const [handler, fn] = handlerCall('runIfLeader', nameOrFn, named);
    if (!this.isLeader()) {
      this.countSkipped(handler);
      return undefined;
    }
    const term = this.term;
    if (term === undefined) return undefined;
    const signal = this.signal;
    return this.runLeading(handler, () => fn({ term, signal }));
  }

  /**
   * Runs `call` if this instance leads right now, tracked like `@LeaderOnly`; otherwise returns
   * `otherwise()` (default: undefined). `name` (default `'runLeaderOnly'`) is the handler label of
   * its metrics and of a stuck-work report.
   */
  runLeaderOnly<T>(call: () => T): T | undefined;
  runLeaderOnly<T, F>(call: () => T, otherwise: () => F): T | F;
  runLeaderOnly<T>(name: string, call: () => T): T | undefined;
  runLeaderOnly<T, F>(name: string, call: () => T, otherwise: () => F): T | F;
  runLeaderOnly<T, F>(
    nameOrCall: string | (() => T),
    callOrOtherwise?: (() => T) | (() => F),
    otherwise?: () => F,
  ): T | F | undefined {
    if (typeof nameOrCall !== 'string') return this.runHandler('runLeaderOnly', nameOrCall, callOrOtherwise as () => F);
    const [handler, call] = handlerCall('runLeaderOnly', nameOrCall, callOrOtherwise as () => T);
    return this.runHandler(handler, call, otherwise);
  }

  /** @internal {@link runLeaderOnly} for a named handler: counted, timed and watched under that name. */
  runHandler<T, F>(handler: string, call: () => T, otherwise?: () => F): T | F | undefined {
    if (!this.isLeader()) {
      this.countSkipped(handler);
      return otherwise?.();
    }
    return this.runLeading(handler, call);
  }

  /** @internal Counts `count` ticks of once-per-tick `handler` that ran on no replica (the tick ledger found them). */
  countTicksLost(handler: string, count: number): void {
    const { metrics } = this;
    if (metrics) metrics.handler(handler).ticksLost += count;
  }

  /** @internal Counts a skipped call of `handler` (a follower's, or one made while stepping down). */
  countSkipped(handler: string): void {
    const { metrics } = this;
    if (metrics) metrics.handler(handler).skipped += 1;
  }

  /**
   * @internal Runs `call` as leader-only work of `handler`: tracked until it settles, counted, timed
   * and watched. Only right after `isLeader()` answered true, in the same synchronous turn.
   */
  runLeading<T>(handler: string, call: () => T): T {
    const { stuckWork, metrics } = this;
    const watched = stuckWork ? () => stuckWork.track(handler, call) : call;
    if (!metrics) return this.inFlight.track(watched);
    const counts = metrics.handler(handler);
    counts.runs += 1;
    const startedAt = systemClock.now();
    return this.inFlight.track(() =>
      onSettled(watched, () => counts.duration.record((systemClock.now() - startedAt) / 1000, counts.attributes)),
    );
  }

  /**
   * @internal {@link runLeading} of `method` on `self` with `args`: without stuck-work detection or
   * metrics, nothing is allocated for the call (the leader's hot path).
   */
  runLeadingCall(handler: string, method: (...args: unknown[]) => unknown, self: unknown, args: unknown[]): unknown {
    if (!this.stuckWork && !this.metrics) return this.inFlight.trackCall(method, self, args);
    return this.runLeading(handler, () => Reflect.apply(method, self, args));
  }

  /** @internal Names a `@LeaderOnly` handler at startup, so its counters show 0 before it runs. */
  declareLeaderOnly(handler: string): void {
    this.leaderOnlyHandlers.add(handler);
    this.metrics?.handler(handler);
  }

  /**
   * @internal A handler's own `stuckAfterMs` (false: never stuck; undefined: the module's), declared
   * at startup. A number watches the handler even when the module's option is off.
   */
  watchStuck(handler: string, stuckAfterMs: StuckAfter | undefined): void {
    if (!this.stuckWork && typeof stuckAfterMs !== 'number') return;
    this.stuckWork ??= this.newStuckWorkDetector();
    this.stuckWork.declare(handler, stuckAfterMs);
  }

  /** @internal For the stuck-work gauge: each watched handler and how long its stuck call has run (ms), else 0. */
  stuckWorkMs(): ReadonlyMap<string, number> {
    return this.stuckWork?.stuckByHandler() ?? NONE_STUCK;
  }

  /** @internal Runs a leadership-hook handler, counted for the grace after the abort. */
  trackHook<T>(call: () => T, stuckAs?: string): T {
    const { stuckWork } = this;
    return this.hookCalls.track(stuckWork && stuckAs ? () => stuckWork.track(stuckAs, call) : call);
  }

  /** Leader state of this election under `key` (default `'state'`); any replica may read. */
  readState<T = unknown>(key?: string): Promise<LeaderStateEntry<T> | undefined> {
    return this.elector.readState<T>(key);
  }

  /** Writes leader state of this election, fenced by the store (see `LeaderElectionService.writeState`). */
  writeState<T = unknown>(value: T, key?: string): Promise<void> {
    return this.elector.writeState<T>(value, key);
  }

  /** @internal The once-per-tick ledger's write of its `tick:` key (refused by `writeState`). */
  writeTickRecord(value: number, key: string): Promise<void> {
    return this.elector.writeTickRecord(value, key);
  }

  /** @internal true when leader state works here, else the store's name (for a startup error). */
  leaderStateStore(): true | string {
    return this.elector.supportsState || (this.context.options.store?.name ?? 'the store');
  }

  /** Give up leadership now (the term's signal aborts) and sit out one round so another instance wins. */
  resign(): Promise<void> {
    return this.elector.resign();
  }

  /**
   * Asks the leader of this election, wherever it runs, to drain and hand over to `to` (without it,
   * to any other replica). Resolves with the request once it is recorded in the store, or with
   * undefined when the store shows `to` already leading (nothing recorded).
   */
  requestHandover(
    options: Omit<HandoverRequestOptions, 'requesterLeaderships'> = {},
  ): Promise<HandoverRequest | undefined> {
    return this.elector.requestHandover(options);
  }

  /** `state` is `stepping-down` whenever the lease is held without acting, so it agrees with `isLeader`. */
  status(): LeaderElectionStatus {
    const status = this.elector.status();
    const isLeader = this.isLeader();
    const stepping = status.state !== 'stopped' && (this.isSteppingDown || (status.isLeader && !isLeader));
    return { ...status, isLeader, state: stepping ? 'stepping-down' : status.state };
  }

  /**
   * Unhealthy when the store refuses us, fails past the renew deadline, the elector is not running,
   * work is stuck, or the lease is held without acting beyond what a step-down takes ({@link notActing}).
   */
  health(): ElectorHealth {
    const health = this.elector.health();
    if (!health.healthy) return health;
    const stuck = this.stuckWork?.oldestStuck();
    if (stuck) {
      return { healthy: false, reason: messages.unhealthyStuck(stuck.handler, stuck.runningMs, stuck.stuckAfterMs) };
    }
    const notActing = this.notActing();
    return notActing === undefined ? health : { healthy: false, reason: notActing };
  }

  /**
   * Rule (health tells the truth): a replica whose elector holds the lease either acts as leader
   * (`isLeader()`), or is stepping down for that very term within the step-down's bound — a
   * handover or shutdown drain: shutdownTimeoutMs + renewIntervalMs from its start (the drain waits
   * shutdownTimeoutMs at most, then the term ends at once; one renew interval of slack for a loaded
   * event loop); a resignation: renewIntervalMs. Anything else — no step-down under way for this
   * term, or one past its bound — is a lease held by a replica that does no leader work, which only
   * health can reveal: the reason says so. Read at call time, so a probe sees it at once.
   */
  private notActing(): string | undefined {
    if (!this.elector.isLeader() || this.isLeader()) return undefined;
    const term = this.elector.term;
    const { shutdownTimeoutMs } = this.context.options;
    const { renewIntervalMs } = this.elector.timings;
    const step = this.stepDown;
    let what: string;
    let since: number;
    let boundMs = renewIntervalMs;
    if (this.shutdownSince !== undefined) {
      [what, since] = [messages.notActingShutdown, this.shutdownSince];
      boundMs += shutdownTimeoutMs;
    } else if (step && step.term === term) {
      [what, since] = [step.drains ? messages.notActingHandover : messages.notActingResign, step.since];
      if (step.drains) boundMs += shutdownTimeoutMs;
    } else {
      return messages.unhealthyNotActing(term, messages.notActingUnexplained);
    }
    const forMs = this.clock.now() - since;
    return forMs > boundMs
      ? messages.unhealthyNotActing(term, messages.notActingOverdue(what, forMs, boundMs))
      : undefined;
  }

  /** @internal Before the first acquire: metrics (when an SDK records), then the first attempt. */
  async start(meter: Meter | undefined): Promise<void> {
    if (meter && !this.metrics) {
      this.metrics = new ElectionMetrics(meter, this, this.context.options.store.name);
      this.storeCalls.recorder = this.metrics;
      for (const handler of this.leaderOnlyHandlers) this.metrics.handler(handler);
    }
    await this.elector.start();
  }

  /** @internal The elector's handover hooks: drain this election's work, as shutdown does, then go on. */
  readonly handoverHooks = {
    beforeStepDown: async (request: HandoverRequest) => {
      const { term } = request;
      // Its term already ended: nothing to drain for it (the elector abandons the handover).
      if (this.elector.term !== term) return;
      const signal = this.elector.signal;
      this.setStepDown({ term, since: this.clock.now(), drains: true, releasing: false });
      // Ends with the term too: a drain past it hands nothing over and only delays the next term.
      await this.drain(messages.handoverDrainWaiting(this.election, request.id), signal);
    },
    beforeRelease: async (request: HandoverRequest) => {
      const step: StepDown = { term: request.term, since: this.clock.now(), drains: false, releasing: true };
      this.setStepDown(step);
      try {
        await this.graceAfterAbort();
      } finally {
        // Now a follower like any other.
        if (this.stepDown === step) this.setStepDown(undefined);
      }
    },
  };

  /** @internal Drain, then end the term and release: runs once. */
  stop(): Promise<void> {
    this.stopping ??= this.drainAndStop();
    return this.stopping;
  }

  /** @internal */
  closeMetrics(): void {
    this.metrics?.close();
  }

  private async drainAndStop(): Promise<void> {
    // 1. Stop starting leader-only work: new ticks are skipped, the guard answers 503.
    this.shutdownSince = this.clock.now();
    this.notifySteppingDown();
    // 2. Let running calls finish while the lease is still ours, up to shutdownTimeoutMs.
    await this.drain(messages.drainWaiting(this.election, this.inFlight.size, this.context.options.shutdownTimeoutMs));
    // 3. End the term (signal aborts), give what still runs a short grace to notice, then release.
    //    The elector bounds every store call itself, so this returns even if the store hangs.
    try {
      await this.elector.stop({ release: true, beforeRelease: () => this.graceAfterAbort() });
    } finally {
      this.steppingDownChanges.complete();
    }
  }

  /** Waits for running leader-only calls, up to shutdownTimeoutMs (or `signal`), while the lease is still ours. */
  private async drain(waiting: string, signal?: AbortSignal): Promise<void> {
    const { shutdownTimeoutMs } = this.context.options;
    if (this.inFlight.size === 0) return;
    this.context.logger.log(waiting);
    const stillRunning = await this.inFlight.whenIdle(shutdownTimeoutMs, this.idleWait(signal));
    if (stillRunning > 0 && !signal?.aborted) {
      this.context.logger.warn(messages.drainTimedOut(this.election, stillRunning, shutdownTimeoutMs, this.graceMs()));
    }
  }

  /** After the term's signal aborted: what still runs gets a short grace to notice, then the release. */
  private async graceAfterAbort(): Promise<void> {
    const graceMs = this.graceMs();
    const wait = this.idleWait();
    const [calls, hooks] = await Promise.all([
      this.inFlight.whenIdle(graceMs, wait),
      this.hookCalls.whenIdle(graceMs, wait),
    ]);
    if (calls + hooks > 0) this.context.logger.warn(messages.stillRunningAtRelease(this.election, calls + hooks));
  }

  private graceMs(): number {
    return Math.min(ABORT_GRACE_MS, this.context.options.shutdownTimeoutMs);
  }

  /** A drain's wait: on the context's clock when one was given, else on a plain timer. */
  private idleWait(signal?: AbortSignal): IdleWait {
    const { clock } = this.context;
    return { ...(signal ? { signal } : {}), ...(clock ? { clock } : {}) };
  }

  private setStepDown(step: StepDown | undefined): void {
    if (this.stepDown === step) return;
    this.stepDown = step;
    this.notifySteppingDown();
  }

  private notifySteppingDown(): void {
    this.changes += 1;
    this.steppingDownChanges.next();
  }

  private newStuckWorkDetector(): StuckWorkDetector {
    return new StuckWorkDetector(this.context.options.stuckAfterMs, (work) => this.onStuck(work), this.clock);
  }

  private onStuck(work: StuckWork): void {
    this.context.logger.warn(messages.stuckWork(this.election, work.handler, work.runningMs, work.stuckAfterMs));
    this.resignForStuck(work.handler, false);
  }

  /** resignWhenStuck: a term won while work of an earlier one is still stuck is given up too. */
  private resignIfStillStuck(): void {
    if (!this.context.options.resignWhenStuck) return;
    const stuck = this.stuckWork?.oldestStuck();
    if (stuck) this.resignForStuck(stuck.handler, true);
  }

  /**
   * Rule (resignWhenStuck): a leader whose work is stuck does not keep the lease. It resigns when
   * the work becomes stuck, and again in every later term it wins while that work is still stuck —
   * at most once per term — so leadership does not settle on a replica whose work cannot end.
   * Not while stepping down already (the drain ends the term anyway). No new work starts from here.
   */
  private resignForStuck(handler: string, again: boolean): void {
    if (!this.context.options.resignWhenStuck) return;
    const term = this.elector.term;
    if (term === undefined || term === this.resignedTerm || this.isSteppingDown) return;
    this.resignedTerm = term;
    this.setStepDown({ term, since: this.clock.now(), drains: false, releasing: false });
    const { logger } = this.context;
    logger.warn(
      again
        ? messages.resigningStuckAgain(this.election, handler, term)
        : messages.resigningStuck(this.election, handler),
    );
    // Not from inside the elector's own 'elected' event: let it finish becoming leader first.
    queueMicrotask(() => {
      if (this.elector.term !== term) return;
      this.elector.resign().catch((error: unknown) => logger.error(errorMessage(error)));
    });
  }
}

const NONE_STUCK: ReadonlyMap<string, number> = new Map();

/** `[name, fn]` of a `runIfLeader`/`runLeaderOnly` call made with or without a name first. */
function handlerCall<F>(method: string, nameOrFn: string | F, named: F | undefined): [string, F] {
  if (typeof nameOrFn !== 'string') return [method, nameOrFn];
  if (nameOrFn === '' || typeof named !== 'function') throw new TypeError(messages.runHandlerName(method, nameOrFn));
  return [nameOrFn, named];
}
