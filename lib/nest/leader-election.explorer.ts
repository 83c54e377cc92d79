import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { filter, type Subscription } from 'rxjs';
import type { LeadershipEvent } from '../election/elector.js';
import { type CronMetadata, SCHEDULE_CRON_OPTIONS } from '../leadership/cron-schedule.js';
import type { ElectionHandle } from '../leadership/election.handle.js';
import { isPromiseLike } from '../leadership/in-flight.tracker.js';
import { type TickJob, TickLedger, tickJobName } from '../leadership/tick.ledger.js';
import { messages } from '../messages/leader-election.messages.js';
import { errorMessage } from '../shared/errors.js';
import {
  bindingOf,
  type LeaderOnlyBinding,
  type LeaderOnlyDeclaration,
  type LeaderOnlySite,
  type LeaderOnlyTick,
} from './decorators/leader-only.decorator.js';
import type { LeadershipHookDeclaration, LeadershipHookKind } from './decorators/leadership-hooks.decorator.js';
import {
  LEADER_ELECTION_BINDING,
  LEADER_ONLY_METADATA,
  LEADER_ONLY_OPTIONS_METADATA,
  LEADERSHIP_HOOKS_METADATA,
  LOGGER_CONTEXT,
} from './leader-election.constants.js';
import { LeaderElectionService } from './leader-election.service.js';
import { LeaderOnlyGuard } from './leader-only.guard.js';

const HOOK_NAMES: Record<LeadershipHookKind, string> = {
  elected: 'OnElected',
  revoked: 'OnRevoked',
  'leader-changed': 'OnLeaderChanged',
};

/** A `missed: 'catch-up'` job: what a new leader runs for the most recent missed tick. */
interface CatchUpJob {
  handle: ElectionHandle;
  job: TickJob;
  run: () => unknown;
}

interface Hook {
  kind: LeadershipHookKind;
  handle: ElectionHandle;
  label: string;
  instance: Record<string, unknown>;
  method: string;
}

/**
 * Wires this application's providers and controllers to its election at startup:
 * marks each instance that has `@LeaderOnly` methods with this app's binding, and collects the
 * `@OnElected` / `@OnRevoked` / `@OnLeaderChanged` handlers.
 */
