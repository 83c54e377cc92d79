import { messages } from '../leader-election.messages.js';

/**
 * Time source of the elector. Two clocks, because each fails differently: the monotonic one
 * (`now`, performance.now) never steps with NTP or DST but stops while the machine is suspended;
 * the wall clock (`wallNow`, Date.now) keeps counting across a suspend but may step either way.
 * The elector bounds a term by both, so neither failure can extend it. Timers go through the
 * clock too, so tests can drive (and misfire) them.
 */
export interface Clock {
  /** Monotonic milliseconds (arbitrary origin). */
  now(): number;
  /** Wall-clock epoch milliseconds. */
  wallNow(): number;
  setTimeout(callback: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

export type ClockTimer = unknown;

export const systemClock: Clock = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, Math.max(0, ms));
    // Our timers alone never keep a process alive: an app that forgot to stop us still exits.
    timer.unref();
    return timer;
  },
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/** An AbortSignal that aborts after `ms` on `clock`, or when `parent` aborts. */
export function timeoutSignal(
  clock: Clock,
  ms: number,
  parent?: AbortSignal,
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const timer = clock.setTimeout(
    () => controller.abort(new DOMException(messages.callTimedOut(ms), 'TimeoutError')),
    ms,
  );
  const onParentAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      clock.clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}
