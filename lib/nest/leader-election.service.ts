import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import type { Observable } from 'rxjs';
import { Elector, type ElectorHealth, type LeadershipEvent } from '../election/elector.js';
import type { ElectorTimings } from '../election/elector-options.js';
import type { ElectionHandle, LeaderElectionStatus, LeadershipTerm } from '../leadership/election.handle.js';
import { ElectionRegistry } from '../leadership/election.registry.js';
import { JobOperations } from '../leadership/jobs/job.operations.js';
import type { JobCommandOptions, JobInfo, JobRun } from '../leadership/jobs/job.types.js';
import type { ElectorFactory } from '../leadership/leader-elector.interface.js';
import { SpreadBalancer } from '../leadership/spread.balancer.js';
import { type Meter, resolveMetrics } from '../metrics/otel-api.js';
import { systemClock } from '../shared/clock.js';
import { errorMessage } from '../shared/errors.js';
import type { HandoverRequest, LeaderStateEntry } from '../stores/lease-store.js';
import { createElectionRuntime } from './election-runtime.factory.js';
import type { HandoverRequestInput } from './interfaces/handover-request-input.interface.js';
import type {
  LeaderElectionModuleOptions,
  ResolvedLeaderElectionOptions,
} from './interfaces/leader-election-options.interface.js';
import { LEADER_ELECTION_ELECTOR_FACTORY, LOGGER_CONTEXT } from './leader-election.constants.js';
import { resolveModuleOptions } from './leader-election.options.js';
import { InjectLeaderElectionOptions } from './leader-election-options.decorator.js';
import { nestMessages as messages } from './nest.messages.js';

/**
 * The application's view of its elections: inject it anywhere (the module is global by default).
 * Its own members act on the default election (the first configured); `election(name)` returns
 * the handle of any other. Starts every election during module init, drains and releases each on
 * shutdown.
 */
@Injectable()
export class LeaderElectionService implements OnModuleInit, OnModuleDestroy, OnApplicationShutdown {
  private readonly options: ResolvedLeaderElectionOptions;
  /** @internal Every election's runtime: what the explorer binds `@LeaderOnly` calls to. */
  readonly runtimes = new ElectionRegistry();
  private readonly logger = new Logger(LOGGER_CONTEXT);
  private readonly spread?: SpreadBalancer;
  private readonly jobControl: JobOperations;
  private meter?: Meter;
  private started = false;
  private shuttingDown?: Promise<void>;
  private storeClosed = false;

  constructor(
    @InjectLeaderElectionOptions() options: LeaderElectionModuleOptions,
    // The testing kit's seam; production leaves it unset.
    @Optional()
    @Inject(LEADER_ELECTION_ELECTOR_FACTORY)
    private readonly createElector: ElectorFactory = (o) => new Elector(o),
  ) {
    // Validation throws here, during DI, so `compile()`/`init()` rejects naming the option.
    this.options = resolveModuleOptions(options);
    for (const name of this.options.electionNames)
      this.runtimes.add(name, createElectionRuntime(name, this.options, this.logger, this.createElector));
    // Always: besides spread, it asks for the preferred leader (`priority`).
    this.spread = new SpreadBalancer(this.runtimes.all, this.logger, this.options.clock, this.options);
    this.jobControl = new JobOperations(this.runtimes, this.options.clock ?? systemClock);
  }

  /** The handle of election `name` (default: the default election). Throws for a name the app does not run. */
  election(name?: string): ElectionHandle {
    return this.runtimes.get(name);
  }

  /** The names of every election this app runs, the default first. */
  get elections(): string[] {
    return this.runtimes.names;
  }

  /**
   * Adds an election at run time (per tenant, per shard): same timings and store as the others.
   * Resolves after its first acquire attempt when the app is running. Use
   * `election(name).runIfLeader(fn)` for work registered at run time.
   */
  async addElection(name: string): Promise<ElectionHandle> {
    if (this.runtimes.has(name)) throw new Error(messages.electionExists(name));
    const runtime = createElectionRuntime(name, this.options, this.logger, this.createElector);
    this.runtimes.add(name, runtime);
    this.spread?.changed();
    if (this.started && !this.shuttingDown) await runtime.start(this.meter);
    return runtime;
  }

