import { UseGuards } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { SCHEDULE_CRON_OPTIONS } from '../../leadership/cron-schedule.js';
import { type LeaderOnlyBinding, leaderOnlySite } from '../../leadership/leader-only.runner.js';
import type { LeaderOnlyTick } from '../../leadership/once-per-tick.runner.js';
import { isStuckAfterMs, MAX_STUCK_AFTER_MS, type StuckAfter } from '../../leadership/stuck-work.detector.js';
import { isCatchUpWindowMs, MAX_CATCH_UP_WINDOW_MS, MIN_CATCH_UP_WINDOW_MS } from '../../leadership/tick.ledger.js';
import {
  LEADER_ELECTION_BINDING,
  LEADER_ONLY_METADATA,
  LEADER_ONLY_OPTIONS_METADATA,
} from '../leader-election.constants.js';
import { LeaderOnlyGuard } from '../leader-only.guard.js';
import { nestMessages as messages } from '../nest.messages.js';

/**
 * Runs the method on the elected instance only.
 *
 * - Jobs (`@Cron`, `@Interval`, `@Timeout`, or any provider method): on a follower — or on a
 *   leader that is shutting down — the call is skipped: it returns `undefined` (a promise of
 *   undefined for an `async` method); it never throws, retries or waits. The first skip after each
 *   change of leadership logs one debug line; repeats are counted (metrics), not logged.
 *   Calls on the leader are tracked, so shutdown waits for them (up to `shutdownTimeoutMs`)
 *   before releasing the lease.
 * - Routes (`@Get`, `@Post`, …): adds {@link LeaderOnlyGuard}, so followers answer 503 before the
 *   handler runs. Should leadership end between the guard and the handler, the handler throws the
 *   same 503 rather than return an empty 200.
 *
 * Works in either order with the other decorators. The method is replaced by a wrapper (same
 * `this`, `name`, `length`; a plain function, not a Proxy: a Proxy's apply trap cost ~25 ns per
 * call) that carries every reflect-metadata key of the original, so decorators applied before this
 * one keep working, and those applied after it write onto the wrapper, which is what Nest and
 * @nestjs/schedule read from the prototype.
 *
 * The wrapper is shared by every instance of the class, across applications; it finds the
 * application it belongs to through the instance (`this`), which that application's
 * LeaderElectionModule marks at startup. One app's leadership never leaks into another's.
 *
 * An instance no application marked (created with `new`, request-scoped or transient, or an app
 * not yet initialised) cannot be judged: its non-route calls throw (reject, when `async`) an error
 * saying how to fix it, instead of being skipped unseen. In unit tests, let Nest create the
 * instance with `LeaderElectionTestingModule`, or bind a `new` one with `TestingLeadership.bind()`
 * (`@leaderlease/nestjs/testing`).
 *
 * Options (`@LeaderOnly('name')` is short for `{ election: 'name' }`):
 * - `election`: the election that decides (default: the app's default election, the first of
 *   `elections`); a name the app does not configure fails at startup, naming the method.
 * - `once: 'per-tick'` (on an `@Cron` method): each scheduled fire time runs at most once across
 *   all replicas and handovers. The run is recorded in leader state (key `tick:<job>`, fenced by the
 *   store) before the method starts; a tick already recorded, or that cannot be recorded, is
 *   skipped. The method's calls then answer with a promise.
 * - `missed: 'skip' | 'catch-up'` (with `once: 'per-tick'`, default `'skip'`): with `'catch-up'`,
 *   a newly elected leader runs the most recent tick no leader ran, once, if it was due at most
 *   `catchUpWindowMs` ago.
 * - `catchUpWindowMs` (with `missed: 'catch-up'`, default 24 h): whole ms from 1 s to 366 days.
 * - `stuckAfterMs: number | false`: this method's own stuck-work threshold instead of the module's
 *   `stuckAfterMs` (a number watches it even when the module's is off); `false`: never stuck.
 */
