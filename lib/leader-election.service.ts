import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
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
import { Elector, type ElectorHealth, type ElectorStatus, type LeadershipEvent } from './election/elector.js';
import type { ElectorTimings } from './election/elector-options.js';
import { InFlightTracker } from './in-flight.tracker.js';
import type {
  LeaderElectionModuleOptions,
  ResolvedLeaderElectionOptions,
} from './interfaces/leader-election-options.interface.js';
import type { ElectorFactory, LeaderElector } from './interfaces/leader-elector.interface.js';
import { ABORT_GRACE_MS, LEADER_ELECTION_ELECTOR_FACTORY, LOGGER_CONTEXT } from './leader-election.constants.js';
import { messages } from './leader-election.messages.js';
import { resolveModuleOptions } from './leader-election.options.js';
import { InjectLeaderElectionOptions } from './leader-election-options.decorator.js';
import { ElectionMetrics } from './metrics/election.metrics.js';
import { instrumentLeaseStore, type StoreCallSink } from './metrics/instrumented.store.js';
import { resolveMeter } from './metrics/otel-api.js';
import { onSettled } from './metrics/settled.js';
import type { LeaderStateEntry } from './stores/lease-store.js';
import { type StuckWork, StuckWorkDetector } from './stuck-work.detector.js';

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

/**
 * The application's view of its election: inject it anywhere (the module is global by default).
 * Owns one {@link Elector}: starts it during module init, drains and releases on shutdown.
 */
@Injectable()
export class LeaderElectionService implements OnModuleInit, OnModuleDestroy, OnApplicationShutdown {
  /** Emits the current value on subscription, then every change; completes when the app shuts down. */
  readonly isLeader$: Observable<boolean>;

  /** @internal Running `@LeaderOnly` calls: shutdown waits for them before releasing. */
  private readonly inFlight = new InFlightTracker();
  /** @internal Running leadership-hook handlers (queue pumps): they get a grace after the abort. */
  private readonly hookCalls = new InFlightTracker();
  /** @internal */
  private readonly options: ResolvedLeaderElectionOptions;
  /** @internal */
  private readonly elector: LeaderElector;
  private readonly logger = new Logger(LOGGER_CONTEXT);
  private readonly steppingDownChanges = new Subject<void>();
  private steppingDown = false;
  private shuttingDown?: Promise<void>;
  private storeClosed = false;
  /** Set once at init when an OpenTelemetry SDK records; undefined keeps every hot path a no-op. */
  private metrics?: ElectionMetrics;
  private readonly storeCalls: StoreCallSink = {};
  /** `@LeaderOnly` handlers known so far: their counters start at 0 once metrics exist. */
  private readonly leaderOnlyHandlers = new Set<string>();
  private readonly stuckWork?: StuckWorkDetector;

