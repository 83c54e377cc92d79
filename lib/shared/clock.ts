import { sharedMessages } from './messages.js';

/**
 * A time source as users may pass it (`new Elector({ clock })`, `new InMemoryLeaseStore({ clock })`).
 * Two clocks, because each fails differently: the monotonic one (`now`, performance.now) never steps
 * with NTP or DST but stops while the machine is suspended; the wall clock (`wallNow`, Date.now)
 * keeps counting across a suspend but may step either way. The elector bounds a term by both, so
 * neither failure can extend it. Timers go through the clock too, so tests can drive (and misfire) them.
 */
export interface Clock {
  /** Monotonic milliseconds (arbitrary origin). */
  now(): number;
  /** Wall-clock epoch milliseconds. */
  wallNow(): number;
  /** Calls `callback` once after `ms` monotonic milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): ClockTimer;
  /** Cancels a timer of this clock's `setTimeout` (a fired or cleared one is ignored). */
  clearTimeout(timer: ClockTimer): void;
}

export type ClockTimer = unknown;

/**
 * Node's global `performance` is an accessor: reading it costs a getter call, about as much as the
 * clock read itself (profile of the leader path, figure 1). So the monotonic clock reads a
 * captured object, re-read only when the global `Date` changes, which is when test fake timers
 * (Jest, Vitest, sinon) install or uninstall, and they replace `performance` with it: under them
 * the elector still follows fake time on both clocks. Captured at the first read, not at import
 * (the first access loads Node's perf_hooks).
 */
let performanceSeen: typeof performance | undefined;
let dateSeen: DateConstructor | undefined;
function monotonicNow(): number {
  if (Date !== dateSeen) {
    dateSeen = Date;
    performanceSeen = performance;
  }
  return (performanceSeen as typeof performance).now();
}

export const systemClock: Clock = {
  now: monotonicNow,
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
    () => controller.abort(new DOMException(sharedMessages.callTimedOut(ms), 'TimeoutError')),
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
