import type { Clock } from './clock.js';
import { TransientLeaseStoreError } from './errors.js';
import { sharedMessages } from './messages.js';

/** Abort handling shared by the elector and the stores: every call honours its signal. */

function abortedError(signal: AbortSignal): TransientLeaseStoreError {
  return new TransientLeaseStoreError(sharedMessages.aborted(signal.reason), { cause: signal.reason });
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortedError(signal);
}

/**
 * `work`, or a TransientLeaseStoreError as soon as `signal` aborts — even if something inside
 * (a driver, a retry policy, a token credential) ignores the signal. Work abandoned that way
 * still runs to its end: `onAbandoned` (called at the abort) is where a late success gets undone
 * (the stores' acquires use the one rule in stores/store-support.ts instead).
 */
export function untilAborted<T>(signal: AbortSignal, work: Promise<T>, onAbandoned?: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      reject(abortedError(signal));
      // If we stop waiting, its late failure is nobody's business.
      work.catch(() => undefined);
      onAbandoned?.();
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Wait for `work` to settle, but no longer than `ms` (for clean-ups on close). */
export async function settleWithin(work: Promise<unknown>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([Promise.allSettled(work), timeout]);
  clearTimeout(timer);
}

/** Resolves true after `ms` on `timers`, false at once when `signal` aborts first. */
export function pauseUnlessAborted(
  timers: Pick<Clock, 'setTimeout' | 'clearTimeout'>,
  ms: number,
  signal: AbortSignal,
): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      timers.clearTimeout(timer);
      resolve(false);
    };
    const timer = timers.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