  constructor(
    @InjectLeaderElectionOptions() options: LeaderElectionModuleOptions,
    // The testing kit's seam; production leaves it unset.
    @Optional() @Inject(LEADER_ELECTION_ELECTOR_FACTORY) createElector: ElectorFactory = (o) => new Elector(o),
  ) {
    // Both validations throw here, during DI, so `compile()`/`init()` rejects naming the option.
    this.options = resolveModuleOptions(options);
    const { shutdownTimeoutMs, closeStoreOnShutdown, guard, stuckAfterMs, resignWhenStuck, ...electorOptions } =
      this.options;
    if (stuckAfterMs !== undefined) this.stuckWork = new StuckWorkDetector(stuckAfterMs, (work) => this.onStuck(work));
    this.elector = createElector({
      ...electorOptions,
      // Timed for the metrics by a pass-through view of the store: the elector never knows.
      store: instrumentLeaseStore(this.options.store, this.storeCalls),
      logger: {
        log: (message) => this.logger.log(message),
        warn: (message) => this.logger.warn(message),
        error: (message) => this.logger.error(message),
        debug: (message) => this.logger.debug(message),
      },
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

  /** True from the start of shutdown: no new leader-only work starts. */
  get isSteppingDown(): boolean {
    return this.steppingDown;
  }

  /**
   * Resolves with the term once this instance leads (at once if it does). Rejects with the
   * signal's reason when `signal` aborts, or when the app shuts down first.
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
   * Runs `call` if this instance leads right now, and counts it until it settles, so shutdown
   * waits for it before releasing the lease; otherwise returns `otherwise()` (default: undefined).
   * What `@LeaderOnly()` does, for code that cannot carry a decorator (a queue consumer callback).
   */
  runLeaderOnly<T>(call: () => T): T | undefined;
  runLeaderOnly<T, F>(call: () => T, otherwise: () => F): T | F;
  runLeaderOnly<T, F>(call: () => T, otherwise?: () => F): T | F | undefined {
    return this.runHandler('runLeaderOnly', call, otherwise);
  }

  /**
   * @internal {@link runLeaderOnly} for a named handler (`Class.method`, what `@LeaderOnly` runs):
   * counted, timed and watched for being stuck under that name. The skip path allocates nothing.
   */
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
    const startedAt = performance.now();
    return this.inFlight.track(() =>
      onSettled(watched, () => counts.duration.record((performance.now() - startedAt) / 1000, counts.attributes)),
    );
  }

  /** @internal The explorer names each `@LeaderOnly` handler at startup, so its counters show 0 before it runs. */
  declareLeaderOnly(handler: string): void {
    this.leaderOnlyHandlers.add(handler);
    this.metrics?.handler(handler);
  }

  /**
   * @internal Runs a leadership-hook handler (the explorer's), counted so that shutdown gives a
   * still running one a short grace after the term's signal aborted, before the release. `stuckAs`
   * names an `@OnElected` handler for stuck-work detection.
   */
  trackHook<T>(call: () => T, stuckAs?: string): T {
    const { stuckWork } = this;
    return this.hookCalls.track(stuckWork && stuckAs ? () => stuckWork.track(stuckAs, call) : call);
  }

  /**
   * Leader state: the value last written under `key` (default `'state'`) by any leader, with the
   * term that wrote it; undefined when never written. Any replica may read.
   */
  readState<T = unknown>(key?: string): Promise<LeaderStateEntry<T> | undefined> {
    return this.elector.readState<T>(key);
  }

  /**
   * Writes leader state (JSON-serialisable, up to the store's limit, at least 64 KiB), fenced by the
   * store: accepted only while this instance's lease is the current one there, so a leader resumed
   * after a pause can never overwrite a newer leader's value. On a non-leader it rejects at once
   * with `LeaseLostError`. Still allowed while stepping down (the lease is ours until released), so
   * draining work can save its checkpoint. Keys starting with `tick:` belong to `once: 'per-tick'`.
   */
  writeState<T = unknown>(value: T, key?: string): Promise<void> {
    return this.elector.writeState<T>(value, key);
  }

  /** @internal true when leader state works here, else the store's name (for a startup error). */
  leaderStateStore(): true | string {
    return this.elector.supportsState || (this.options.store?.name ?? 'the store');
  }

  /** Give up leadership now (the term's signal aborts) and sit out one round so another instance wins. */
  resign(): Promise<void> {
    return this.elector.resign();
  }

  status(): LeaderElectionStatus {
    const status = this.elector.status();
    const stepping = this.steppingDown && status.state !== 'stopped';
    return { ...status, isLeader: this.isLeader(), state: stepping ? 'stepping-down' : status.state };
  }

  /**
   * Unhealthy when the store refuses us, fails past the renew deadline, or the elector is not
   * running; with `stuckAfterMs`, also while leader work has run longer than that (named in `reason`).
   */
  health(): ElectorHealth {
    const health = this.elector.health();
    const stuck = health.healthy ? this.stuckWork?.oldestStuck() : undefined;
    if (!stuck || !this.stuckWork) return health;
    return {
      healthy: false,
      reason: messages.unhealthyStuck(stuck.handler, stuck.runningMs, this.stuckWork.stuckAfterMs),
    };
  }

  async onModuleInit(): Promise<void> {
    // Before the first acquire, so that it is timed and every counter reads 0 from the first scrape.
    const meter = await resolveMeter();
    if (meter && !this.metrics) {
      this.metrics = new ElectionMetrics(meter, this, this.options.store.name);
      this.storeCalls.recorder = this.metrics;
      for (const handler of this.leaderOnlyHandlers) this.metrics.handler(handler);
    }
    // The first acquire attempt completes here, before @nestjs/schedule mounts its timers in
    // onApplicationBootstrap: an elected instance's @Timeout jobs then run instead of being skipped.
    await this.elector.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.shutdown();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.shutdown();
    this.metrics?.close();
    if (!this.options.closeStoreOnShutdown || this.storeClosed) return;
    this.storeClosed = true;
    const { store } = this.options;
    try {
      await store.close?.();
    } catch (error) {
      this.logger.warn(messages.storeCloseFailed(this.election, store.name, errorMessage(error)));
    }
  }

  private onStuck(work: StuckWork): void {
    const { stuckAfterMs = 0, resignWhenStuck } = this.options;
    this.logger.warn(messages.stuckWork(this.election, work.handler, work.runningMs, stuckAfterMs));
    if (!resignWhenStuck || !this.elector.isLeader() || this.steppingDown) return;
    this.logger.warn(messages.resigningStuck(this.election, work.handler));
    this.elector.resign().catch((error: unknown) => this.logger.error(errorMessage(error)));
  }

  /** Drain, then end the term and release: runs once, whichever hook gets here first. */
  private shutdown(): Promise<void> {
    this.shuttingDown ??= this.drainAndStop();
    return this.shuttingDown;
  }

  private async drainAndStop(): Promise<void> {
    const { shutdownTimeoutMs } = this.options;
    // 1. Stop starting leader-only work: new ticks are skipped, the guard answers 503.
    this.steppingDown = true;
    this.steppingDownChanges.next();
    // 2. Let running calls finish while the lease is still ours, up to shutdownTimeoutMs.
    let stillRunning = 0;
    if (this.inFlight.size > 0) {
      this.logger.log(messages.drainWaiting(this.election, this.inFlight.size, shutdownTimeoutMs));
      stillRunning = await this.inFlight.whenIdle(shutdownTimeoutMs);
    }
    const graceMs = Math.min(ABORT_GRACE_MS, shutdownTimeoutMs);
    if (stillRunning > 0) {
      this.logger.warn(messages.drainTimedOut(this.election, stillRunning, shutdownTimeoutMs, graceMs));
    }
    // 3. End the term (signal aborts), give what still runs a short grace to notice, then release.
    //    The elector bounds every store call itself, so this returns even if the store hangs.
    try {
      await this.elector.stop({
        release: true,
        beforeRelease: async () => {
          const [calls, hooks] = await Promise.all([this.inFlight.whenIdle(graceMs), this.hookCalls.whenIdle(graceMs)]);
          if (calls + hooks > 0) this.logger.warn(messages.stillRunningAtRelease(this.election, calls + hooks));
        },
      });
    } finally {
      this.steppingDownChanges.complete();
    }
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