  /** Drains its work, releases its lease and forgets it. The default election cannot be removed. */
  async removeElection(name: string): Promise<void> {
    const runtime = this.runtimes.get(name);
    if (runtime === this.runtimes.default) throw new Error(messages.removeDefaultElection(name));
    this.runtimes.delete(name);
    this.spread?.changed();
    await runtime.stop();
    runtime.closeMetrics();
  }

  /**
   * Asks the current leader of an election — on whichever replica it runs — to drain its leader-only
   * work for that election, release, and let `to` (or, without it, any other replica) lead. Resolves
   * with the request once it is recorded in the store, or with undefined when the store shows `to`
   * already leading (nothing to hand over); rejects when nobody leads it. Callable on any replica:
   * the store decides, not this replica's view of the leader, which may lag.
   */
  requestHandover(request: HandoverRequestInput = {}): Promise<HandoverRequest | undefined> {
    const { election, ...options } = request;
    return this.election(election).requestHandover(options);
  }

  // ---- Job control (issue 28), from any replica: docs/guides/operating-jobs.md ------------------

  /** Every scheduled `@LeaderOnly` job (of `election`, default: all) with its pause, next and last run. */
  jobs(election?: string): Promise<JobInfo[]> {
    return this.jobControl.jobs(election);
  }

  /** Pauses job `name` on the store's job board, across failovers; rejects with `UnknownJobError` if unknown here. */
  pauseJob(name: string, options?: JobCommandOptions & { reason?: string }): Promise<void> {
    return this.jobControl.pauseJob(name, options);
  }

  /** Lifts the pause of job `name`, as {@link pauseJob} records it. */
  resumeJob(name: string, options?: JobCommandOptions): Promise<void> {
    return this.jobControl.resumeJob(name, options);
  }

  /** Has the leader run job `name` once, now, even while paused; resolves with the command's id (the run's `commandId`). */
  runJobNow(name: string, options?: JobCommandOptions): Promise<string> {
    return this.jobControl.runJobNow(name, options);
  }

  /** The last runs (at most 20, newest first) of job `name`, as the leaders that ran them recorded them. */
  jobHistory(name: string, options?: Omit<JobCommandOptions, 'by'>): Promise<JobRun[]> {
    return this.jobControl.jobHistory(name, options);
  }

  // ---- The default election (each member as documented on ElectionHandle) ----------------------

  /** Emits the current value on subscription, then every change; completes when the app shuts down. */
  get isLeader$(): Observable<boolean> {
    return this.runtimes.default.isLeader$;
  }

  /** This replica's identity, stored as the lease holder while it leads. */
  get identity(): string {
    return this.runtimes.default.identity;
  }

  /** The current leader as last observed (ours while we hold the lease); undefined when unknown. */
  get leaderId(): string | undefined {
    return this.runtimes.default.leaderId;
  }

  /** Fencing token of our current term; undefined when not leading. */
  get term(): number | undefined {
    return this.runtimes.default.term;
  }

  /** Aborts the moment the current term ends; already aborted when not leading. */
  get signal(): AbortSignal {
    return this.runtimes.default.signal;
  }

  /** Every leadership change (and each renewal) as it happens; hot, no replay. */
  get events$(): Observable<LeadershipEvent> {
    return this.runtimes.default.events$;
  }

  /** The timings in force: the defaults with the module's options applied. */
  get timings(): Readonly<ElectorTimings> {
    return this.runtimes.default.timings;
  }

  /** True while this replica holds the lease (before its deadline) and is not stepping down. */
  isLeader(): boolean {
    return this.runtimes.default.isLeader();
  }

  /** True from the start of shutdown: no new leader-only work starts. */
  get isSteppingDown(): boolean {
    return this.runtimes.default.isSteppingDown;
  }

  /**
   * Resolves with the term once this replica leads (at once if it does). Rejects with the signal's
   * reason when `signal` aborts, or when the app shuts down first.
   */
  waitForLeadership(signal?: AbortSignal): Promise<LeadershipTerm> {
    return this.runtimes.default.waitForLeadership(signal);
  }

