import { AsyncLocalStorage } from 'node:async_hooks';
import type { Clock, ClockTimer } from '../../lib/shared/clock.js';
import type { Rng } from './rng.js';

/**
 * The simulated world: one true time, one event queue, and a clock per node that may drift,
 * freeze (suspend), be paused with its process (nothing of it runs), step its wall clock, and fire
 * timers early or late. Everything an elector does happens in reaction to an event; after each one
 * the world drains every microtask (a `setImmediate` turn) before time moves, so the awaits inside
 * the elector settle exactly at the simulated instant that caused them.
 */
export interface WorldEvent {
  at: number;
  seq: number;
  /** Owner node: its events wait while it is paused or suspended. */
  node?: string;
  run: () => void | Promise<void>;
}

export interface TimerFaults {
  /** How stale libuv's cached loop time may be when a timer is set (< 1 ms): it then fires early. */
  earlyMs: number;
  /** How late a timer may fire on a busy event loop; must fit inside the safety margin. */
  lateMs: number;
}

export class World {
  now = 0;
  /** Events run so far (a measure of how much each schedule explored). */
  processed = 0;
  /**
   * A running hash of every event run (its instant, owner and sequence number): two runs of one
   * seed must end with the same digest, else something outside the seed (a real timer, I/O, an
   * unseeded random) steered one of them. `SIM_EVENT_LOG=1` also keeps the events as text in `log`,
   * to diff two runs and find the first divergence.
   */
  digest = 0x811c9dc5;
  readonly log: string[] | undefined = process.env.SIM_EVENT_LOG ? [] : undefined;
  private seq = 0;
  private readonly queue: WorldEvent[] = [];
  readonly nodes = new Map<string, NodeClock>();

  constructor(readonly rng: Rng) {}

  schedule(at: number, run: WorldEvent['run'], node?: string): WorldEvent {
    const event = { at: Math.max(at, this.now), seq: this.seq++, node, run };
    this.queue.push(event);
    return event;
  }

  cancel(event: WorldEvent): void {
    const index = this.queue.indexOf(event);
    if (index >= 0) this.queue.splice(index, 1);
  }

  nextSeq(): number {
    return this.seq++;
  }

  /** Runs every event up to `end`; `check(phase)` runs before time moves and after each instant. */
  async runUntil(end: number, check: (phase: 'before' | 'after') => void): Promise<void> {
    let sameInstant = 0;
    for (;;) {
      const peek = this.pickNext(false);
      if (!peek || peek.at > end) break;
      const next = this.pickNext() as WorldEvent;
      if (next.at > this.now) {
        // Acting only grows worse as time passes without events: look at the left limit too.
        this.now = next.at;
        sameInstant = 0;
        check('before');
      }
      if (++sameInstant > LIVELOCK_EVENTS) throw new LivelockError(this.now, sameInstant);
      this.processed += 1;
      this.record(next);
      // The node an event belongs to is the one whose global timers and clocks its code reads.
      await nodeContext.run(next.node, () => next.run());
      await drain();
      const following = this.pickNext(false);
      if (!following || following.at > this.now) check('after');
    }
    if (end > this.now) {
      this.now = end;
      check('before');
    }
  }

  private record(event: WorldEvent): void {
    let h = this.digest;
    const mix = (n: number) => {
      h = Math.imul(h ^ (n | 0), 0x01000193);
    };
    mix(event.seq);
    mix(Math.round(event.at * 1_000));
    mix(Math.floor(event.at / 4_294_967.296));
    for (let i = 0; i < (event.node?.length ?? 0); i++) mix((event.node as string).charCodeAt(i));
    this.digest = h >>> 0;
    this.log?.push(`${event.at.toFixed(3)} ${event.node ?? '-'} #${event.seq}`);
  }

