import { onSettled } from './metrics/settled.js';

/** Leader work that has run for longer than `stuckAfterMs`. */
export interface StuckWork {
  /** `Class.method` of the `@LeaderOnly` call or `@OnElected` handler. */
  handler: string;
  runningMs: number;
}

interface Running {
  handler: string;
  startedAt: number;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Watches leader work for calls that never end (the failure the Azure Leader Election pattern
 * warns about: the lease is renewed, the work is not done). Observes only; what to do about it —
 * health down, resign — is the caller's `onStuck`.
 */
export class StuckWorkDetector {
  private readonly running = new Set<Running>();

  constructor(
    readonly stuckAfterMs: number,
    private readonly onStuck: (work: StuckWork) => void,
  ) {}

  /** Runs `fn`, reporting it once through `onStuck` if it is still running after `stuckAfterMs`. */
  track<T>(handler: string, fn: () => T): T {
    const work: Running = {
      handler,
      startedAt: performance.now(),
      // Unref'd: a stuck call must not keep a process alive that is otherwise done.
      timer: setTimeout(() => this.onStuck({ handler, runningMs: this.runningMs(work) }), this.stuckAfterMs).unref(),
    };
    this.running.add(work);
    return onSettled(fn, () => {
      clearTimeout(work.timer);
      this.running.delete(work);
    });
  }

  /** The longest-running work past `stuckAfterMs`, read at call time; undefined when none is. */
  oldestStuck(): StuckWork | undefined {
    let oldest: Running | undefined;
    for (const work of this.running) if (!oldest || work.startedAt < oldest.startedAt) oldest = work;
    if (!oldest) return undefined;
    const runningMs = this.runningMs(oldest);
    return runningMs >= this.stuckAfterMs ? { handler: oldest.handler, runningMs } : undefined;
  }

  private runningMs(work: Running): number {
    return performance.now() - work.startedAt;
  }
}
