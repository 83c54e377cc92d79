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

  /** Resolves with the number still running: 0 once idle, or whatever is left after `timeoutMs`. */
  whenIdle(timeoutMs: number): Promise<number> {
    if (this.running === 0) return Promise.resolve(0);
    return new Promise((resolve) => {
      // A plain (ref'd) timer on purpose: it is bounded and cleared, and it keeps a process whose
      // only remaining work is this drain alive until the drain ends.
      const timer = setTimeout(() => {
        this.idleWaiters.delete(onIdle);
        resolve(this.running);
      }, timeoutMs);
      const onIdle = () => {
        clearTimeout(timer);
        resolve(0);
      };
      this.idleWaiters.add(onIdle);
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

const NO_ARGS: readonly unknown[] = Object.freeze([]);

export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}