  private pickNext(take = true): WorldEvent | undefined {
    let best: WorldEvent | undefined;
    let bestIndex = -1;
    for (let i = 0; i < this.queue.length; i++) {
      const event = this.queue[i];
      if (event.node && !this.nodes.get(event.node)?.running) continue;
      if (!best || event.at < best.at || (event.at === best.at && event.seq < best.seq)) {
        best = event;
        bestIndex = i;
      }
    }
    let timer: { owner: NodeClock; due: NodeTimer; at: number } | undefined;
    for (const owner of this.nodes.values()) {
      const due = owner.nextTimer();
      if (!due) continue;
      const at = owner.trueTimeOf(due.target);
      if (!timer || at < timer.at || (at === timer.at && due.seq < timer.due.seq)) timer = { owner, due, at };
    }
    if (timer && (!best || timer.at < best.at || (timer.at === best.at && timer.due.seq < best.seq))) {
      const { owner, due, at } = timer;
      if (take) owner.take(due);
      return { at, seq: due.seq, node: owner.name, run: () => due.callback() };
    }
    if (best && take) this.queue.splice(bestIndex, 1);
    return best;
  }
}

/** Events at one instant beyond which the simulation stops: something re-arms without end. */
const LIVELOCK_EVENTS = 100_000;

export class LivelockError extends Error {
  constructor(
    readonly at: number,
    readonly events: number,
  ) {
    super(`${events} events at ${at.toFixed(3)} ms without time moving: a livelock`);
  }
}

interface NodeTimer {
  id: number;
  /** Local monotonic time at which it fires. */
  target: number;
  seq: number;
  callback: () => void;
}

/** One node's clock. Monotonic time runs at `rate` of true time, stopped while suspended. */
export class NodeClock implements Clock {
  /** Process paused (GC, SIGSTOP): clocks run, nothing of the process runs. */
  paused = false;
  /** Machine suspended: the monotonic clock stops too; the wall clock keeps going. */
  private suspended = false;
  /** Process ended: its timers never fire again. */
  dead = false;
  private baseTrue: number;
  private baseMono: number;
  private wallOffset: number;
  private nextId = 1;
  private readonly timers = new Map<number, NodeTimer>();
  /** Every setTimeout ever made, with the true time: a stopped elector must create none. */
  onSetTimeout?: () => void;
  /**
   * Local monotonic time at which the node last ran again after a pause or suspend, or saw its
   * wall clock step forward: from then on a term whose wall deadline has passed must end within
   * one deadline slice (Node has no resume event; only a timer's wake-up can notice).
   */
  wokeAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly name: string,
    private readonly world: World,
    readonly rate: number,
    private readonly faults: TimerFaults,
    monoStart: number,
    wallOffset: number,
  ) {
    this.baseTrue = world.now;
    this.baseMono = monoStart;
    this.wallOffset = wallOffset;
    world.nodes.set(name, this);
  }

  get running(): boolean {
    return !this.paused && !this.suspended && !this.dead;
  }

  get isSuspended(): boolean {
    return this.suspended;
  }

  now(): number {
    if (this.suspended) return this.baseMono;
    return this.baseMono + (this.world.now - this.baseTrue) * this.rate;
  }

  wallNow(): number {
    return this.world.now + this.wallOffset;
  }

  setTimeout(callback: () => void, ms: number): ClockTimer {
    this.onSetTimeout?.();
    const id = this.nextId++;
    const rng = this.world.rng;
    // As Node does: the delay counts whole ms, at least 1 (libuv), from a loop time that may be up
    // to `earlyMs` (< 1 ms) stale — so a timer fires up to ~2 ms early, never at once. Some fire late.
    const delay = Number.isFinite(ms) && ms >= 1 ? Math.floor(ms) : 1;
    const roll = rng.next();
    const error = roll < 0.3 ? -rng.next() * this.faults.earlyMs : roll < 0.45 ? rng.next() * this.faults.lateMs : 0;
    const target = this.now() + delay + error;
    this.timers.set(id, { id, target, seq: this.world.nextSeq(), callback });
    return id;
  }

  clearTimeout(timer: ClockTimer): void {
    this.timers.delete(timer as number);
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  nextTimer(): NodeTimer | undefined {
    if (!this.running) return undefined;
    let best: NodeTimer | undefined;
    for (const timer of this.timers.values()) {
      if (!best || timer.target < best.target || (timer.target === best.target && timer.seq < best.seq)) best = timer;
    }
    return best;
  }

  take(timer: NodeTimer): void {
    this.timers.delete(timer.id);
  }

  /** True time at which local monotonic time reaches `local` (never in the past). */
  trueTimeOf(local: number): number {
    return Math.max(this.world.now, this.baseTrue + (local - this.baseMono) / this.rate);
  }

  suspend(): void {
    this.baseMono = this.now();
    this.baseTrue = this.world.now;
    this.suspended = true;
  }

  resume(): void {
    this.baseTrue = this.world.now;
    this.suspended = false;
    this.wokeAt = this.now();
  }

  unpause(): void {
    this.paused = false;
    this.wokeAt = this.now();
  }

  stepWall(ms: number): void {
    this.wallOffset += ms;
    if (ms > 0) this.wokeAt = this.now();
  }

  kill(): void {
    this.dead = true;
    this.timers.clear();
  }
}

