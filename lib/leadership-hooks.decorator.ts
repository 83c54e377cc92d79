import { LEADERSHIP_HOOKS_METADATA } from './leader-election.constants.js';
import { messages } from './leader-election.messages.js';

export type LeadershipHookKind = 'elected' | 'revoked' | 'leader-changed';

/** @internal One hook of a method: its kind and election (undefined: the default election). */
export interface LeadershipHookDeclaration {
  kind: LeadershipHookKind;
  election?: string;
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
export const OnElected = (election?: string): MethodDecorator => leadershipHook('elected', election);

/** Called when this instance stops leading (resigned, lease lost, deadline passed, handed over, app shutdown). */
export const OnRevoked = (election?: string): MethodDecorator => leadershipHook('revoked', election);

/** Called when the known leader changes (including to or from this instance), and once at bootstrap if known. */
export const OnLeaderChanged = (election?: string): MethodDecorator => leadershipHook('leader-changed', election);

// Each takes an election name (default: the app's default election, the first configured); an
// unknown name fails at startup naming the decorator and the method.
function leadershipHook(kind: LeadershipHookKind, election: string | undefined): MethodDecorator {
  if (election !== undefined && (typeof election !== 'string' || election === '')) {
    throw new TypeError(messages.hookBadElection(kind, election));
  }
  return (_target, _key, descriptor) => {
    // Metadata on the function itself (like @nestjs/schedule); a list, so one method can take several hooks.
    const method = descriptor.value as object;
    const hooks: LeadershipHookDeclaration[] = Reflect.getOwnMetadata(LEADERSHIP_HOOKS_METADATA, method) ?? [];
    if (!hooks.some((hook) => hook.kind === kind && hook.election === election)) {
      Reflect.defineMetadata(LEADERSHIP_HOOKS_METADATA, [...hooks, { kind, election }], method);
    }
    return descriptor;
  };
}
