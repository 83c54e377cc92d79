import type { Clock } from '../shared/clock.js';
import { FatalLeaseStoreError, LeaseLostError } from '../shared/errors.js';

/**
 * A transient store error while recording a tick is retried within the tick for at most this long
 * (and at most half the cron period, and never past the term): a blip must not drop a daily job,
 * but a run that starts seconds late is no longer "the 02:00 run" for most jobs.
 */
export const TICK_RECORD_RETRY_MS = 2_000;
/** First pause between attempts; doubled each time. */
export const RETRY_PAUSE_MS = 50;

/** What times the retries of a record: a monotonic clock and its timers. */
export type RetryTimers = Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>;

/** Without the module's clock: plain (ref'd) timers, bounded by the retry budget, as a drain's are. */
export const PLAIN_TIMERS: RetryTimers = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/** Worth another attempt within the tick: not a lost lease, a fatal store error or a bad argument. */
export function retryable(error: unknown): boolean {
  return !(
    error instanceof LeaseLostError ||
    error instanceof FatalLeaseStoreError ||
    error instanceof TypeError ||
    error instanceof RangeError
  );
}
