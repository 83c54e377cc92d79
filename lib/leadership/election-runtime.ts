import type { Logger } from '@nestjs/common';
import { defer, distinctUntilChanged, filter, map, merge, type Observable, Subject, startWith } from 'rxjs';
import type { ElectorHealth, LeadershipEvent } from '../election/elector.js';
import type { HandoverHooks, HandoverRequestOptions } from '../election/elector.types.js';
import type { ElectorTimings } from '../election/elector-options.js';
import type { Meter } from '../metrics/otel-api.js';
import { type Clock, systemClock } from '../shared/clock.js';
import type { HandoverRequest, LeaderStateEntry, LeaseMeta, LeaseStore } from '../stores/lease-store.js';
import type { ElectionHandle, LeaderElectionStatus, LeadershipTerm } from './election.handle.js';
import { drainingHandoverHooks } from './handover.hooks.js';
import { JobControl } from './jobs/job.control.js';
import type { LeaderElector } from './leader-elector.interface.js';
import { LeaderWork } from './leader-work.js';
import { leadershipMessages as messages } from './leadership.messages.js';
import { type LeadershipContext, TermContexts } from './leadership-context.js';
import type { LeadershipOptions } from './leadership-options.js';
import { runIfLeaderArguments } from './run-if-leader.js';
import type { SpreadMember } from './spread.balancer.js';
import { StepDownState } from './step-down.state.js';
import { StuckResignation } from './stuck.resignation.js';
import { waitForLeadership } from './wait-for-leadership.js';
import { WorkDrain } from './work.drain.js';

/** What a runtime needs from the service that owns it. */
export interface RuntimeContext {
  options: LeadershipOptions;
  logger: Pick<Logger, 'log' | 'warn' | 'error'>;
  /**
   * Times drains, stuck work and how long a lease was held without acting (a test's, e.g. the
   * simulation's fake clock). Default: the system clock, with a plain timer for the drain.
   */
  clock?: Clock;
  /** The module's store, where job control keeps its board and history; unset in the testing kit. */
  store?: LeaseStore;
}

/**
 * @internal One election of the application at run time: the {@link ElectionHandle} users get, plus
 * what the library itself drives — its elector, its leader-only work ({@link LeaderWork}: tracked,
 * counted, watched), the step-down rules ({@link StepDownState}), the drain ({@link WorkDrain}), the
 * elector's handover hooks, and the surface spread talks to ({@link SpreadMember}).
 */
export class ElectionRuntime implements ElectionHandle, SpreadMember {
  readonly isLeader$: Observable<boolean>;
  /** @internal */
  readonly elector: LeaderElector;
  /** @internal This election's leader-only work. */
  readonly work: LeaderWork;
  /** @internal This election's scheduled jobs and the leader's side of job control. */
  readonly jobs: JobControl;
  /**
   * @internal Counts changes of this instance's view of the election (elected, revoked, a new
   * leader, stepping down or back): a skipped `@LeaderOnly` handler logs once per change.
   */
  changes = 0;
  private readonly steppingDownChanges = new Subject<void>();
  private readonly stepDown: StepDownState;
  private readonly drains: WorkDrain;
  private readonly resignation: StuckResignation;
  /** @internal The module's clock (default: the system clock): the once-per-tick ledger reads it too. */
  readonly clock: Clock;
  private stopping?: Promise<void>;
  private readonly contexts = new TermContexts();
  /** @internal The elector's handover hooks: drain this election's work, as shutdown does, then go on. */
  readonly handoverHooks: Required<HandoverHooks>;