export function LeaderOnly(options?: string | LeaderOnlyOptions): MethodDecorator {
  return <T>(target: object, propertyKey: string | symbol, descriptor: TypedPropertyDescriptor<T>) => {
    const value: unknown = descriptor.value;
    if (typeof value !== 'function') {
      throw new TypeError(messages.notAMethod(describe(target, propertyKey)));
    }
    const resolved = resolveLeaderOnlyOptions(describe(target, propertyKey), options);
    const original = value as (...args: unknown[]) => unknown;
    // Applied twice (or inherited and re-decorated): one wrapper is enough.
    if (Reflect.getMetadata(LEADER_ONLY_METADATA, original) === true) return descriptor;

    const label = describe(target, propertyKey);
    // An `async` method answers with a promise either way, so `.then()` callers keep working.
    const isAsync = isAsyncFunction(original);
    // Everything a call needs that does not change between calls, built once: the hot path
    // (a skipped call above all) allocates nothing of its own.
    const site = leaderOnlySite({
      label,
      election: resolved.election,
      isAsync,
      tick:
        resolved.once === 'per-tick'
          ? // Read at the call: @Cron may be applied after us, onto the wrapper.
            {
              label,
              missed: resolved.missed,
              catchUpWindowMs: resolved.catchUpWindowMs,
              cron: () => Reflect.getMetadata(SCHEDULE_CRON_OPTIONS, wrapper),
            }
          : undefined,
      isRoute: () => (routeness ??= Reflect.hasMetadata(PATH_METADATA, wrapper)),
    });
    // Route-ness is read at the first call that needs it, not here: @Get() may be applied after
    // us, onto the wrapper. By then every decorator has run, so it is read once.
    let routeness: boolean | undefined;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      const binding = bindingOf(this);
      if (binding) return binding.invoke(site, original, this, args);
      // Request-scoped/transient controllers are not marked; the guard has decided for them
      // (and a controller called directly in a unit test runs, as with any Nest guard).
      if (site.isRoute()) return Reflect.apply(original, this, args);
      // Nobody can say whether this instance leads: refuse loudly rather than skip silently.
      const error = new Error(messages.unbound(label));
      if (isAsync) return Promise.reject(error);
      throw error;
    };
    // Looks like the method to whoever inspects it (Nest's logs, @nestjs/schedule, stack traces).
    Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
    Object.defineProperty(wrapper, 'length', { value: original.length, configurable: true });
    for (const key of Reflect.getOwnMetadataKeys(original)) {
      Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, original), wrapper);
    }
    Reflect.defineMetadata(LEADER_ONLY_METADATA, true, wrapper);
    const declared: LeaderOnlyDeclaration = { label, options: resolved, original, tick: site.tick };
    Reflect.defineMetadata(LEADER_ONLY_OPTIONS_METADATA, declared, wrapper);
    descriptor.value = wrapper as T;
    // Inert on non-route methods; on routes it refuses followers before pipes and the handler run.
    UseGuards(LeaderOnlyGuard)(target, propertyKey, descriptor);
    return descriptor;
  };
}

/** Options of `@LeaderOnly()` (a string is short for `{ election }`). */
export interface LeaderOnlyOptions {
  /** The election that decides (default: the app's default election, the first configured). */
  election?: string;
  /** `'per-tick'`: each fire time of the method's `@Cron` schedule runs at most once, on one replica. */
  once?: 'per-tick';
  /** With `once: 'per-tick'`: what a new leader does about the most recent tick no leader ran. Default `'skip'`. */
  missed?: 'skip' | 'catch-up';
  /**
   * With `missed: 'catch-up'`: how long ago the most recent missed tick may have been due and still
   * be caught up, in whole ms from 1,000 (1 s) to 31,622,400,000 (366 days). Default 24 h. Like
   * Temporal's `catchupWindow`; an older tick is skipped, as Quartz's `DO_NOTHING` would.
   */
  catchUpWindowMs?: number;
  /**
   * A call running longer than this (whole ms) is stuck, whatever the module's `stuckAfterMs`;
   * `false`: never stuck. Default: the module's `stuckAfterMs`.
   */
  stuckAfterMs?: StuckAfter;
}

