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
import { ElectionHandle, type LeaderElectionStatus, type LeadershipTerm } from '../leadership/election.handle.js';
import type { ElectorFactory } from '../leadership/leader-elector.interface.js';
import { SpreadBalancer } from '../leadership/spread.balancer.js';
import { messages } from '../messages/leader-election.messages.js';
import { instrumentLeaseStore } from '../metrics/instrumented.store.js';
import { type Meter, resolveMetrics } from '../metrics/otel-api.js';
import { errorMessage } from '../shared/errors.js';
import type { HandoverRequest, LeaderStateEntry } from '../stores/lease-store.js';
import type {
  LeaderElectionModuleOptions,
  ResolvedLeaderElectionOptions,
} from './interfaces/leader-election-options.interface.js';
import { LEADER_ELECTION_ELECTOR_FACTORY, LOGGER_CONTEXT } from './leader-election.constants.js';
import { resolveModuleOptions } from './leader-election.options.js';
import { InjectLeaderElectionOptions } from './leader-election-options.decorator.js';

export type { LeaderElectionState, LeaderElectionStatus, LeadershipTerm } from '../leadership/election.handle.js';
export { ElectionHandle } from '../leadership/election.handle.js';

/** What {@link LeaderElectionService.requestHandover} asks. */
export interface HandoverRequestInput {
  /** The election to hand over (default: the default election). */
  election?: string;
  /** The identity that should lead next; without it, any other replica (force re-election). */
  to?: string;
  /** Logged by the leader that honours it. Default `operator`. */
  reason?: string;
}

/**
 * The application's view of its elections: inject it anywhere (the module is global by default).
 * Its own members act on the default election (the first configured); `election(name)` returns
 * the handle of any other. Starts every election during module init, drains and releases each on
 * shutdown.
 */