@Injectable()
export class LeaderElectionExplorer implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(LOGGER_CONTEXT);
  private readonly binding: LeaderOnlyBinding;
  private readonly hooks: Hook[] = [];
  /** Instances already explored or adopted: each is scanned once. */
  private readonly known = new WeakSet<object>();
  private bootstrapped = false;
  /** Per election: the subscription that dispatches its hooks. */
  private readonly subscriptions = new Map<ElectionHandle, Subscription>();
  /** Per election: its once-per-tick records (leader state of that election). */
  private readonly ledgers = new Map<ElectionHandle, TickLedger>();
  /**
   * Once-per-tick jobs by the decorated method's site (one per method, whatever its instances),
   * never by label: two classes of one name are two jobs, and two jobs of one key fail startup.
   */
  private readonly tickJobs = new Map<LeaderOnlyTick, TickJob>();
  private readonly catchUps: CatchUpJob[] = [];
  private readonly electedSubscriptions: Subscription[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly election: LeaderElectionService,
    guard: LeaderOnlyGuard,
  ) {
    // The election's handle decides and counts; a route reached without the guard's consent throws its 503.
    this.binding = {
      invoke: (site, method, self, args) => {
        const handle = election.election(site.election);
        if (!handle.isLeader()) return this.skip(handle, site, guard);
        const { tick } = site;
        if (!tick) return handle.runLeadingCall(site.label, method, self, args);
        const call = () => Reflect.apply(method, self, args);
        return handle.runLeading(site.label, async () => this.ledger(handle).runTick(this.tickJob(handle, tick), call));
      },
    };
  }

  /**
   * A call made while not leading: counted, refused with a 503 on a route, otherwise skipped and
   * logged at debug level once per change of the election's state. A follower skips every tick:
   * repeats are counted, not logged, so the hot path does not even ask Nest's logger (whose
   * level check scans its level list: half a skip's cost on some hosts).
   */
  private skip(handle: ElectionHandle, site: LeaderOnlySite, guard: LeaderOnlyGuard): unknown {
    handle.countSkipped(site.label);
    if (site.isRoute()) throw guard.notLeaderException(handle);
    if (site.skipLoggedFor !== handle || site.skipLoggedAt !== handle.changes) {
      site.skipLoggedFor = handle;
      site.skipLoggedAt = handle.changes;
      if (debugLogging()) {
        this.logger.debug(messages.jobSkipped(site.label, handle.election, handle.isSteppingDown));
      }
    }
    return site.isAsync || site.tick ? Promise.resolve(undefined) : undefined;
  }

  /** The once-per-tick records of `handle`'s election, made at first use. */
  private ledger(handle: ElectionHandle): TickLedger {
    let ledger = this.ledgers.get(handle);
    if (!ledger) {
      ledger = new TickLedger(
        handle,
        {
          log: (message) => this.logger.log(message),
          warn: (message) => this.logger.warn(message),
          debug: (message) => this.logger.debug(message),
        },
        Date.now,
        { ticksLost: (job, count) => handle.countTicksLost(job.label, count) },
      );
      this.ledgers.set(handle, ledger);
    }
    return ledger;
  }

  onModuleInit(): void {
    this.explore();
  }

  onApplicationBootstrap(): void {
    this.bootstrapped = true;
    if (this.hooks.length > 0) this.listen(this.hooks);
    for (const handle of new Set(this.catchUps.map((catchUp) => catchUp.handle))) {
      this.electedSubscriptions.push(
        handle.events$.pipe(filter((event) => event.type === 'elected')).subscribe(() => this.catchUp(handle)),
      );
      // Elected during module init, before this subscription: that election counts too.
      if (handle.isLeader()) this.catchUp(handle);
    }
  }

  onApplicationShutdown(): void {
    for (const subscription of this.subscriptions.values()) subscription.unsubscribe();
    for (const subscription of this.electedSubscriptions) subscription.unsubscribe();
  }

  /**
   * @internal Adopts an instance Nest does not manage (the testing kit's `bind()`): its
   * `@LeaderOnly` methods ask this app's election and its hooks are called from now on, as for a
   * provider. False when another application has it.
   */
  adopt(instance: object): boolean {
    if (this.known.has(instance)) return bindingOf(instance) === this.binding;
    const { hooks } = this.scan(instance, instance.constructor?.name ?? 'anonymous');
    if (!this.bind(instance)) return false;
    this.known.add(instance);
    this.hooks.push(...hooks);
    if (this.bootstrapped && hooks.length > 0) this.listen(hooks);
    return true;
  }

  private explore(): void {
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      const { instance } = wrapper;
      if (!instance || typeof instance !== 'object' || this.known.has(instance)) continue;
      this.known.add(instance);
      const owner = instance.constructor?.name ?? String(wrapper.name);
      const { labels, hasLeaderOnly, hooks } = this.scan(instance, owner, wrapper.host?.name);
      if (!wrapper.isDependencyTreeStatic()) {
        // Nest creates these per request/consumer: there is no single instance to mark or call.
        for (const label of labels) this.logger.warn(messages.nonStaticProvider(label));
        continue;
      }
      this.hooks.push(...hooks);
      if (hasLeaderOnly && !this.bind(instance)) this.logger.warn(messages.boundElsewhere(String(wrapper.name)));
    }
  }

  /** The `@LeaderOnly` and leadership-hook methods of `instance`, provided by `module` (if known). */
  private scan(
    instance: object,
    owner: string,
    module?: string,
  ): { labels: string[]; hasLeaderOnly: boolean; hooks: Hook[] } {
    const found = { labels: [] as string[], hasLeaderOnly: false, hooks: [] as Hook[] };
    const prototype = Object.getPrototypeOf(instance);
    if (!prototype) return found;
    for (const method of this.scanner.getAllMethodNames(prototype)) {
      const fn: unknown = (instance as Record<string, unknown>)[method];
      if (typeof fn !== 'function') continue;
      const leaderOnly = Reflect.getMetadata(LEADER_ONLY_METADATA, fn) === true;
      const hooks: LeadershipHookDeclaration[] = Reflect.getMetadata(LEADERSHIP_HOOKS_METADATA, fn) ?? [];
      if (!leaderOnly && hooks.length === 0) continue;
      const label = `${owner}.${method}`;
      found.labels.push(label);
      found.hasLeaderOnly ||= leaderOnly;
      if (leaderOnly) this.checkDeclaration(fn, instance, messages.tickJobOwner(label, owner, module));
      for (const { kind, election, stuckAfterMs } of hooks) {
        const handle = this.handleFor(`@${HOOK_NAMES[kind]}() on ${label}`, election);
        // Only @OnElected handlers run for a term, so only they can be stuck.
        if (kind === 'elected') handle.watchStuck(label, stuckAfterMs);
        found.hooks.push({ kind, handle, label, instance: instance as Record<string, unknown>, method });
      }
    }
    return found;
  }

  /**
   * Startup checks of a `@LeaderOnly` method's options (every decorator has run by now), so a
   * mistake fails `init()` naming the method; registers a once-per-tick job in its election's
   * ledger (a second job of the same key fails, naming both providers) and its catch-up.
   */
  private checkDeclaration(fn: object, instance: object, owner: string): void {
    const declared: LeaderOnlyDeclaration | undefined = Reflect.getMetadata(LEADER_ONLY_OPTIONS_METADATA, fn);
    if (!declared) return;
    const { label, options, original, tick } = declared;
    const handle = this.handleFor(`@LeaderOnly() on ${label}`, options.election);
    handle.declareLeaderOnly(label);
    handle.watchStuck(label, options.stuckAfterMs);
    if (options.once !== 'per-tick') return;
    const cron: CronMetadata | undefined = Reflect.getMetadata(SCHEDULE_CRON_OPTIONS, fn);
    if (!cron) throw new Error(messages.perTickWithoutCron(label));
    const store = handle.leaderStateStore();
    if (store !== true) throw new Error(messages.perTickNeedsState(label, store));
    // Another instance of the same class: the same job, registered once.
    if (!tick || this.tickJobs.has(tick)) return;
    const job: TickJob = { job: tickJobName(cron, label), label, cron };
    this.ledger(handle).register(job, owner);
    this.tickJobs.set(tick, job);
    if (options.missed === 'catch-up') this.catchUps.push({ handle, job, run: () => original.call(instance) });
  }

  /** The handle of `election` (default: the default election); an unknown name fails startup naming `where`. */
  private handleFor(where: string, election: string | undefined): ElectionHandle {
    if (election !== undefined && !this.election.elections.includes(election)) {
      throw new Error(messages.unknownElection(where, election, this.election.elections));
    }
    return this.election.election(election);
  }

  /**
   * The job of a once-per-tick call, registered at startup. A method bound without its startup
   * check gets one at its first run, registered then (a clash fails that run).
   */
  private tickJob(handle: ElectionHandle, tick: LeaderOnlyTick): TickJob {
    let job = this.tickJobs.get(tick);
    if (!job) {
      const cron = tick.cron();
      if (!cron) throw new Error(messages.perTickWithoutCron(tick.label));
      job = { job: tickJobName(cron, tick.label), label: tick.label, cron };
      this.ledger(handle).register(job, tick.label);
      this.tickJobs.set(tick, job);
    }
    return job;
  }

  /** A new term: each catch-up job of the election runs its most recent missed tick, tracked like any leader-only call. */
  private catchUp(elected: ElectionHandle): void {
    for (const { handle, job, run } of this.catchUps) {
      if (handle !== elected) continue;
      const started = handle.runHandler(job.label, () => this.ledger(handle).catchUp(job, run));
      Promise.resolve(started).catch((error: unknown) =>
        this.logger.error(messages.tickCatchUpFailed(job.job, errorMessage(error))),
      );
    }
  }

  /** Marks `instance` as this application's; false when another app has it. */
  private bind(instance: object): boolean {
    const existing = bindingOf(instance);
    if (existing) return existing === this.binding;
    // Own, non-enumerable, per instance: the prototype (shared by every app) is never touched.
    Object.defineProperty(instance, LEADER_ELECTION_BINDING, { value: this.binding, configurable: true });
    return true;
  }

  /**
   * Starts calling `hooks`, beginning with the current state, summed up. At bootstrap that is what
   * happened during module init, now that every provider is initialised. Same synchronous turn as
   * the subscription: nothing lost or doubled.
   */
  private listen(hooks: readonly Hook[]): void {
    for (const handle of new Set(hooks.map((hook) => hook.handle))) {
      if (!this.subscriptions.has(handle)) {
        this.subscriptions.set(
          handle,
          handle.events$.subscribe((event) => this.dispatch(handle, event)),
        );
      }
      const leaderId = handle.leaderId;
      if (leaderId !== undefined) this.dispatch(handle, { type: 'leader-changed', leaderId }, hooks);
      if (handle.isLeader()) this.dispatch(handle, { type: 'elected', term: handle.term }, hooks);
    }
  }

  private dispatch(handle: ElectionHandle, event: LeadershipEvent, hooks: readonly Hook[] = this.hooks): void {
    for (const hook of hooks) {
      if (hook.kind !== event.type || hook.handle !== handle) continue;
      let argument: unknown;
      if (event.type === 'elected') {
        const term = event.term ?? handle.term;
        if (term === undefined) continue;
        argument = { term, signal: handle.signal };
      } else if (event.type === 'revoked') {
        argument = { term: event.term, reason: event.reason };
      } else {
        argument = { leaderId: event.leaderId };
      }
      this.call(hook, argument);
    }
  }

  /** Handlers never break the elector: sync throws and rejections are logged, nothing propagates. */
  private call(hook: Hook, argument: unknown): void {
    const fail = (error: unknown) =>
      this.logger.error(messages.hookFailed(hook.label, HOOK_NAMES[hook.kind], error), (error as Error)?.stack);
    try {
      hook.handle.trackHook(
        () => {
          const result = (hook.instance[hook.method] as (arg: unknown) => unknown).call(hook.instance, argument);
          return isPromiseLike(result) ? Promise.resolve(result).catch(fail) : result;
        },
        hook.kind === 'elected' ? hook.label : undefined,
      );
    } catch (error) {
      fail(error);
    }
  }
}

/**
 * Whether Nest may print a debug line. Nest 12's `Logger.isLevelEnabled` answers for the active
 * logger; Nest 11's answers false whenever no levels were set explicitly, although every level is
 * then on. So without explicit levels the line is formatted, and Nest drops it if its logger does.
 */
function debugLogging(): boolean {
  return Logger.isLevelEnabled('debug') || (Logger as unknown as { logLevels?: unknown }).logLevels === undefined;
}