/** The node whose code runs now (an event's owner, carried through its promise chains). */
const nodeContext = new AsyncLocalStorage<string | undefined>();

/** The node whose code runs now (undefined: the world's own). */
export function currentNode(): string | undefined {
  return nodeContext.getStore();
}

/** Runs `fn` as code of node `name` (a check that reads a handle's health reads that node's clock). */
export function inNode<T>(name: string, fn: () => T): T {
  return nodeContext.run(name, fn);
}

/**
 * The handle layer (drain, stuck work, spread, the tick ledger) reads Node's global timers and
 * clocks, not an injected clock: while a simulation runs, `setTimeout`, `performance.now` and
 * `Date` answer from the clock of the node whose event is running, so every replica keeps its
 * own drift, pauses and wall offset. A call outside any node is a model error (it would escape
 * the seed). Returns the function that puts Node's own back.
 */
export function installNodeTimers(world: World, onStray: (what: string) => void): () => void {
  const real = { setTimeout, clearTimeout, performance: globalThis.performance, Date };
  const current = (what: string): NodeClock | undefined => {
    const name = nodeContext.getStore();
    const clock = name === undefined ? undefined : world.nodes.get(name);
    if (!clock) onStray(what);
    return clock;
  };
  const handles = new WeakMap<object, { clock: NodeClock; id: ClockTimer }>();
  const simSetTimeout = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const clock = current('setTimeout');
    if (!clock) return real.setTimeout(callback, ms, ...args);
    const handle = {
      unref: () => handle,
      ref: () => handle,
      hasRef: () => false,
      refresh: () => handle,
      [Symbol.toPrimitive]: () => 0,
    };
    handles.set(handle, { clock, id: clock.setTimeout(() => callback(...args), ms ?? 0) });
    return handle;
  };
  const simClearTimeout = (handle: unknown) => {
    const known = typeof handle === 'object' && handle !== null ? handles.get(handle) : undefined;
    if (known) known.clock.clearTimeout(known.id);
    else real.clearTimeout(handle as NodeJS.Timeout);
  };
  const wall = () => current('Date')?.wallNow() ?? real.Date.now();
  class SimDate extends real.Date {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(wall());
      else super(...(args as [number]));
    }
    static override now(): number {
      return wall();
    }
  }
  const simPerformance = { now: () => current('performance.now')?.now() ?? real.performance.now() };
  const g = globalThis as Record<string, unknown>;
  g.setTimeout = simSetTimeout;
  g.clearTimeout = simClearTimeout;
  g.Date = SimDate;
  Object.defineProperty(globalThis, 'performance', { value: simPerformance, configurable: true, writable: true });
  return () => {
    g.setTimeout = real.setTimeout;
    g.clearTimeout = real.clearTimeout;
    g.Date = real.Date;
    Object.defineProperty(globalThis, 'performance', { value: real.performance, configurable: true, writable: true });
  };
}

/** Lets every promise chain started by the last event settle before simulated time moves. */
function drain(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
