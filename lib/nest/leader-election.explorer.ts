import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { Subscription } from 'rxjs';
import type { LeadershipEvent } from '../election/elector.js';
import { type CronMetadata, SCHEDULE_CRON_OPTIONS } from '../leadership/cron-schedule.js';
import type { ElectionRuntime } from '../leadership/election-runtime.js';
import { isPromiseLike } from '../leadership/in-flight.tracker.js';
import { scheduledJobOf } from '../leadership/jobs/job.definition.js';
import { LeaderOnlyRunner } from '../leadership/leader-only.runner.js';
import { leadershipMessages } from '../leadership/leadership.messages.js';
import { OncePerTickRunner } from '../leadership/once-per-tick.runner.js';
import { bindingOf, type LeaderOnlyDeclaration } from './decorators/leader-only.decorator.js';
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
import { nestMessages } from './nest.messages.js';

const HOOK_NAMES: Record<LeadershipHookKind, string> = {
  elected: 'OnElected',
  revoked: 'OnRevoked',
  'leader-changed': 'OnLeaderChanged',
};

interface Hook {
  kind: LeadershipHookKind;
  handle: ElectionRuntime;
  label: string;
  instance: Record<string, unknown>;
  method: string;
}

/**
 * Wires this application's providers and controllers to its elections at startup, as
 * @nestjs/schedule's explorer does: finds the `@LeaderOnly` methods (checks their options, registers
 * once-per-tick jobs) and marks each instance that has one with this app's binding, the
 * {@link LeaderOnlyRunner} that decides every call; collects the `@OnElected` / `@OnRevoked` /
 * `@OnLeaderChanged` handlers and calls them on their election's events.
 */
@Injectable()
export class LeaderElectionExplorer implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(LOGGER_CONTEXT);
  private readonly binding: LeaderOnlyRunner;
  private readonly ticks: OncePerTickRunner;
  private readonly hooks: Hook[] = [];
  /** Instances already explored or adopted: each is scanned once. */
  private readonly known = new WeakSet<object>();
  private bootstrapped = false;
  /** Per election: the subscription that dispatches its hooks. */
  private readonly subscriptions = new Map<ElectionRuntime, Subscription>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly election: LeaderElectionService,
    guard: LeaderOnlyGuard,
  ) {
    const { logger } = this;
    this.ticks = new OncePerTickRunner({
      log: (message) => logger.log(message),
      warn: (message) => logger.warn(message),
      debug: (message) => logger.debug(message),
      error: (message) => logger.error(message),
    });
    // A route reached without the guard's consent (leadership ended between them) throws its 503.
    this.binding = new LeaderOnlyRunner(election.runtimes, this.ticks, (handle) => guard.notLeaderException(handle), {
      debugEnabled: debugLogging,
      debug: (message) => logger.debug(message),
    });
  }

  onModuleInit(): void {
    this.explore();
  }

  onApplicationBootstrap(): void {
    this.bootstrapped = true;
    if (this.hooks.length > 0) this.listen(this.hooks);
    this.ticks.start();
  }

  onApplicationShutdown(): void {
    for (const subscription of this.subscriptions.values()) subscription.unsubscribe();
    this.ticks.stop();
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
        for (const label of labels) this.logger.warn(nestMessages.nonStaticProvider(label));
        continue;
      }
      this.hooks.push(...hooks);
      if (hasLeaderOnly && !this.bind(instance)) this.logger.warn(nestMessages.boundElsewhere(String(wrapper.name)));
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
      if (leaderOnly) this.checkDeclaration(fn, instance, nestMessages.tickJobOwner(label, owner, module));
      for (const { kind, election, stuckAfterMs } of hooks) {
        const handle = this.handleFor(`@${HOOK_NAMES[kind]}() on ${label}`, election);
        // Only @OnElected handlers run for a term, so only they can be stuck.
        if (kind === 'elected') handle.work.watchStuck(label, stuckAfterMs);
        found.hooks.push({ kind, handle, label, instance: instance as Record<string, unknown>, method });
      }
    }
    return found;
  }

  /**
   * Startup checks of a `@LeaderOnly` method's options (every decorator has run by now), so a
   * mistake fails `init()` naming the method; registers a once-per-tick job in its election's
   * ledger (a second job of the same key fails, naming both providers) and its catch-up; registers
   * a scheduled one as a job of its election (a second job of the same name fails the same way).
   */
  private checkDeclaration(fn: object, instance: object, owner: string): void {
    const declared: LeaderOnlyDeclaration | undefined = Reflect.getMetadata(LEADER_ONLY_OPTIONS_METADATA, fn);
    if (!declared) return;
    const { label, options, original, tick } = declared;
    const handle = this.handleFor(`@LeaderOnly() on ${label}`, options.election);
    handle.work.declareLeaderOnly(label);
    handle.work.watchStuck(label, options.stuckAfterMs);
    if (options.once === 'per-tick') {
      const cron: CronMetadata | undefined = Reflect.getMetadata(SCHEDULE_CRON_OPTIONS, fn);
      if (!cron) throw new Error(leadershipMessages.perTickWithoutCron(label));
      const store = handle.leaderStateStore();
      if (store !== true) throw new Error(nestMessages.perTickNeedsState(label, store));
      if (tick) this.ticks.register(handle, tick, cron, owner, () => original.call(instance));
    }
    // A scheduled one is a job of its election (job control): named, pausable, run now, recorded.
    const scheduled = scheduledJobOf(fn, label);
    if (!scheduled) return;
    const invoke = () => original.call(instance);
    const onceTick = options.once === 'per-tick';
    handle.jobs.register({ ...scheduled, label, onceTick, method: original, invoke, owner });
  }

  /** The handle of `election` (default: the default election); an unknown name fails startup naming `where`. */
  private handleFor(where: string, election: string | undefined): ElectionRuntime {
    const { runtimes } = this.election;
    if (election !== undefined && !runtimes.has(election)) {
      throw new Error(leadershipMessages.unknownElection(where, election, runtimes.names));
    }
    return runtimes.get(election);
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

  private dispatch(handle: ElectionRuntime, event: LeadershipEvent, hooks: readonly Hook[] = this.hooks): void {
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
      this.logger.error(nestMessages.hookFailed(hook.label, HOOK_NAMES[hook.kind], error), (error as Error)?.stack);
    try {
      hook.handle.work.trackHook(
        () => {
          const result = (hook.instance[hook.method] as (arg: unknown) => unknown).call(hook.instance, argument);
          return isPromiseLike(result) ? Promise.resolve(result).catch(fail) : result;
        },
        hook.kind === 'elected' ? hook.label : undefined,
        hook.kind === 'elected',
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
