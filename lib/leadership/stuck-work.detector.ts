import { type Clock, type ClockTimer, systemClock } from '../shared/clock.js';
import { onSettled } from './settled.js';

/**
 * A handler's own threshold: milliseconds after which one of its calls counts as stuck, or `false`
 * for work that legitimately runs for as long as the term (a queue pump) and is never stuck.
 * @inline
 */
export type StuckAfter = number | false;

/** The longest delay a Node timer honours (2^31 − 1 ms, about 24.8 days); a longer one fires at once. */
export const MAX_STUCK_AFTER_MS = 2_147_483_647;

/** A valid threshold in milliseconds: a whole number a timer honours. */
export function isStuckAfterMs(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_STUCK_AFTER_MS;
}

/** Leader work that has run for longer than its `stuckAfterMs`. */
export interface StuckWork {
  /** `Class.method` of the `@LeaderOnly` call or `@OnElected` handler, or the name given to `runIfLeader`. */
  handler: string;
  runningMs: number;
  /** The threshold it passed (the handler's own, or the module's). */
  stuckAfterMs: number;
}

interface Running {
  handler: string;
  stuckAfterMs: number;
  startedAt: number;
  timer: ClockTimer;
}

/**
 * Watches leader work for calls that never end (the failure the Azure Leader Election pattern
 * warns about: the lease is renewed, the work is not done). Observes only; what to do about it —
 * health down, resign — is the caller's `onStuck`.
 *
 * Each handler is watched with its own threshold when it declared one (`false`: never), else the
 * module's `stuckAfterMs` (undefined: not watched).
 */
export class StuckWorkDetector {
  private readonly running = new Set<Running>();
  /** Thresholds handlers declared at startup, by handler. */
  private readonly thresholds = new Map<string, StuckAfter>();
  /** Every handler watched so far: each has a stuck-work series (0 while not stuck) from then on. */
  private readonly watched = new Set<string>();

  constructor(
    private readonly defaultStuckAfterMs: number | undefined,
    private readonly onStuck: (work: StuckWork) => void,
    /** A test's clock (the simulation's); the system clock's timers are unref'd. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** Records `handler`'s own threshold (undefined: the module's); a watched handler is listed at once. */
  declare(handler: string, stuckAfterMs: StuckAfter | undefined): void {
    if (stuckAfterMs !== undefined) this.thresholds.set(handler, stuckAfterMs);
    if (this.thresholdOf(handler) !== undefined) this.watched.add(handler);
  }

  /** Runs `fn`, reporting it once through `onStuck` if it is still running after its handler's threshold. */
  track<T>(handler: string, fn: () => T): T {
    const stuckAfterMs = this.thresholdOf(handler);
    if (stuckAfterMs === undefined) return fn();
    this.watched.add(handler);
    const work: Running = {
      handler,
      stuckAfterMs,
      startedAt: this.clock.now(),
      // Unref'd (systemClock): a stuck call must not keep a process alive that is otherwise done.
      timer: this.clock.setTimeout(
        () => this.onStuck({ handler, runningMs: this.runningMs(work), stuckAfterMs }),
        stuckAfterMs,
      ),
    };
    this.running.add(work);
    return onSettled(fn, () => {
      this.clock.clearTimeout(work.timer);
      this.running.delete(work);
    });
  }

  /** The longest-running work past its threshold, read at call time; undefined when none is. */
  oldestStuck(): StuckWork | undefined {
    let oldest: StuckWork | undefined;
    for (const work of this.stuck()) if (!oldest || work.runningMs > oldest.runningMs) oldest = work;
    return oldest;
  }

  /**
   * For the stuck-work gauge: every watched handler with how long its longest-running stuck call
   * has run (ms), 0 when none of its calls is stuck.
   */
  stuckByHandler(): Map<string, number> {
    const byHandler = new Map<string, number>();
    for (const handler of this.watched) byHandler.set(handler, 0);
    for (const { handler, runningMs } of this.stuck()) {
      byHandler.set(handler, Math.max(runningMs, byHandler.get(handler) ?? 0));
    }
    return byHandler;
  }

  private *stuck(): Generator<StuckWork> {
    for (const work of this.running) {
      const runningMs = this.runningMs(work);
      if (runningMs >= work.stuckAfterMs) yield { handler: work.handler, runningMs, stuckAfterMs: work.stuckAfterMs };
    }
  }

  private thresholdOf(handler: string): number | undefined {
    const own = this.thresholds.get(handler);
    if (own === false) return undefined;
    return own ?? this.defaultStuckAfterMs;
  }

  private runningMs(work: Running): number {
    return this.clock.now() - work.startedAt;
  }
}
