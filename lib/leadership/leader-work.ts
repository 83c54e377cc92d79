import { ElectionMetrics, type HandlerMetrics, type ObservedElection } from '../metrics/election.metrics.js';
import type { StoreCallSink } from '../metrics/instrumented.store.js';
import type { Meter } from '../metrics/otel-api.js';
import type { Clock } from '../shared/clock.js';
import { InFlightTracker } from './in-flight.tracker.js';
import { type LeadershipView, publishedRun, publishSkipped, runsObserved } from './leader-only.diagnostics.js';
import { runInLeadership } from './leadership-context.js';
import { onSettled } from './settled.js';
import { type StuckAfter, type StuckWork, StuckWorkDetector } from './stuck-work.detector.js';

const NONE_STUCK: ReadonlyMap<string, number> = new Map();

/**
 * An election's leader-only work as it runs: every call tracked until it settles (a drain waits for
 * it), counted and timed per handler once metrics exist, watched for stuck work, published on the
 * diagnostics channels when anyone listens, and run inside its term's leadership context
 * (`currentLeadership()`). Decides nothing: callers run work here only right after the runtime said
 * "leading".
 */
export class LeaderWork {
  /** Running `@LeaderOnly` / `runIfLeader` calls: a handover or shutdown waits for them before releasing. */
  readonly inFlight = new InFlightTracker();
  /** Running leadership-hook handlers (queue pumps): they get a grace after the abort. */
  readonly hookCalls = new InFlightTracker();
  /** Where this election's store calls are timed (its own view of the shared store), on the module's clock. */
  readonly storeCalls: StoreCallSink;
  private metrics?: ElectionMetrics;
  /** `@LeaderOnly` handlers known so far: their counters start at 0 once metrics exist. */
  private readonly leaderOnlyHandlers = new Set<string>();
  /** The handlers of scheduled jobs (job control): their skip counters start at 0 too. */
  private readonly jobHandlers = new Set<string>();
  /** Made when the module or a handler sets a `stuckAfterMs`. */
  private stuckWork?: StuckWorkDetector;

  constructor(
    private readonly stuckAfterMs: number | undefined,
    private readonly onStuck: (work: StuckWork) => void,
    private readonly clock: Clock,
    /** The election as the runtime sees it: the context of its term, and what a message names. */
    private readonly view: LeadershipView,
  ) {
    this.storeCalls = { clock };
    if (stuckAfterMs !== undefined) this.stuckWork = this.newStuckWorkDetector();
  }

  /**
   * Runs `call` as leader-only work of `handler` in its term's leadership context: tracked until it
   * settles, counted, timed, watched and published. `published: false`: the caller publishes the
   * run itself (a once-per-tick run, once it knows its tick, and only if the tick is its to run).
   */
  run<T>(handler: string, call: () => T, published = true): T {
    const context = this.view.leadershipContext();
    const { stuckWork, metrics } = this;
    const observed = published && context && runsObserved() ? () => publishedRun(context, handler, call) : call;
    const watched = stuckWork ? () => stuckWork.track(handler, observed) : observed;
    if (!metrics) return runInLeadership(context, () => this.inFlight.track(watched));
    const counts = metrics.handler(handler);
    counts.runs += 1;
    const { clock } = this;
    const startedAt = clock.now();
    return runInLeadership(context, () =>
      this.inFlight.track(() =>
        onSettled(watched, () => counts.duration.record((clock.now() - startedAt) / 1000, counts.attributes)),
      ),
    );
  }

  /**
   * {@link run} of `method` on `self` with `args`: without stuck-work detection, metrics or a
   * subscriber, only the context is entered (the leader's hot path).
   */
  runCall(handler: string, method: (...args: unknown[]) => unknown, self: unknown, args: unknown[]): unknown {
    if (this.stuckWork || this.metrics || runsObserved()) {
      return this.run(handler, () => Reflect.apply(method, self, args));
    }
    return runInLeadership(this.view.leadershipContext(), () => this.inFlight.trackCall(method, self, args));
  }

