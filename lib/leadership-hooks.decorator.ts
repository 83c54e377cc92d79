import { LEADERSHIP_HOOKS_METADATA } from './leader-election.constants.js';

export type LeadershipHookKind = 'elected' | 'revoked' | 'leader-changed';

/** Argument of an `@OnElected()` handler. */
export interface ElectedHookEvent {
  /** Fencing token of the new term. */
  term: number;
  /** Aborts the moment this term ends: loop while `!signal.aborted`. */
  signal: AbortSignal;
}

/** Argument of an `@OnRevoked()` handler. */
export interface RevokedHookEvent {
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
 */
export const OnElected = (): MethodDecorator => leadershipHook('elected');

/** Called when this instance stops leading (resigned, lease lost, deadline passed, app shutdown). */
export const OnRevoked = (): MethodDecorator => leadershipHook('revoked');

/** Called when the known leader changes (including to or from this instance), and once at bootstrap if known. */
export const OnLeaderChanged = (): MethodDecorator => leadershipHook('leader-changed');

function leadershipHook(kind: LeadershipHookKind): MethodDecorator {
  return (_target, _key, descriptor) => {
    // Metadata on the function itself (like @nestjs/schedule); a list, so one method can take several hooks.
    const method = descriptor.value as object;
    const kinds: LeadershipHookKind[] = Reflect.getOwnMetadata(LEADERSHIP_HOOKS_METADATA, method) ?? [];
    Reflect.defineMetadata(LEADERSHIP_HOOKS_METADATA, [...new Set([...kinds, kind])], method);
    return descriptor;
  };
}
