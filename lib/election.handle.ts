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
import type { ElectorHealth, ElectorStatus, LeadershipEvent } from './election/elector.js';
import type { HandoverRequestOptions } from './election/elector.types.js';
import type { ElectorTimings } from './election/elector-options.js';
import { InFlightTracker } from './in-flight.tracker.js';
import type { ResolvedLeaderElectionOptions } from './interfaces/leader-election-options.interface.js';
import type { LeaderElector } from './interfaces/leader-elector.interface.js';
import { ABORT_GRACE_MS } from './leader-election.constants.js';
import { messages } from './leader-election.messages.js';
import { ElectionMetrics } from './metrics/election.metrics.js';
import type { StoreCallSink } from './metrics/instrumented.store.js';
import type { Meter } from './metrics/otel-api.js';
import { onSettled } from './metrics/settled.js';
import { systemClock } from './shared/clock.js';
import { errorMessage } from './shared/errors.js';
import type { HandoverRequest, LeaderStateEntry } from './stores/lease-store.js';
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
  private steppingDown = false;
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
    if (context.options.stuckAfterMs !== undefined) this.stuckWork = this.newStuckWorkDetector();
    this.elector = createElector(this);
    this.elector.events$.subscribe((event) => {
      if (event.type !== 'renewed') this.changes += 1;
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
    return !this.steppingDown && this.elector.isLeader();
  }

  /** True from the start of shutdown or of an honoured handover: no new leader-only work starts. */
  get isSteppingDown(): boolean {
    return this.steppingDown;
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

  status(): LeaderElectionStatus {
    const status = this.elector.status();
    const stepping = this.steppingDown && status.state !== 'stopped';
    return { ...status, isLeader: this.isLeader(), state: stepping ? 'stepping-down' : status.state };
  }

  /** Unhealthy when the store refuses us, fails past the renew deadline, the elector is not running, or work is stuck. */
  health(): ElectorHealth {
    const health = this.elector.health();
    const stuck = health.healthy ? this.stuckWork?.oldestStuck() : undefined;
    if (!stuck) return health;
    return { healthy: false, reason: messages.unhealthyStuck(stuck.handler, stuck.runningMs, stuck.stuckAfterMs) };
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
      this.setSteppingDown(true);
      await this.drain(messages.handoverDrainWaiting(this.election, request.id));
    },
    beforeRelease: async () => {
      await this.graceAfterAbort();
      // Now a follower like any other (unless the app is shutting down meanwhile).
      if (!this.stopping) this.setSteppingDown(false);
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
    this.setSteppingDown(true);
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

  /** Waits for running leader-only calls, up to shutdownTimeoutMs, while the lease is still ours. */
  private async drain(waiting: string): Promise<void> {
    const { shutdownTimeoutMs } = this.context.options;
    if (this.inFlight.size === 0) return;
    this.context.logger.log(waiting);
    const stillRunning = await this.inFlight.whenIdle(shutdownTimeoutMs);
    if (stillRunning > 0) {
      this.context.logger.warn(messages.drainTimedOut(this.election, stillRunning, shutdownTimeoutMs, this.graceMs()));
    }
  }

  /** After the term's signal aborted: what still runs gets a short grace to notice, then the release. */
  private async graceAfterAbort(): Promise<void> {
    const graceMs = this.graceMs();
    const [calls, hooks] = await Promise.all([this.inFlight.whenIdle(graceMs), this.hookCalls.whenIdle(graceMs)]);
    if (calls + hooks > 0) this.context.logger.warn(messages.stillRunningAtRelease(this.election, calls + hooks));
  }

  private graceMs(): number {
    return Math.min(ABORT_GRACE_MS, this.context.options.shutdownTimeoutMs);
  }

  private setSteppingDown(value: boolean): void {
    if (this.steppingDown === value) return;
    this.steppingDown = value;
    this.changes += 1;
    this.steppingDownChanges.next();
  }

  private newStuckWorkDetector(): StuckWorkDetector {
    return new StuckWorkDetector(this.context.options.stuckAfterMs, (work) => this.onStuck(work));
  }

  private onStuck(work: StuckWork): void {
    const { resignWhenStuck } = this.context.options;
    const { logger } = this.context;
    logger.warn(messages.stuckWork(this.election, work.handler, work.runningMs, work.stuckAfterMs));
    if (!resignWhenStuck || !this.elector.isLeader() || this.steppingDown) return;
    logger.warn(messages.resigningStuck(this.election, work.handler));
    this.elector.resign().catch((error: unknown) => logger.error(errorMessage(error)));
  }
}

const NONE_STUCK: ReadonlyMap<string, number> = new Map();

/** `[name, fn]` of a `runIfLeader`/`runLeaderOnly` call made with or without a name first. */
function handlerCall<F>(method: string, nameOrFn: string | F, named: F | undefined): [string, F] {
  if (typeof nameOrFn !== 'string') return [method, nameOrFn];
  if (nameOrFn === '' || typeof named !== 'function') throw new TypeError(messages.runHandlerName(method, nameOrFn));
  return [nameOrFn, named];
}
