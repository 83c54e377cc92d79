import type { Clock, ClockTimer } from '../shared/clock.js';

/**
 * Counts leader-only work that is running, so shutdown can wait for it before releasing the
 * lease. One tracker per application: apps sharing a process never wait for each other's calls.
 */
export class InFlightTracker {
  private running = 0;
  private readonly idleWaiters = new Set<() => void>();

  get size(): number {
    return this.running;
  }

  /**
   * Run `fn` and count it until it settles (a returned promise counts until it settles; a
   * synchronous result or throw ends the count at once). The result is returned unchanged.
   */
  track<T>(fn: () => T): T {
    return this.trackCall(fn, undefined, NO_ARGS) as T;
  }

  /** {@link track} of `fn.apply(self, args)`, without a closure to build per call. */
  trackCall(fn: (...args: never[]) => unknown, self: unknown, args: readonly unknown[]): unknown {
    this.running += 1;
    let result: unknown;
    try {
      result = Reflect.apply(fn, self, args);
    } catch (error) {
      this.done();
      throw error;
    }
    if (isPromiseLike(result)) {
      result.then(
        () => this.done(),
        () => this.done(),
      );
    } else {
      this.done();
    }
    return result;
  }

  /**
   * Resolves with the number still running: 0 once idle, or whatever is left after `timeoutMs`, or
   * when `signal` aborts (a handover's drain ends with its term: nothing is left to hand over).
   * `clock` (a test's) times the wait; without it a plain timer does.
   */
  whenIdle(timeoutMs: number, { signal, clock }: IdleWait = {}): Promise<number> {
    if (this.running === 0) return Promise.resolve(0);
    if (signal?.aborted) return Promise.resolve(this.running);
    return new Promise((resolve) => {
      const finish = (left: number) => {
        if (clock) clock.clearTimeout(timer);
        else clearTimeout(timer as NodeJS.Timeout);
        this.idleWaiters.delete(onIdle);
        signal?.removeEventListener('abort', onAbort);
        resolve(left);
      };
      const onIdle = () => finish(0);
      const onAbort = () => finish(this.running);
      // A plain (ref'd) timer on purpose: it is bounded and cleared, and it keeps a process whose
      // only remaining work is this drain alive until the drain ends.
      const timer: ClockTimer = clock
        ? clock.setTimeout(() => finish(this.running), timeoutMs)
        : setTimeout(() => finish(this.running), timeoutMs);
      this.idleWaiters.add(onIdle);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private done(): void {
    this.running -= 1;
    // The common case (nobody waiting for shutdown) costs nothing on the hot path.
    if (this.running > 0 || this.idleWaiters.size === 0) return;
    const waiters = [...this.idleWaiters];
    this.idleWaiters.clear();
    for (const waiter of waiters) waiter();
  }
}

/** How {@link InFlightTracker.whenIdle} may end early, and on which clock it waits. */
export interface IdleWait {
  signal?: AbortSignal;
  clock?: Clock;
}

const NO_ARGS: readonly unknown[] = Object.freeze([]);

export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}
