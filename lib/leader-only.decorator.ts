import { Logger, UseGuards } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { LEADER_ELECTION_BINDING, LEADER_ONLY_METADATA, LOGGER_CONTEXT } from './leader-election.constants.js';
import { messages } from './leader-election.messages.js';
import type { LeaderElectionService } from './leader-election.service.js';
import { LeaderOnlyGuard, notLeaderException } from './leader-only.guard.js';

/**
 * Runs the method on the elected instance only.
 *
 * - Jobs (`@Cron`, `@Interval`, `@Timeout`, or any provider method): on a follower — or on a
 *   leader that is shutting down — the call is skipped: it returns `undefined` (a promise of
 *   undefined for an `async` method) and logs one debug line; it never throws, retries or waits.
 *   Calls on the leader are tracked, so shutdown waits for them (up to `shutdownTimeoutMs`)
 *   before releasing the lease.
 * - Routes (`@Get`, `@Post`, …): adds {@link LeaderOnlyGuard}, so followers answer 503 before the
 *   handler runs. Should leadership end between the guard and the handler, the handler throws the
 *   same 503 rather than return an empty 200.
 *
 * Works in either order with the other decorators. The method is replaced by a Proxy of itself
 * (same `this`, `name`, `length`) that carries every reflect-metadata key of the original, so
 * decorators applied before this one keep working, and those applied after it write onto the
 * Proxy, which is what Nest and @nestjs/schedule read from the prototype.
 *
 * The Proxy is shared by every instance of the class, across applications; it finds the
 * application it belongs to through the instance (`this`), which that application's
 * LeaderElectionModule marks at startup. One app's leadership never leaks into another's.
 */
export function LeaderOnly(): MethodDecorator {
  return <T>(target: object, propertyKey: string | symbol, descriptor: TypedPropertyDescriptor<T>) => {
    const value: unknown = descriptor.value;
    if (typeof value !== 'function') {
      throw new TypeError(`@LeaderOnly() decorates methods; ${describe(target, propertyKey)} is not one`);
    }
    const original = value as (...args: unknown[]) => unknown;
    // Applied twice (or inherited and re-decorated): one wrapper is enough.
    if (Reflect.getMetadata(LEADER_ONLY_METADATA, original) === true) return descriptor;

    const label = describe(target, propertyKey);
    // A skipped `async` method still returns a promise (of undefined), so `.then()` callers keep working.
    const skipped = isAsyncFunction(original) ? () => Promise.resolve(undefined) : () => undefined;
    // Route-ness is read at the first call, not here: @Get() may be applied after us, onto the
    // wrapper. By the first call every decorator has run, so it is read once (hot path).
    let routeness: boolean | undefined;
    const wrapper = new Proxy(original, {
      apply: (method, self: unknown, args: unknown[]) => {
        routeness ??= Reflect.hasMetadata(PATH_METADATA, wrapper);
        const isRoute = routeness;
        const binding = bindingOf(self);
        if (!binding) {
          // Request-scoped/transient controllers are not marked; the guard has decided for them.
          if (isRoute) return Reflect.apply(method, self, args);
          warnUnbound(self, label);
          return skipped();
        }
        return binding.invoke(label, isRoute, () => Reflect.apply(method, self, args), skipped);
      },
    });
    for (const key of Reflect.getOwnMetadataKeys(original)) {
      Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, original), wrapper);
    }
    Reflect.defineMetadata(LEADER_ONLY_METADATA, true, wrapper);
    descriptor.value = wrapper as T;
    // Inert on non-route methods; on routes it refuses followers before pipes and the handler run.
    UseGuards(LeaderOnlyGuard)(target, propertyKey, descriptor);
    return descriptor;
  };
}

/** What an application's explorer attaches to each instance that has `@LeaderOnly` methods. */
export interface LeaderOnlyBinding {
  invoke(label: string, isRoute: boolean, call: () => unknown, skipped: () => unknown): unknown;
}

/** The binding of one application: its service decides, its tracker counts. */
export function createLeaderOnlyBinding(election: LeaderElectionService, logger: Logger): LeaderOnlyBinding {
  return {
    invoke(label, isRoute, call, skipped) {
      if (election.isLeader()) return election.inFlight.track(call);
      if (isRoute) throw notLeaderException(election);
      logger.debug(messages.jobSkipped(label, election.election, election.isSteppingDown));
      return skipped();
    },
  };
}

/** The binding of `instance`, or what it is already bound to. */
export function bindingOf(instance: unknown): LeaderOnlyBinding | undefined {
  if (instance === null || (typeof instance !== 'object' && typeof instance !== 'function')) return undefined;
  return (instance as { [LEADER_ELECTION_BINDING]?: LeaderOnlyBinding })[LEADER_ELECTION_BINDING];
}

const logger = new Logger(LOGGER_CONTEXT);
// Log dedup only (one warning per unmanaged instance); it holds no leadership state.
const warnedUnbound = new WeakSet<object>();

function warnUnbound(self: unknown, label: string): void {
  const key = self !== null && (typeof self === 'object' || typeof self === 'function') ? self : undefined;
  if (key) {
    if (warnedUnbound.has(key)) return;
    warnedUnbound.add(key);
  }
  logger.warn(messages.unbound(label));
}

function isAsyncFunction(fn: (...args: never) => unknown): boolean {
  return Object.prototype.toString.call(fn) === '[object AsyncFunction]';
}

function describe(target: object, propertyKey: string | symbol): string {
  const owner = typeof target === 'function' ? target.name : target.constructor?.name;
  return `${owner ?? 'anonymous'}.${String(propertyKey)}`;
}
