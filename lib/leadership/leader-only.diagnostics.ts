import { systemClock } from '../shared/clock.js';
import { leaderElectionChannels as channels, publishOn } from '../shared/diagnostics-channels.js';
import { isPromiseLike } from './in-flight.tracker.js';
import type { LeadershipContext } from './leadership-context.js';

/** What a leader-only run's messages name besides the term: the election as this replica sees it. */
export interface LeadershipView {
  readonly election: string;
  readonly identity: string;
  readonly leaderId: string | undefined;
  readonly isSteppingDown: boolean;
  /** The context of the term we lead (made once per term); undefined when not leading. */
  leadershipContext(): LeadershipContext | undefined;
}

/** Whether anyone listens for leader-only runs (checked before anything is built for them). */
export function runsObserved(): boolean {
  return channels.leaderOnlyRun.hasSubscribers;
}

/**
 * Runs `call`, publishing `started` before it and `finished` (outcome, duration) once it returned,
 * threw, or its promise settled. The result is returned unchanged.
 */
export function publishedRun<T>(context: LeadershipContext, handler: string, call: () => T, tick?: number): T {
  const { election, identity, term } = context;
  const base = { election, identity, term, handler, ...(tick === undefined ? {} : { tick }) };
  publishOn('leaderOnlyRun', { ...base, phase: 'started' });
  const startedAt = systemClock.now();
  const finished = (outcome: 'ok' | 'error') => {
    if (!channels.leaderOnlyRun.hasSubscribers) return;
    publishOn('leaderOnlyRun', { ...base, phase: 'finished', outcome, durationMs: systemClock.now() - startedAt });
  };
  let result: T;
  try {
    result = call();
  } catch (error) {
    finished('error');
    throw error;
  }
  if (isPromiseLike(result)) {
    result.then(
      () => finished('ok'),
      () => finished('error'),
    );
  } else {
    finished('ok');
  }
  return result;
}

/** A skipped leader-only call, on its channel when anyone listens. */
export function publishSkipped(view: LeadershipView, handler: string): void {
  if (!channels.leaderOnlySkipped.hasSubscribers) return;
  const { election, identity, leaderId, isSteppingDown } = view;
  publishOn('leaderOnlySkipped', { election, identity, handler, leaderId, steppingDown: isSteppingDown });
}
