import type { Observable, Subscription } from 'rxjs';
import type { LeadershipEvent } from '../election/elector.js';
import { type Clock, systemClock } from '../shared/clock.js';
import {
  DESCRIPTIONS,
  JOB_SKIP_REASONS,
  LEADER_ONLY_BUCKETS,
  METRIC,
  STORE_CALL_BUCKETS,
  STORE_FAILURE_KINDS,
  type StoreOperation,
  TRANSITION_TYPES,
} from './metric-names.js';
import type { Attributes, Counter, Histogram, Meter, ObservableResult } from './otel-api.js';

/** What the gauges read at collection time: the election as the application sees it. */
export interface ObservedElection {
  readonly election: string;
  readonly identity: string;
  readonly leaderId: string | undefined;
  readonly term: number | undefined;
  readonly timings: { readonly leaseDurationMs: number; readonly retryIntervalMs: number };
  isLeader(): boolean;
  readonly events$: Observable<LeadershipEvent>;
  /** Each handler watched for stuck work, with how long its stuck call has run (ms), else 0. */
  stuckWorkMs(): ReadonlyMap<string, number>;
}

/**
 * Per `@LeaderOnly` handler. Runs and skips are plain numbers the caller increments, reported by
 * observable counters at collection time: an SDK counter's `add()` costs about 1 µs (it hashes the
 * attributes), an increment a nanosecond, and a follower skips every tick.
 */
export interface HandlerMetrics {
  readonly attributes: Attributes;
  runs: number;
  skipped: number;
  /** Once-per-tick jobs: ticks found to have run on no replica. */
  ticksLost: number;
  readonly duration: Histogram;
  /** Scheduled jobs only (job control): the leader's skips, by reason; absent for other handlers. */
  jobSkips?: Record<JobSkipReason, number>;
}

/** Why the leader skipped a scheduled run of a job. */
export type JobSkipReason = (typeof JOB_SKIP_REASONS)[number];

/** Outcome label of a store call: `ok`, `held` (acquire found another holder) or the error's kind. */
export type StoreCallOutcome = 'ok' | 'held' | (typeof STORE_FAILURE_KINDS)[number];

/** Receives what the instrumented store measured. */
export interface StoreCallRecorder {
  /** `holderExpiresInMs`: on an acquire that found a holder, the store's hint of its remaining lease. */
  storeCall(operation: StoreOperation, outcome: StoreCallOutcome, seconds: number, holderExpiresInMs?: number): void;
}

type ObservedKey = 'isLeader' | 'term' | 'leaderlessSeconds' | 'stuckWorkSeconds';

/**
 * The `@LeaderOnly` counts of every app on one meter, by election and handler. Shared, so two apps
 * of one process in the same election (a test, a blue/green pair) add up as synchronous counters
 * would, instead of overwriting each other's observation of the same series.
 */
class HandlerCounts {
  private static readonly byMeter = new WeakMap<Meter, HandlerCounts>();
  readonly handlers = new Map<string, HandlerMetrics>();
  readonly duration: Histogram;

  static of(meter: Meter): HandlerCounts {
    let counts = HandlerCounts.byMeter.get(meter);
    if (!counts) {
      counts = new HandlerCounts(meter);
      HandlerCounts.byMeter.set(meter, counts);
    }
    return counts;
  }

  private constructor(meter: Meter) {
    this.duration = meter.createHistogram(METRIC.leaderOnlyDuration, {
      description: DESCRIPTIONS.leaderOnlyDuration,
      unit: 's',
      advice: { explicitBucketBoundaries: LEADER_ONLY_BUCKETS },
    });
    const fields = { leaderOnlyRuns: 'runs', leaderOnlySkipped: 'skipped', ticksLost: 'ticksLost' } as const;
    for (const key of ['leaderOnlyRuns', 'leaderOnlySkipped', 'ticksLost'] as const) {
      const field = fields[key];
      meter.createObservableCounter(METRIC[key], { description: DESCRIPTIONS[key] }).addCallback((result) => {
        for (const handler of this.handlers.values()) result.observe(handler[field], handler.attributes);
      });
    }
    meter.createObservableCounter(METRIC.jobSkipped, { description: DESCRIPTIONS.jobSkipped }).addCallback((result) => {
      for (const { jobSkips, attributes } of this.handlers.values()) {
        if (!jobSkips) continue;
        for (const reason of JOB_SKIP_REASONS) result.observe(jobSkips[reason], { ...attributes, reason });
      }
    });
  }

