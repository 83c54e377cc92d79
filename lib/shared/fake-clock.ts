import type { Clock, ClockTimer } from './clock.js';

/**
 * How the fake clock's timers misfire, the way real ones do.
 * @inline
 */
export interface TimerSkew {
  /**
   * Every timer fires this many ms before it is due (Node fires up to ~1 ms early), though never
   * sooner than 1 ms after it was set unless its delay was shorter.
   */
  earlyMs?: number;
  /** Every timer fires this many ms after it is due (a busy event loop, a GC pause). */
  lateMs?: number;
}

/**
 * A clock for tests: time moves only when told. `advance` runs due timers in order (awaiting
 * microtasks between them, so promise chains settle); `jump` moves time without running any
 * timer, the way a long GC or SIGSTOP pause looks to a process.
 */
export class FakeClock implements Clock {
  /** Misfire of timers set from now on; may be changed at any time. */
  skew: TimerSkew;
  private current = 0;
  /** Wall time minus monotonic time: moves on a suspend or a wall-clock step. */
  private wallOffset = 1_700_000_000_000;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();

  constructor(start = 1_000, skew: TimerSkew = {}) {
    this.current = start;
    this.skew = skew;
  }

  now(): number {
    return this.current;
  }

  wallNow(): number {
    return this.current + this.wallOffset;
  }

  /** Schedules `callback` at now + `ms` (shifted by `skew`); it runs only inside `advance`. */
  setTimeout(callback: () => void, ms: number): ClockTimer {
    const id = this.nextId++;
    const delay = Math.max(0, ms);
    const early = Math.min(this.skew.earlyMs ?? 0, Math.max(0, delay - 1));
    this.timers.set(id, { at: this.current + delay - early + (this.skew.lateMs ?? 0), callback });
    return id;
  }

  /** Cancels a pending timer. */
  clearTimeout(timer: ClockTimer): void {
    this.timers.delete(timer as number);
  }

  /** Number of pending timers (a stopped elector must leave none). */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Number of timers ever set (a stopped elector must set no more). */
  get timersSet(): number {
    return this.nextId - 1;
  }

  /** When the pending timers will fire, soonest first. */
  dueTimes(): number[] {
    return [...this.timers.values()].map((t) => t.at).sort((a, b) => a - b);
  }

  /** Both clocks move `ms` forward and no timer runs: what a GC or SIGSTOP pause looks like to the process. */
  jump(ms: number): void {
    this.current += ms;
  }

  /**
   * A whole-machine suspend (VM paused, laptop asleep): the wall clock moves on, the monotonic
   * clock (CLOCK_MONOTONIC on Linux) does not, and no timer runs meanwhile.
   */
  suspend(ms: number): void {
    this.stepWall(ms);
  }

  /** The wall clock alone steps (NTP correction, manual change): forward or, if negative, back. */
  stepWall(ms: number): void {
    this.wallOffset += ms;
  }

  /**
   * Moves time `ms` forward, running each timer that falls due on the way, in order, with pending
   * promise chains settled between them.
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await flushMicrotasks();
      let due: [number, { at: number; callback: () => void }] | undefined;
      for (const entry of this.timers) {
        if (entry[1].at <= target && (!due || entry[1].at < due[1].at)) due = entry;
      }
      if (!due) break;
      this.timers.delete(due[0]);
      this.current = Math.max(this.current, due[1].at);
      due[1].callback();
    }
    this.current = target;
    await flushMicrotasks();
  }
}

async function flushMicrotasks(): Promise<void> {
  // A few macrotask-free turns let chained awaits inside the elector settle.
  for (let i = 0; i < 100; i++) await Promise.resolve();
}
