import type { Clock, ClockTimer } from '../shared/clock.js';
import type { Lease } from '../stores/lease-store.js';
import { electionMessages as messages } from './election.messages.js';

/** When a successful acquire/renew was sent, on both clocks. */
export interface SentAt {
  mono: number;
  wall: number;
}

export function sentNow(clock: Clock): SentAt {
  return { mono: clock.now(), wall: clock.wallNow() };
}

export const MIN_DEADLINE_SLICE_MS = 50;

/**
 * The deadline timer never sleeps longer than this while leading: it runs on the monotonic clock,
 * which stands still during a machine suspend, so only a wake-up can see that the wall-clock
 * deadline passed meanwhile (Node has no resume event). After a resume or a wall step forward the
 * term ends within one slice of the process running again (plus the timer's lateness). A sixteenth
 * of `renewDeadlineMs` is at most a quarter of any margin validation accepts (margin ≥ lease/5 ≥
 * renewDeadlineMs/4); the 50 ms floor caps the cost at 20 timer wake-ups a second while leading.
 */
export function deadlineSliceMs(renewDeadlineMs: number): number {
  return Math.max(MIN_DEADLINE_SLICE_MS, renewDeadlineMs / 16);
}

/**
 * One term of leadership: the lease we hold, the deadline we lead until, the term's AbortSignal
 * and the timer that ends it at the deadline.
 *
 * The deadline is kept on both clocks, counted from the same send instant, and the earlier one
 * wins: the monotonic clock stops during a machine suspend (the wall one does not), the wall clock
 * may step back (the monotonic one does not). A wall clock stepping forward can end a term early
 * (one spurious step-down, safe); nothing can extend it.
 */
export class Term {
  private readonly controller = new AbortController();
  private monoDeadline: number;
  private wallDeadline: number;
  private timer?: ClockTimer;
  private onDeadline?: () => void;
  private readonly sliceMs: number;

  constructor(
    readonly lease: Lease,
    sent: SentAt,
    private readonly clock: Clock,
    private readonly renewDeadlineMs: number,
  ) {
    this.monoDeadline = sent.mono + renewDeadlineMs;
    this.wallDeadline = sent.wall + renewDeadlineMs;
    this.sliceMs = deadlineSliceMs(renewDeadlineMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Past the deadline on either clock. */
  isOver(): boolean {
    return this.remainingMs() <= 0;
  }

  /** Time left on the earlier of the two deadlines (≤ 0 once over). */
  remainingMs(): number {
    return Math.min(this.monoDeadline - this.clock.now(), this.wallDeadline - this.clock.wallNow());
  }

  /** Calls `onDeadline` at the deadline (see {@link arm}); from now on every extension re-arms. */
  start(onDeadline: () => void): void {
    this.onDeadline = onDeadline;
    this.arm();
  }

  /** A renewal sent at `sent` succeeded. */
  extend(sent: SentAt): void {
    this.monoDeadline = sent.mono + this.renewDeadlineMs;
    this.wallDeadline = sent.wall + this.renewDeadlineMs;
    this.arm();
  }

  /** Wall-clock time (epoch ms) of the deadline, for events and ledgers. */
  validUntil(): number {
    return this.clock.wallNow() + this.remainingMs();
  }

  end(reason: string): void {
    this.disarm();
    this.controller.abort(new DOMException(messages.termEnded(reason), 'AbortError'));
  }

  disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Timers fire early (Node: up to ~1 ms, it counts in whole loop milliseconds) or late (a busy
   * event loop). Early: re-armed for the rest, so the step-down is never postponed to the next
   * renew tick. Not over for another reason (the wall clock stepped back after arming): re-armed
   * for what is left. Late: nothing to do here; every public read checks the deadline itself.
   * The timer sleeps at most one slice ({@link deadlineSliceMs}): a suspend stops the monotonic
   * clock it runs on, and the wall-clock deadline is only seen when it wakes.
   */
  private arm(): void {
    this.disarm();
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        if (this.isOver()) this.onDeadline?.();
        else this.arm();
      },
      Math.max(0, Math.min(this.remainingMs(), this.sliceMs)),
    );
  }
}