  /** The handler's counts, created at 0 on first use. */
  handler(election: string, handler: string): HandlerMetrics {
    const key = `${election}\u0000${handler}`;
    let metrics = this.handlers.get(key);
    if (!metrics) {
      metrics = { attributes: { election, handler }, runs: 0, skipped: 0, ticksLost: 0, duration: this.duration };
      this.handlers.set(key, metrics);
    }
    return metrics;
  }
}

const TRANSITION_OF: Partial<Record<LeadershipEvent['type'], (typeof TRANSITION_TYPES)[number]>> = {
  elected: 'elected',
  revoked: 'revoked',
  'leader-changed': 'leader_changed',
};

/**
 * The instruments of one election on one replica. Labels come from the election (name, identity,
 * store, handler), so with several elections per app (issue 14) each gets its own series; nothing
 * here assumes there is only one.
 *
 * Observes only: reads the election's public state and subscribes to its events.
 */
export class ElectionMetrics implements StoreCallRecorder {
  private readonly transitions: Counter;
  private readonly storeFailures: Counter;
  private readonly storeCallDuration: Histogram;
  private readonly handlerCounts: HandlerCounts;
  private readonly handlers = new Map<string, HandlerMetrics>();
  private readonly storeAttributes = new Map<string, Attributes>();
  private readonly electionAttributes: Attributes;
  private readonly subscription: Subscription;
  /** Monotonic time since which no leader is known; undefined while one is. */
  private leaderlessSince: number | undefined;
  /**
   * Monotonic time of the last sign of a live leader: a store answer naming a holder (acquire won
   * or found it held), a renewal of ours. A follower cut off from the store keeps the last leader
   * it read; once no sign came for as long as the store vouched for it, it no longer knows of one.
   */
  private lastSeenLeader: number;
  /**
   * Until when the last sign vouches for the leader: a whole lease, or — when the store hinted
   * the holder's remaining lease — that plus a retry interval. A follower with a watch polls only
   * just after that hinted expiry (a release would wake it at once), so its answers can come more
   * than a lease apart while the leader is alive and well (measured: 2.0–2.1 s apart with 2 s
   * leases on PostgreSQL).
   */
  private leaderSeenUntil: number;
  private closed = false;

  constructor(
    meter: Meter,
    private readonly source: ObservedElection,
    private readonly storeName: string,
    /** The module's clock (a test's `FakeClock`): leaderless seconds are counted on it. */
    private readonly clock: Pick<Clock, 'now'> = systemClock,
  ) {
    this.lastSeenLeader = clock.now();
    this.electionAttributes = { election: source.election };
    this.transitions = meter.createCounter(METRIC.transitions, { description: DESCRIPTIONS.transitions });
    this.storeFailures = meter.createCounter(METRIC.storeFailures, { description: DESCRIPTIONS.storeFailures });
    this.storeCallDuration = meter.createHistogram(METRIC.storeCallDuration, {
      description: DESCRIPTIONS.storeCallDuration,
      unit: 's',
      advice: { explicitBucketBoundaries: STORE_CALL_BUCKETS },
    });
    this.leaderSeenUntil = this.lastSeenLeader + source.timings.leaseDurationMs;
    this.handlerCounts = HandlerCounts.of(meter);
    // One callback per instrument, each reporting only its own (the SDK rejects observations of an
    // instrument from another instrument's callback).
    for (const key of ['isLeader', 'term', 'leaderlessSeconds', 'stuckWorkSeconds'] as const) {
      const instrument = meter.createObservableGauge(METRIC[key], {
        description: DESCRIPTIONS[key],
        unit: key === 'leaderlessSeconds' || key === 'stuckWorkSeconds' ? 's' : undefined,
      });
      const callback = (result: ObservableResult) => {
        this.collect(key, result);
        // Not removed during the collection: the SDK iterates its callback list and would skip the next one.
        if (this.closed) setTimeout(() => instrument.removeCallback(callback), 0).unref();
      };
      instrument.addCallback(callback);
    }
    // Zero from startup: a counter Prometheus has never seen cannot be alerted on with rate().
    for (const type of TRANSITION_TYPES) this.transitions.add(0, { ...this.electionAttributes, type });
    for (const kind of STORE_FAILURE_KINDS) this.storeFailures.add(0, { store: storeName, kind });
    this.noteLeader(source.leaderId);
    this.subscription = source.events$.subscribe((event) => {
      const type = TRANSITION_OF[event.type];
      if (type) this.transitions.add(1, { ...this.electionAttributes, type });
      if (event.type === 'leader-changed') this.noteLeader(event.leaderId);
    });
  }