  /**
   * Runs `fn({ term, signal })` if this instance leads the default election right now (tracked for
   * the drain), else returns `otherwise()` (default: undefined): see {@link ElectionHandle.runIfLeader}.
   */
  runIfLeader<T>(fn: (term: LeadershipTerm) => T): T | undefined;
  runIfLeader<T, F>(fn: (term: LeadershipTerm) => T, otherwise: () => F): T | F;
  runIfLeader<T>(name: string, fn: (term: LeadershipTerm) => T): T | undefined;
  runIfLeader<T, F>(name: string, fn: (term: LeadershipTerm) => T, otherwise: () => F): T | F;
  runIfLeader(...args: unknown[]): unknown {
    const runtime = this.runtimes.default;
    return Reflect.apply(runtime.runIfLeader, runtime, args);
  }

  /**
   * Leader state: the value last written under `key` (default `'state'`) by any leader, with the
   * term that wrote it; undefined when never written. Any replica may read.
   */
  readState<T = unknown>(key?: string): Promise<LeaderStateEntry<T> | undefined> {
    return this.runtimes.default.readState<T>(key);
  }

  /**
   * Writes leader state, fenced by the store: accepted only while our lease is the current one
   * there; rejects with `LeaseLostError` when not leading. See {@link ElectionHandle.writeState}.
   */
  writeState<T = unknown>(value: T, key?: string): Promise<void> {
    return this.runtimes.default.writeState<T>(value, key);
  }

  /** Give up leadership now (the term's signal aborts) and sit out one round so another replica wins. */
  resign(): Promise<void> {
    return this.runtimes.default.resign();
  }

  /** A JSON-able snapshot of the default election; `state` is `stepping-down` while draining. */
  status(): LeaderElectionStatus {
    return this.runtimes.default.status();
  }

  /** The status of every election, the default first. */
  statuses(): LeaderElectionStatus[] {
    return [...this.runtimes.values()].map((handle) => handle.status());
  }

  /**
   * Unhealthy when any election's store refuses us, fails past the renew deadline, or is not
   * running; with `stuckAfterMs`, also while leader work has run longer than that (named in
   * `reason`, with its election when there are several).
   */
  health(): ElectorHealth {
    const several = this.runtimes.size > 1;
    for (const handle of this.runtimes.values()) {
      const health = handle.health();
      if (!health.healthy) return several ? { healthy: false, reason: `${handle.election}: ${health.reason}` } : health;
    }
    return { healthy: true };
  }

  /** Nest lifecycle: starts every election (the first acquire attempts complete before bootstrap). */
  async onModuleInit(): Promise<void> {
    // Before the first acquire, so that it is timed and every counter reads 0 from the first scrape.
    const { meter, wiring } = await resolveMetrics();
    this.meter = meter;
    // Said once: a provider registered too late (after NestFactory.create) otherwise fails silently.
    this.logger.log(messages.metricsWiring(wiring));
    this.started = true;
    // The first acquire attempts complete here, before @nestjs/schedule mounts its timers in
    // onApplicationBootstrap: an elected instance's @Timeout jobs then run instead of being skipped.
    await Promise.all([...this.runtimes.values()].map((handle) => handle.start(this.meter)));
    this.spread?.start();
  }

  /** Nest lifecycle: drains leader-only work, then ends every term and releases the leases. */
  async onModuleDestroy(): Promise<void> {
    await this.shutdown();
  }

  /**
   * Nest lifecycle: the same drain and release (whichever hook comes first runs it), then closes the
   * store if `closeStoreOnShutdown` says so.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.shutdown();
    for (const handle of this.runtimes.values()) handle.closeMetrics();
    if (!this.options.closeStoreOnShutdown || this.storeClosed) return;
    this.storeClosed = true;
    const { store } = this.options;
    try {
      await store.close?.();
    } catch (error) {
      this.logger.warn(messages.storeCloseFailed(this.runtimes.default.election, store.name, errorMessage(error)));
    }
  }

  /** Drain, then end every term and release: runs once, whichever hook gets here first. */
  private shutdown(): Promise<void> {
    this.shuttingDown ??= (async () => {
      this.spread?.stop();
      await Promise.all([...this.runtimes.values()].map((handle) => handle.stop()));
    })();
    return this.shuttingDown;
  }
}