  /** A once-per-tick run of `handler` for `tick` (its scheduled time), published when anyone listens. */
  runTick<T>(handler: string, tick: number, call: () => T): T {
    const context = this.view.leadershipContext();
    return context && runsObserved() ? publishedRun(context, handler, call, tick) : call();
  }

  /** Counts a skipped call of `handler` (a follower's, or one made while stepping down), and publishes it. */
  countSkipped(handler: string): void {
    const { metrics } = this;
    if (metrics) metrics.handler(handler).skipped += 1;
    publishSkipped(this.view, handler);
  }

  /** Counts `count` ticks of once-per-tick `handler` that ran on no replica (the tick ledger found them). */
  countTicksLost(handler: string, count: number): void {
    const { metrics } = this;
    if (metrics) metrics.handler(handler).ticksLost += count;
  }

  /** Counts a scheduled run of job `handler` the leader skipped: its job paused, or its board unread in the term. */
  countJobSkipped(handler: string, reason: 'paused' | 'unread'): void {
    const skips = this.metrics ? jobSkips(this.metrics.handler(handler)) : undefined;
    if (skips) skips[reason === 'paused' ? 'paused' : 'board_unread'] += 1;
  }

  /** Names a scheduled job's handler at startup, so its job skip counters show 0 before any skip. */
  declareJob(handler: string): void {
    this.jobHandlers.add(handler);
    if (this.metrics) jobSkips(this.metrics.handler(handler));
  }

  /** Names a `@LeaderOnly` handler at startup, so its counters show 0 before it runs. */
  declareLeaderOnly(handler: string): void {
    this.leaderOnlyHandlers.add(handler);
    this.metrics?.handler(handler);
  }

  /**
   * A handler's own `stuckAfterMs` (false: never stuck; undefined: the module's), declared at
   * startup. A number watches the handler even when the module's option is off.
   */
  watchStuck(handler: string, stuckAfterMs: StuckAfter | undefined): void {
    if (!this.stuckWork && typeof stuckAfterMs !== 'number') return;
    this.stuckWork ??= this.newStuckWorkDetector();
    this.stuckWork.declare(handler, stuckAfterMs);
  }

  /** For the stuck-work gauge: each watched handler and how long its stuck call has run (ms), else 0. */
  stuckWorkMs(): ReadonlyMap<string, number> {
    return this.stuckWork?.stuckByHandler() ?? NONE_STUCK;
  }

  oldestStuck(): StuckWork | undefined {
    return this.stuckWork?.oldestStuck();
  }

  /**
   * Runs a leadership-hook handler, counted for the grace after the abort. `inTerm` (an `@OnElected`
   * handler): it runs in the leadership context of the term it was elected for.
   */
  trackHook<T>(call: () => T, stuckAs?: string, inTerm = false): T {
    const { stuckWork } = this;
    const tracked = () => this.hookCalls.track(stuckWork && stuckAs ? () => stuckWork.track(stuckAs, call) : call);
    return inTerm ? runInLeadership(this.view.leadershipContext(), tracked) : tracked();
  }

  /** Metrics from now on (once an SDK records): every declared handler's counters start at 0. */
  startMetrics(meter: Meter, election: ObservedElection, storeName: string): void {
    if (this.metrics) return;
    this.metrics = new ElectionMetrics(meter, election, storeName, this.clock);
    this.storeCalls.recorder = this.metrics;
    for (const handler of this.leaderOnlyHandlers) this.metrics.handler(handler);
    for (const handler of this.jobHandlers) jobSkips(this.metrics.handler(handler));
  }

  closeMetrics(): void {
    this.metrics?.close();
  }

  private newStuckWorkDetector(): StuckWorkDetector {
    return new StuckWorkDetector(this.stuckAfterMs, this.onStuck, this.clock);
  }
}

/** A job handler's skip counts, made at 0 on first use. */
function jobSkips(metrics: HandlerMetrics): NonNullable<HandlerMetrics['jobSkips']> {
  metrics.jobSkips ??= { paused: 0, board_unread: 0 };
  return metrics.jobSkips;
}