  /** The handler's counts (0 from the first scrape on) and duration histogram. Hot path: one Map lookup. */
  handler(label: string): HandlerMetrics {
    let metrics = this.handlers.get(label);
    if (!metrics) {
      metrics = this.handlerCounts.handler(this.source.election, label);
      this.handlers.set(label, metrics);
    }
    return metrics;
  }

  storeCall(operation: StoreOperation, outcome: StoreCallOutcome, seconds: number, holderExpiresInMs?: number): void {
    this.storeCallDuration.record(seconds, this.storeCallAttributes(operation, outcome));
    const { leaseDurationMs, retryIntervalMs } = this.source.timings;
    if (outcome !== 'ok' && outcome !== 'held') {
      this.storeFailures.add(1, { store: this.storeName, kind: outcome });
      // The store (and so, most likely, its watch) is out of reach: a release would go unheard,
      // so the hint no longer vouches; the last answer counts for a lease, as without a hint.
      this.leaderSeenUntil = Math.min(this.leaderSeenUntil, this.lastSeenLeader + leaseDurationMs);
    } else if (operation === 'acquire' || operation === 'renew') {
      const now = this.clock.now();
      this.lastSeenLeader = now;
      this.leaderSeenUntil =
        now +
        (holderExpiresInMs === undefined
          ? leaseDurationMs
          : Math.max(leaseDurationMs, holderExpiresInMs + retryIntervalMs));
    }
  }

  /**
   * Stops observing. The SDK keeps exporting the last value a gauge callback observed, so each gauge
   * first reports the closed election once more (not leading, term 0) and then drops its callback:
   * a stopped replica must not go on saying it leads.
   */
  close(): void {
    this.subscription.unsubscribe();
    this.closed = true;
  }

  private noteLeader(leaderId: string | undefined): void {
    if (leaderId !== undefined) this.leaderlessSince = undefined;
    else this.leaderlessSince ??= this.clock.now();
  }

  private collect(key: ObservedKey, result: ObservableResult): void {
    const { source } = this;
    if (key === 'isLeader') {
      const leading = !this.closed && source.isLeader();
      result.observe(leading ? 1 : 0, { ...this.electionAttributes, identity: source.identity });
    } else if (key === 'term') {
      result.observe(!this.closed && source.isLeader() ? (source.term ?? 0) : 0, this.electionAttributes);
    } else if (key === 'stuckWorkSeconds') {
      for (const [handler, ms] of source.stuckWorkMs()) {
        result.observe(this.closed ? 0 : ms / 1000, { ...this.electionAttributes, handler });
      }
    } else {
      result.observe(this.leaderlessSeconds(this.clock.now()), this.electionAttributes);
    }
  }

  /** 0 while a leader is known and the last sign still vouches for it; else for how long none has been. */
  private leaderlessSeconds(now: number): number {
    if (this.leaderlessSince !== undefined) return (now - this.leaderlessSince) / 1000;
    return now > this.leaderSeenUntil ? (now - this.lastSeenLeader) / 1000 : 0;
  }

  private storeCallAttributes(operation: StoreOperation, outcome: StoreCallOutcome): Attributes {
    const key = `${operation}:${outcome}`;
    let attributes = this.storeAttributes.get(key);
    if (!attributes) {
      attributes = { store: this.storeName, operation, outcome };
      this.storeAttributes.set(key, attributes);
    }
    return attributes;
  }
}
