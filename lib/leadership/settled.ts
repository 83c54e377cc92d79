import { isPromiseLike } from './in-flight.tracker.js';

/**
 * Runs `fn` and calls `done` once its result settles (a promise when it settles, anything else at
 * once, a throw before rethrowing). The result is returned unchanged: the caller still gets the
 * original promise, not a chained copy.
 */
export function onSettled<T>(fn: () => T, done: () => void): T {
  let result: T;
  try {
    result = fn();
  } catch (error) {
    done();
    throw error;
  }
  if (isPromiseLike(result)) result.then(done, done);
  else done();
  return result;
}
