import { isStuckAfterMs, MAX_STUCK_AFTER_MS, type StuckAfter } from '../../leadership/stuck-work.detector.js';
import { LEADERSHIP_HOOKS_METADATA } from '../leader-election.constants.js';
import { nestMessages as messages } from '../nest.messages.js';

export type LeadershipHookKind = 'elected' | 'revoked' | 'leader-changed';

/** @internal One hook of a method: its kind and election (undefined: the default election). */
export interface LeadershipHookDeclaration {
  kind: LeadershipHookKind;
  election?: string;
  /** `@OnElected` only: the handler's own stuck-work threshold (undefined: the module's). */
  stuckAfterMs?: StuckAfter;
}

/** Options of `@OnElected()` (a string is short for `{ election }`). */
export interface OnElectedOptions {
  /** The election whose terms start the handler (default: the app's default election). */
  election?: string;
  /**
   * The handler's own stuck-work threshold instead of the module's `stuckAfterMs`: `false` for
   * work that runs for the whole term by design (a queue pump), so it never counts as stuck; a
   * number (whole ms) watches it even when the module's option is off.
   */
  stuckAfterMs?: StuckAfter;
}

/** Argument of an `@OnElected()` handler. */
export interface ElectedHookEvent {
  /** Fencing token of the new term. */
  term: number;
  /** Aborts the moment this term ends: loop while `!signal.aborted`. */
  signal: AbortSignal;
}

/** Argument of an `@OnRevoked()` handler. */
export interface RevokedHookEvent {
  /** Fencing token of the term that ended. */
  term: number;
  /** Why leadership ended: resigned, stopped, lease lost, renew deadline passed. */
  reason: string;
}

/** Argument of an `@OnLeaderChanged()` handler. */
export interface LeaderChangedHookEvent {
  /** The new leader's identity, undefined while unknown. */
  leaderId: string | undefined;
}

/**
 * Called when this instance becomes the leader, with the term's `signal`: start leader-only
 * background work (a queue pump) and stop it when the signal aborts. Called only once the app has
 * bootstrapped; a leadership won during module init is delivered in `onApplicationBootstrap`.
 * Errors (thrown or rejected) are logged and never affect the election. Shutdown gives a still
 * running handler a short grace after the abort before the lease is released.
 *
 * With the module's `stuckAfterMs` set, a handler still running after that long counts as stuck;
 * a pump that runs all term says so with `@OnElected({ stuckAfterMs: false })`.
 */
export const OnElected = (options?: string | OnElectedOptions): MethodDecorator => {
  if (options === undefined || typeof options === 'string') return leadershipHook('elected', options);
  // Checked when applied, so a mistake fails at import naming the method.
  return (target, key, descriptor) => {
    const { election, stuckAfterMs } = resolveOnElectedOptions(`${ownerOf(target)}.${String(key)}`, options);
    return leadershipHook('elected', election, stuckAfterMs)(target, key, descriptor);
  };
};

const ON_ELECTED_KEYS = ['election', 'stuckAfterMs'] as const;

function resolveOnElectedOptions(label: string, options: OnElectedOptions): OnElectedOptions {
  const fail = (detail: string) => new TypeError(messages.onElectedOptions(label, detail));
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw fail(messages.optionNotObject('the options', options));
  }
  for (const key of Object.keys(options)) {
    if (!(ON_ELECTED_KEYS as readonly string[]).includes(key)) throw fail(messages.optionUnknown(key, ON_ELECTED_KEYS));
  }
  const { election, stuckAfterMs } = options;
  if (stuckAfterMs !== undefined && stuckAfterMs !== false && !isStuckAfterMs(stuckAfterMs)) {
    throw fail(messages.stuckAfterOption(stuckAfterMs, MAX_STUCK_AFTER_MS));
  }
  return { election, stuckAfterMs };
}

function ownerOf(target: object): string {
  return (typeof target === 'function' ? target.name : target.constructor?.name) ?? 'anonymous';
}

/** Called when this instance stops leading (resigned, lease lost, deadline passed, handed over, app shutdown). */
export const OnRevoked = (election?: string): MethodDecorator => leadershipHook('revoked', election);

/** Called when the known leader changes (including to or from this instance), and once at bootstrap if known. */
export const OnLeaderChanged = (election?: string): MethodDecorator => leadershipHook('leader-changed', election);

// Each takes an election name (default: the app's default election, the first configured); an
// unknown name fails at startup naming the decorator and the method.
function leadershipHook(
  kind: LeadershipHookKind,
  election: string | undefined,
  stuckAfterMs?: StuckAfter,
): MethodDecorator {
  if (election !== undefined && (typeof election !== 'string' || election === '')) {
    throw new TypeError(messages.hookBadElection(kind, election));
  }
  return (_target, _key, descriptor) => {
    // Metadata on the function itself (like @nestjs/schedule); a list, so one method can take several hooks.
    const method = descriptor.value as object;
    const hooks: LeadershipHookDeclaration[] = Reflect.getOwnMetadata(LEADERSHIP_HOOKS_METADATA, method) ?? [];
    if (!hooks.some((hook) => hook.kind === kind && hook.election === election)) {
      const hook: LeadershipHookDeclaration =
        stuckAfterMs === undefined ? { kind, election } : { kind, election, stuckAfterMs };
      Reflect.defineMetadata(LEADERSHIP_HOOKS_METADATA, [...hooks, hook], method);
    }
    return descriptor;
  };
}
