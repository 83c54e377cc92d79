import { messages } from '../leader-election.messages.js';

/**
 * Time source of the elector. Monotonic (performance.now), so a wall-clock step (NTP, DST) can
 * neither extend nor cut a lease. Timers go through the clock too, so tests can drive them.
 */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

export type ClockTimer = unknown;

export const systemClock: Clock = {
  now: () => performance.now(),
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

/**
 * A clock for tests: time moves only when told. `advance` runs due timers in order (awaiting
 * microtasks between them, so promise chains settle); `jump` moves time without running any
 * timer, the way a long GC or SIGSTOP pause looks to a process.
 */
export class FakeClock implements Clock {
  private current = 0;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();

  constructor(start = 1_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
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
