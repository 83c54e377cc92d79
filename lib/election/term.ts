import { messages } from '../leader-election.messages.js';
import type { Clock, ClockTimer } from '../shared/clock.js';
import type { Lease } from '../stores/lease-store.js';

/**
 * One term of leadership: the lease we hold, the deadline we lead until, the term's AbortSignal
 * and the timer that ends it at the deadline.
 */
export class Term {
  private readonly controller = new AbortController();
  private deadlineAt: number;
  private timer?: ClockTimer;

  constructor(
    readonly lease: Lease,
    sentAt: number,
    private readonly clock: Clock,
    private readonly renewDeadlineMs: number,
    private readonly onDeadline: () => void,
  ) {
    this.deadlineAt = sentAt + renewDeadlineMs;
    this.arm();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Monotonic time at which the term ends unless a renewal extends it. */
  get deadline(): number {
    return this.deadlineAt;
  }

  isOver(): boolean {
    return this.clock.now() >= this.deadlineAt;
  }

  remainingMs(): number {
    return this.deadlineAt - this.clock.now();
  }

  /** A renewal sent at `sentAt` succeeded. */
  extend(sentAt: number): void {
    this.deadlineAt = sentAt + this.renewDeadlineMs;
    this.arm();
  }

  /** Wall-clock time (epoch ms) of the deadline, for events and ledgers. */
  validUntil(): number {
    return Date.now() + (this.deadlineAt - this.clock.now());
  }

  end(reason: string): void {
    this.disarm();
    this.controller.abort(new DOMException(messages.termEnded(reason), 'AbortError'));
  }

  disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    this.disarm();
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.onDeadline();
    }, this.deadlineAt - this.clock.now());
  }
}
