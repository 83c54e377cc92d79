import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { Subscription } from 'rxjs';
import type { LeadershipEvent } from './election/elector.js';
import { isPromiseLike } from './in-flight.tracker.js';
import {
  LEADER_ELECTION_BINDING,
  LEADER_ONLY_METADATA,
  LEADERSHIP_HOOKS_METADATA,
  LOGGER_CONTEXT,
} from './leader-election.constants.js';
import { messages } from './leader-election.messages.js';
import { LeaderElectionService } from './leader-election.service.js';
import { bindingOf, type LeaderOnlyBinding } from './leader-only.decorator.js';
import { LeaderOnlyGuard } from './leader-only.guard.js';
import type { LeadershipHookKind } from './leadership-hooks.decorator.js';

const HOOK_NAMES: Record<LeadershipHookKind, string> = {
  elected: 'OnElected',
  revoked: 'OnRevoked',
  'leader-changed': 'OnLeaderChanged',
};

interface Hook {
  kind: LeadershipHookKind;
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
  private subscription?: Subscription;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly election: LeaderElectionService,
    guard: LeaderOnlyGuard,
  ) {
    // The service decides and counts; a route reached without the guard's consent throws its 503.
    this.binding = {
      invoke: (label, isRoute, call, skipped) =>
        election.runLeaderOnly(call, () => {
          if (isRoute) throw guard.notLeaderException();
          this.logger.debug(messages.jobSkipped(label, election.election, election.isSteppingDown));
          return skipped();
        }),
    };
  }

  onModuleInit(): void {
    this.explore();
  }

  onApplicationBootstrap(): void {
    if (this.hooks.length === 0) return;
    this.subscription = this.election.events$.subscribe((event) => this.dispatch(event));
    // Whatever happened during module init is summed up as the current state, now that every
    // provider is initialised. Same synchronous turn as the subscription: nothing lost or doubled.
    const leaderId = this.election.leaderId;
    if (leaderId !== undefined) this.dispatch({ type: 'leader-changed', leaderId });
    if (this.election.isLeader()) this.dispatch({ type: 'elected', term: this.election.term });
  }

  onApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }

  private explore(): void {
    const seen = new Set<object>();
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      const { instance } = wrapper;
      if (!instance || typeof instance !== 'object' || seen.has(instance)) continue;
      seen.add(instance);
      const prototype = Object.getPrototypeOf(instance);
      if (!prototype) continue;
      let hasLeaderOnly = false;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const fn: unknown = (instance as Record<string, unknown>)[method];
        if (typeof fn !== 'function') continue;
        const leaderOnly = Reflect.getMetadata(LEADER_ONLY_METADATA, fn) === true;
        const kinds: LeadershipHookKind[] = Reflect.getMetadata(LEADERSHIP_HOOKS_METADATA, fn) ?? [];
        if (!leaderOnly && kinds.length === 0) continue;
        const label = `${instance.constructor?.name ?? String(wrapper.name)}.${method}`;
        if (!wrapper.isDependencyTreeStatic()) {
          // Nest creates these per request/consumer: there is no single instance to mark or call.
          this.logger.warn(messages.nonStaticProvider(label));
          continue;
        }
        hasLeaderOnly ||= leaderOnly;
        for (const kind of kinds) this.hooks.push({ kind, label, instance, method });
      }
      if (hasLeaderOnly && !this.bind(instance)) this.logger.warn(messages.boundElsewhere(String(wrapper.name)));
    }
  }

  /**
   * @internal Marks `instance` as this application's, so its `@LeaderOnly` methods ask this app's
   * election (the testing kit binds instances made with `new`). False when another app has it.
   */
  bind(instance: object): boolean {
    const existing = bindingOf(instance);
    if (existing) return existing === this.binding;
    // Own, non-enumerable, per instance: the prototype (shared by every app) is never touched.
    Object.defineProperty(instance, LEADER_ELECTION_BINDING, { value: this.binding, configurable: true });
    return true;
  }

  private dispatch(event: LeadershipEvent): void {
    for (const hook of this.hooks) {
      if (hook.kind !== event.type) continue;
      let argument: unknown;
      if (event.type === 'elected') {
        const term = event.term ?? this.election.term;
        if (term === undefined) continue;
        argument = { term, signal: this.election.signal };
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
      this.election.trackHook(() => {
        const result = (hook.instance[hook.method] as (arg: unknown) => unknown).call(hook.instance, argument);
        return isPromiseLike(result) ? Promise.resolve(result).catch(fail) : result;
      });
    } catch (error) {
      fail(error);
    }
  }
}
