import type { Clock, ClockTimer } from './clock.js';

/**
 * A clock for tests: time moves only when told. `advance` runs due timers in order (awaiting
 * microtasks between them, so promise chains settle); `jump` moves time without running any
 * timer, the way a long GC or SIGSTOP pause looks to a process.
 */
export class FakeClock implements Clock {
  private current = 0;
  /** Wall time minus monotonic time: moves on a suspend or a wall-clock step. */
  private wallOffset = 1_700_000_000_000;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();

  constructor(start = 1_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  wallNow(): number {
    return this.current + this.wallOffset;
  }

  setTimeout(callback: () => void, ms: number): ClockTimer {
    const id = this.nextId++;
    this.timers.set(id, { at: this.current + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(timer: ClockTimer): void {
    this.timers.delete(timer as number);
  }

  /** Number of pending timers (a stopped elector must leave none). */
  get pendingTimers(): number {
    return this.timers.size;
  }

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
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