export interface ResolvedLeaderOnlyOptions {
  election?: string;
  once?: 'per-tick';
  missed: 'skip' | 'catch-up';
  /** Unset: the ledger's default (24 h). */
  catchUpWindowMs?: number;
  stuckAfterMs?: StuckAfter;
}

/** @internal What the explorer reads of a `@LeaderOnly` method at startup. */
export interface LeaderOnlyDeclaration {
  label: string;
  options: ResolvedLeaderOnlyOptions;
  /** The undecorated method, for a catch-up run the explorer starts itself. */
  original: (...args: unknown[]) => unknown;
  /** With `once: 'per-tick'`: the object every call of this method carries, which identifies its job. */
  tick?: LeaderOnlyTick;
}

const OPTION_KEYS = ['election', 'once', 'missed', 'catchUpWindowMs', 'stuckAfterMs'] as const;

/** Checked when the decorator is applied, so a typo fails at import, naming the method. */
function resolveLeaderOnlyOptions(label: string, options: string | LeaderOnlyOptions = {}): ResolvedLeaderOnlyOptions {
  const fail = (detail: string) => new TypeError(messages.leaderOnlyOptions(label, detail));
  if (typeof options === 'string') options = { election: options };
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw fail(messages.optionNotObject('the options', options));
  }
  for (const key of Object.keys(options)) {
    if (!(OPTION_KEYS as readonly string[]).includes(key)) throw fail(messages.optionUnknown(key, OPTION_KEYS));
  }
  const { election, once, missed, catchUpWindowMs, stuckAfterMs } = options;
  if (election !== undefined && (typeof election !== 'string' || election === '')) {
    throw fail(messages.leaderOnlyBadValue('election', election, 'a non-empty string'));
  }
  if (once !== undefined && once !== 'per-tick') throw fail(messages.leaderOnlyBadValue('once', once, "'per-tick'"));
  if (missed !== undefined && missed !== 'skip' && missed !== 'catch-up') {
    throw fail(messages.leaderOnlyBadValue('missed', missed, "'skip' or 'catch-up'"));
  }
  if (missed !== undefined && once === undefined) throw fail(messages.leaderOnlyMissedWithoutOnce);
  if (catchUpWindowMs !== undefined && !isCatchUpWindowMs(catchUpWindowMs)) {
    throw fail(messages.catchUpWindowOption(catchUpWindowMs, MIN_CATCH_UP_WINDOW_MS, MAX_CATCH_UP_WINDOW_MS));
  }
  // Only a catch-up reads the window: set elsewhere it would be silently ignored.
  if (catchUpWindowMs !== undefined && missed !== 'catch-up') throw fail(messages.catchUpWindowWithoutCatchUp);
  if (stuckAfterMs !== undefined && stuckAfterMs !== false && !isStuckAfterMs(stuckAfterMs)) {
    throw fail(messages.stuckAfterOption(stuckAfterMs, MAX_STUCK_AFTER_MS));
  }
  return { election, once, missed: missed ?? 'skip', catchUpWindowMs, stuckAfterMs };
}

/** @internal The binding of `instance`, or what it is already bound to. */
export function bindingOf(instance: unknown): LeaderOnlyBinding | undefined {
  if (instance === null || (typeof instance !== 'object' && typeof instance !== 'function')) return undefined;
  return (instance as { [LEADER_ELECTION_BINDING]?: LeaderOnlyBinding })[LEADER_ELECTION_BINDING];
}

function isAsyncFunction(fn: (...args: never) => unknown): boolean {
  return Object.prototype.toString.call(fn) === '[object AsyncFunction]';
}

function describe(target: object, propertyKey: string | symbol): string {
  const owner = typeof target === 'function' ? target.name : target.constructor?.name;
  return `${owner ?? 'anonymous'}.${String(propertyKey)}`;
}