@Injectable()
export class LeaderElectionService implements OnModuleInit, OnModuleDestroy, OnApplicationShutdown {
  private readonly options: ResolvedLeaderElectionOptions;
  private readonly handles = new Map<string, ElectionHandle>();
  private readonly defaultHandle: ElectionHandle;
  private readonly logger = new Logger(LOGGER_CONTEXT);
  private readonly spread?: SpreadBalancer;
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
    for (const name of this.options.electionNames) this.handles.set(name, this.newHandle(name));
    this.defaultHandle = this.handles.get(this.options.electionNames[0] as string) as ElectionHandle;
    if (this.options.spread) this.spread = new SpreadBalancer(this.handles, this.logger);
  }

  /** The handle of election `name` (default: the default election). Throws for a name the app does not run. */
  election(name?: string): ElectionHandle {
    if (name === undefined) return this.defaultHandle;
    const handle = this.handles.get(name);
    if (!handle) throw new Error(messages.unknownElection('election()', name, [...this.handles.keys()]));
    return handle;
  }

  /** The names of every election this app runs, the default first. */
  get elections(): string[] {
    return [...this.handles.keys()];
  }

  /**
   * Adds an election at run time (per tenant, per shard): same timings and store as the others.
   * Resolves after its first acquire attempt when the app is running. Use
   * `election(name).runIfLeader(fn)` for work registered at run time.
   */
  async addElection(name: string): Promise<ElectionHandle> {
    if (this.handles.has(name)) throw new Error(messages.electionExists(name));
    const handle = this.newHandle(name);
    this.handles.set(name, handle);
    this.spread?.changed();
    if (this.started && !this.shuttingDown) await handle.start(this.meter);
    return handle;
  }

  /** Drains its work, releases its lease and forgets it. The default election cannot be removed. */
  async removeElection(name: string): Promise<void> {
    const handle = this.election(name);
    if (handle === this.defaultHandle) throw new Error(messages.removeDefaultElection(name));
    this.handles.delete(name);
    this.spread?.changed();
    await handle.stop();
    handle.closeMetrics();
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

  // ---- The default election ------------------------------------------------------------------

  /** Emits the current value on subscription, then every change; completes when the app shuts down. */
  get isLeader$(): Observable<boolean> {
    return this.defaultHandle.isLeader$;
  }

  get identity(): string {
    return this.defaultHandle.identity;
  }

  /** The current leader as last observed (ours while we hold the lease); undefined when unknown. */
  get leaderId(): string | undefined {
    return this.defaultHandle.leaderId;
  }

  /** Fencing token of our current term; undefined when not leading. */
  get term(): number | undefined {
    return this.defaultHandle.term;
  }

  /** Aborts the moment the current term ends; already aborted when not leading. */
  get signal(): AbortSignal {
    return this.defaultHandle.signal;
  }

  get events$(): Observable<LeadershipEvent> {
    return this.defaultHandle.events$;
  }

  get timings(): Readonly<ElectorTimings> {
    return this.defaultHandle.timings;
  }

  /** True while this instance holds the lease (before its deadline) and is not stepping down. */
  isLeader(): boolean {
    return this.defaultHandle.isLeader();
  }

  /** True from the start of shutdown: no new leader-only work starts. */
  get isSteppingDown(): boolean {
    return this.defaultHandle.isSteppingDown;
  }

  /**
   * Resolves with the term once this instance leads (at once if it does). Rejects with the
   * signal's reason when `signal` aborts, or when the app shuts down first.
   */
  waitForLeadership(signal?: AbortSignal): Promise<LeadershipTerm> {
    return this.defaultHandle.waitForLeadership(signal);
  }

  /**
   * Runs `call` if this instance leads right now, and counts it until it settles, so shutdown
   * waits for it before releasing the lease; otherwise returns `otherwise()` (default: undefined).
   * What `@LeaderOnly()` does, for code that cannot carry a decorator (a queue consumer callback).
   * A leading `name` labels its metrics and stuck-work reports (default `'runLeaderOnly'`).
   */
  runLeaderOnly<T>(call: () => T): T | undefined;
  runLeaderOnly<T, F>(call: () => T, otherwise: () => F): T | F;
  runLeaderOnly<T>(name: string, call: () => T): T | undefined;
  runLeaderOnly<T, F>(name: string, call: () => T, otherwise: () => F): T | F;
  runLeaderOnly<T, F>(...args: [string | (() => T), ((() => T) | (() => F))?, (() => F)?]): T | F | undefined {
    return Reflect.apply(this.defaultHandle.runLeaderOnly, this.defaultHandle, args) as T | F | undefined;
  }

  /** Runs `fn` with the term's `{ term, signal }` while leading the default election (see {@link ElectionHandle.runIfLeader}). */
  runIfLeader<T>(fn: (term: LeadershipTerm) => T): T | undefined;
  runIfLeader<T>(name: string, fn: (term: LeadershipTerm) => T): T | undefined;
  runIfLeader<T>(...args: [string | ((term: LeadershipTerm) => T), ((term: LeadershipTerm) => T)?]): T | undefined {
    return Reflect.apply(this.defaultHandle.runIfLeader, this.defaultHandle, args) as T | undefined;
  }

  /**
   * Leader state: the value last written under `key` (default `'state'`) by any leader, with the
   * term that wrote it; undefined when never written. Any replica may read.
   */
  readState<T = unknown>(key?: string): Promise<LeaderStateEntry<T> | undefined> {
    return this.defaultHandle.readState<T>(key);
  }

  /**
   * Writes leader state (JSON-serialisable, up to the store's limit, at least 64 KiB), fenced by the
   * store: accepted only while this instance's lease is the current one there, so a leader resumed
   * after a pause can never overwrite a newer leader's value. On a non-leader it rejects at once
   * with `LeaseLostError`. Still allowed while stepping down (the lease is ours until released), so
   * draining work can save its checkpoint. Keys starting with `tick:` belong to `once: 'per-tick'`
   * and reject with a `TypeError`.
   */
  writeState<T = unknown>(value: T, key?: string): Promise<void> {
    return this.defaultHandle.writeState<T>(value, key);
  }

  /** Give up leadership now (the term's signal aborts) and sit out one round so another instance wins. */
  resign(): Promise<void> {
    return this.defaultHandle.resign();
  }

  status(): LeaderElectionStatus {
    return this.defaultHandle.status();
  }

  /** The status of every election, the default first. */
  statuses(): LeaderElectionStatus[] {
    return [...this.handles.values()].map((handle) => handle.status());
  }

  /**
   * Unhealthy when any election's store refuses us, fails past the renew deadline, or is not
   * running; with `stuckAfterMs`, also while leader work has run longer than that (named in
   * `reason`, with its election when there are several).
   */
  health(): ElectorHealth {
    const several = this.handles.size > 1;
    for (const handle of this.handles.values()) {
      const health = handle.health();
      if (!health.healthy) return several ? { healthy: false, reason: `${handle.election}: ${health.reason}` } : health;
    }
    return { healthy: true };
  }

  async onModuleInit(): Promise<void> {
    // Before the first acquire, so that it is timed and every counter reads 0 from the first scrape.
    const { meter, wiring } = await resolveMetrics();
    this.meter = meter;
    // Said once: a provider registered too late (after NestFactory.create) otherwise fails silently.
    this.logger.log(messages.metricsWiring(wiring));
    this.started = true;
    // The first acquire attempts complete here, before @nestjs/schedule mounts its timers in
    // onApplicationBootstrap: an elected instance's @Timeout jobs then run instead of being skipped.
    await Promise.all([...this.handles.values()].map((handle) => handle.start(this.meter)));
    this.spread?.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.shutdown();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.shutdown();
    for (const handle of this.handles.values()) handle.closeMetrics();
    if (!this.options.closeStoreOnShutdown || this.storeClosed) return;
    this.storeClosed = true;
    const { store } = this.options;
    try {
      await store.close?.();
    } catch (error) {
      this.logger.warn(messages.storeCloseFailed(this.defaultHandle.election, store.name, errorMessage(error)));
    }
  }

  /** Drain, then end every term and release: runs once, whichever hook gets here first. */
  private shutdown(): Promise<void> {
    this.shuttingDown ??= (async () => {
      this.spread?.stop();
      await Promise.all([...this.handles.values()].map((handle) => handle.stop()));
    })();
    return this.shuttingDown;
  }

  private newHandle(election: string): ElectionHandle {
    const {
      shutdownTimeoutMs,
      closeStoreOnShutdown,
      guard,
      stuckAfterMs,
      resignWhenStuck,
      elections,
      electionNames,
      spread,
      ...electorOptions
    } = this.options;
    const logger = this.logger;
    return new ElectionHandle({ options: this.options, logger }, (handle) =>
      this.createElector({
        ...electorOptions,
        election,
        // Timed for the metrics by a pass-through view of the store: the elector never knows.
        store: instrumentLeaseStore(this.options.store, handle.storeCalls),
        handover: handle.handoverHooks,
        logger: {
          log: (message) => logger.log(message),
          warn: (message) => logger.warn(message),
          error: (message) => logger.error(message),
          debug: (message) => logger.debug(message),
        },
      }),
    );
  }
}
