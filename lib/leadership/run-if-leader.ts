import type { LeadershipTerm } from './election.handle.js';
import { leadershipMessages as messages } from './leadership.messages.js';

type Work = (term: LeadershipTerm) => unknown;

/**
 * `[name, fn, otherwise]` of a `runIfLeader` call, made as `(fn, otherwise?)` or
 * `(name, fn, otherwise?)`: unnamed work counts under `runIfLeader`. A name without work fails at
 * once, naming the method (a typo must not look like a follower's skip).
 */
export function runIfLeaderArguments(args: readonly unknown[]): [string, Work, (() => unknown) | undefined] {
  const [first, second, third] = args;
  if (typeof first !== 'string') return ['runIfLeader', first as Work, second as (() => unknown) | undefined];
  if (first === '' || typeof second !== 'function') throw new TypeError(messages.runHandlerName('runIfLeader', first));
  return [first, second as Work, third as (() => unknown) | undefined];
}
