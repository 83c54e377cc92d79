import type { Clock } from '../shared/clock.js';
import type { IdleWait } from './in-flight.tracker.js';
import type { LeaderWork } from './leader-work.js';
import { leadershipMessages as messages } from './leadership.messages.js';
import { ABORT_GRACE_MS } from './leadership-options.js';

/** Where a drain logs (the module's logger). */
export interface DrainLogger {
  log(message: string): void;
  warn(message: string): void;
}

/**
 * The two waits of a step-down, on one election's work: the drain while the lease is still ours
 * (up to shutdownTimeoutMs), then, once the term's signal aborted, a short grace before the release.
 */
export class WorkDrain {
  constructor(
    private readonly work: LeaderWork,
    private readonly election: () => string,
    private readonly shutdownTimeoutMs: number,
    private readonly logger: DrainLogger,
    /** A test's clock (the simulation's); without it, plain timers. */
    private readonly clock?: Clock,
  ) {}

  /** Running leader-only calls. */
  get running(): number {
    return this.work.inFlight.size;
  }

  /** Waits for running leader-only calls, up to shutdownTimeoutMs (or `signal`), while the lease is still ours. */
  async drain(waiting: string, signal?: AbortSignal): Promise<void> {
    const { shutdownTimeoutMs } = this;
    const { inFlight } = this.work;
    if (inFlight.size === 0) return;
    this.logger.log(waiting);
    const stillRunning = await inFlight.whenIdle(shutdownTimeoutMs, this.idleWait(signal));
    if (stillRunning > 0 && !signal?.aborted) {
      this.logger.warn(messages.drainTimedOut(this.election(), stillRunning, shutdownTimeoutMs, this.graceMs()));
    }
  }

  /** After the term's signal aborted: what still runs gets a short grace to notice, then the release. */
  async graceAfterAbort(): Promise<void> {
    const graceMs = this.graceMs();
    const wait = this.idleWait();
    const [calls, hooks] = await Promise.all([
      this.work.inFlight.whenIdle(graceMs, wait),
      this.work.hookCalls.whenIdle(graceMs, wait),
    ]);
    if (calls + hooks > 0) this.logger.warn(messages.stillRunningAtRelease(this.election(), calls + hooks));
  }

  private graceMs(): number {
    return Math.min(ABORT_GRACE_MS, this.shutdownTimeoutMs);
  }

  /** A drain's wait: on the given clock when there is one, else on a plain timer. */
  private idleWait(signal?: AbortSignal): IdleWait {
    const { clock } = this;
    return { ...(signal ? { signal } : {}), ...(clock ? { clock } : {}) };
  }
}