  constructor(
    private readonly context: RuntimeContext,
    createElector: (runtime: ElectionRuntime) => LeaderElector,
  ) {
    const { options, logger } = context;
    this.clock = context.clock ?? systemClock;
    this.stepDown = new StepDownState(this, () => this.notifySteppingDown());
    this.resignation = new StuckResignation(options.resignWhenStuck, this, this.stepDown, this.clock, logger);
    this.work = new LeaderWork(options.stuckAfterMs, (work) => this.resignation.onStuck(work), this.clock, this);
    this.drains = new WorkDrain(this.work, () => this.election, options.shutdownTimeoutMs, logger, context.clock);
    this.handoverHooks = drainingHandoverHooks({
      current: () => this.elector,
      stepDown: this.stepDown,
      drains: this.drains,
      clock: this.clock,
      flushJobs: () => this.jobs.beforeRelease(this.timings.renewIntervalMs),
    });
    this.elector = createElector(this);
    // First subscriber: what it changes is seen by every later one (isLeader$, the hooks).
    this.elector.events$.subscribe((event) => {
      if (event.type !== 'renewed') this.changes += 1;
      if (event.type === 'elected' || event.type === 'revoked') this.contexts.clear();
      if (event.type === 'revoked') this.stepDown.revoked(event.term);
      if (event.type === 'elected') this.resignation.onElected(this.work.oldestStuck());
    });
    this.jobs = new JobControl(this, context.store, logger, (rider) => this.elector.carry?.(rider));
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

  get election(): string {
    return this.elector.election;
  }

  get identity(): string {
    return this.elector.identity;
  }

  get leaderId(): string | undefined {
    return this.elector.leaderId;
  }

  get leaderAdvertise(): string | undefined {
    return this.elector.leaderMeta?.advertise;
  }

  get term(): number | undefined {
    return this.elector.term;
  }

  get signal(): AbortSignal {
    return this.elector.signal;
  }

  get events$(): Observable<LeadershipEvent> {
    return this.elector.events$;
  }

  get timings(): Readonly<ElectorTimings> {
    return this.elector.timings;
  }

  /** The one leadership answer of the app: the lease is ours (before its deadline) and we are not stepping down. */
  isLeader(): boolean {
    return this.elector.isLeader() && !this.stepDown.blocks();
  }

  get isSteppingDown(): boolean {
    return this.stepDown.isSteppingDown(this.elector.term);
  }

  async waitForLeadership(signal?: AbortSignal): Promise<LeadershipTerm> {
    const term = await waitForLeadership(this, signal);
    // Also the term's first job-board read: a job called right after this resolves runs at once.
    await this.jobs.ready().catch(() => undefined);
    return term;
  }

  runIfLeader<T>(fn: (term: LeadershipTerm) => T): T | undefined;
  runIfLeader<T, F>(fn: (term: LeadershipTerm) => T, otherwise: () => F): T | F;
  runIfLeader<T>(name: string, fn: (term: LeadershipTerm) => T): T | undefined;
  runIfLeader<T, F>(name: string, fn: (term: LeadershipTerm) => T, otherwise: () => F): T | F;
  runIfLeader(...args: unknown[]): unknown {
    const [handler, fn, otherwise] = runIfLeaderArguments(args);
    const term = this.term;
    if (!this.isLeader() || term === undefined) {
      this.work.countSkipped(handler);
      return otherwise?.();
    }
    const signal = this.signal;
    return this.work.run(handler, () => fn({ term, signal }));
  }

  /** @internal What `currentLeadership()` answers in this election's leader-only runs; undefined when not leading. */
  leadershipContext(): LeadershipContext | undefined {
    return this.context.options.leadershipContext === false ? undefined : this.contexts.of(this.elector);
  }

  readState<T = unknown>(key?: string): Promise<LeaderStateEntry<T> | undefined> {
    return this.elector.readState<T>(key);
  }

  writeState<T = unknown>(value: T, key?: string): Promise<void> {
    return this.elector.writeState<T>(value, key);
  }

  /** @internal The library's write of its `tick:` and `jobs:` keys (ledger, job history; refused by `writeState`). */
  writeTickRecord(value: unknown, key: string): Promise<void> {
    return this.elector.writeTickRecord(value, key);
  }

  /** @internal true when leader state works here, else the store's name (for a startup error). */
  leaderStateStore(): true | string {
    return this.elector.supportsState || (this.context.options.store?.name ?? 'the store');
  }

  resign(): Promise<void> {
    return this.elector.resign();
  }

  requestHandover(
    options: Omit<HandoverRequestOptions, 'requesterLeaderships'> = {},
  ): Promise<HandoverRequest | undefined> {
    return this.elector.requestHandover(options);
  }

  status(): LeaderElectionStatus {
    const status = this.elector.status();
    const isLeader = this.isLeader();
    const stepping = status.state !== 'stopped' && (this.isSteppingDown || (status.isLeader && !isLeader));
    return { ...status, isLeader, state: stepping ? 'stepping-down' : status.state, ...this.jobs.status() };
  }

  health(): ElectorHealth {
    const health = this.elector.health();
    if (!health.healthy) return health;
    const stuck = this.work.oldestStuck();
    if (stuck) {
      return { healthy: false, reason: messages.unhealthyStuck(stuck.handler, stuck.runningMs, stuck.stuckAfterMs) };
    }
    const { shutdownTimeoutMs } = this.context.options;
    const notActing = this.stepDown.notActing(
      this.isLeader(),
      this.clock.now(),
      shutdownTimeoutMs,
      this.timings.renewIntervalMs,
    );
    return notActing === undefined ? health : { healthy: false, reason: notActing };
  }

  // ---- Spread's surface (SpreadMember) --------------------------------------------------------

  /** @internal The elector holds the lease (before its deadline), stepping down or not. */
  holdsLease(): boolean {
    return this.elector.isLeader();
  }

  /** @internal */
  get supportsHandover(): boolean {
    return this.elector.supportsHandover;
  }

  /** @internal What the holder published with its lease (spread's leaderships, pinned). */
  get holderMeta(): LeaseMeta | undefined {
    return this.elector.leaderMeta;
  }

  /** @internal The number of elections this replica leads, published with our lease. */
  setLeaderships(count: number | undefined): void {
    this.elector.setLeaderships(count);
  }

  /** @internal Spread's request: the holder honours it only if it still leads `requesterLeaderships` + 2 or more. */
  requestSpreadHandover(options: HandoverRequestOptions): Promise<HandoverRequest | undefined> {
    return this.elector.requestHandover(options);
  }

  // ---- Lifecycle ------------------------------------------------------------------------------

  /** @internal For the metrics' stuck-work gauge. */
  stuckWorkMs(): ReadonlyMap<string, number> {
    return this.work.stuckWorkMs();
  }

  /** @internal Before the first acquire: metrics (when an SDK records), then the first attempt. */
  async start(meter: Meter | undefined): Promise<void> {
    if (meter) this.work.startMetrics(meter, this, this.context.options.store.name);
    await this.elector.start();
  }

  /** @internal Drain, then end the term and release: runs once. */
  stop(): Promise<void> {
    this.stopping ??= this.drainAndStop();
    return this.stopping;
  }

  /** @internal */
  closeMetrics(): void {
    this.work.closeMetrics();
  }

  private async drainAndStop(): Promise<void> {
    // 1. Stop starting leader-only work: new ticks are skipped, the guard answers 503.
    this.stepDown.shutdown(this.clock.now());
    // 2. Let running calls finish while the lease is still ours, up to shutdownTimeoutMs.
    const { shutdownTimeoutMs } = this.context.options;
    await this.drains.drain(messages.drainWaiting(this.election, this.drains.running, shutdownTimeoutMs));
    // The runs' last records, while the lease is still ours (bounded: the release does not wait long).
    const flushing = this.jobs.beforeRelease(this.timings.renewIntervalMs);
    if (flushing) await flushing;
    // 3. End the term (signal aborts), give what still runs a short grace to notice, then release.
    //    The elector bounds every store call itself, so this returns even if the store hangs.
    try {
      await this.elector.stop({ release: true, beforeRelease: () => this.drains.graceAfterAbort() });
    } finally {
      this.steppingDownChanges.complete();
    }
  }

  private notifySteppingDown(): void {
    this.changes += 1;
    this.steppingDownChanges.next();
  }
}
