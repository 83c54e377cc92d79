import { leadershipMessages as messages } from './leadership.messages.js';

/**
 * A step-down the runtime started, for the one term it applies to: a new term starts clean, so an
 * abandoned handover (its term ended mid-drain) never keeps a later term from acting.
 */
export interface StepDown {
  term: number;
  /** When it started, on the runtime's clock: health bounds how long the lease may be held meanwhile. */
  since: number;
  /** A handover drain (lasts up to shutdownTimeoutMs) rather than a resignation (immediate). */
  drains: boolean;
  /** The term has ended and the handover's grace and release are under way. */
  releasing: boolean;
}

/** What the step-down rules read of the election at call time. */
export interface StepDownView {
  /** The elector holds the lease (before its deadline), whatever the app does with it. */
  holdsLease(): boolean;
  /** The elector's current term. */
  readonly term: number | undefined;
}

/**
 * Whether this replica may start leader-only work while it holds the lease: the shutdown, handover
 * or resignation under way, each bound to the term it started in. Every answer is derived at call
 * time from the term it was set for, so no flag ever applies to a later term.
 */
export class StepDownState {
  private step?: StepDown;
  /** When shutdown started (runtime clock): stepping down for good, whatever the term. */
  private shutdownSince?: number;

  constructor(
    private readonly view: StepDownView,
    /** Called after every change (the runtime's `isLeader$` and skip-log count follow it). */
    private readonly changed: () => void,
  ) {}

  get current(): StepDown | undefined {
    return this.step;
  }

  /**
   * True when leader-only work may not start in the current term (the lease may still be ours). The
   * term is read only when a step-down is under way: the leader's hot path asks this on every call.
   */
  blocks(): boolean {
    if (this.shutdownSince !== undefined) return true;
    const step = this.step;
    return step !== undefined && step.term === this.view.term;
  }

  /** See `ElectionHandle.isSteppingDown`. */
  isSteppingDown(term: number | undefined): boolean {
    if (this.shutdownSince !== undefined) return true;
    const step = this.step;
    if (!step) return false;
    return term === undefined ? step.releasing : step.term === term;
  }

  set(step: StepDown | undefined): void {
    if (this.step === step) return;
    this.step = step;
    this.changed();
  }

  /** Stepping down for good: nothing starts from here on. */
  shutdown(now: number): void {
    this.shutdownSince = now;
    this.changed();
  }

  /** No flag outlives its term (the release phase of a handover comes after the revoke). */
  revoked(term: number | undefined): void {
    const step = this.step;
    if (step && !step.releasing && step.term === term) this.step = undefined;
  }

  /**
   * Rule (health tells the truth): a replica whose elector holds the lease either acts as leader
   * (`isLeader()`), or is stepping down for that very term within the step-down's bound — a
   * handover or shutdown drain: shutdownTimeoutMs + renewIntervalMs from its start (the drain waits
   * shutdownTimeoutMs at most, then the term ends at once; one renew interval of slack for a loaded
   * event loop); a resignation: renewIntervalMs. Anything else — no step-down under way for this
   * term, or one past its bound — is a lease held by a replica that does no leader work, which only
   * health can reveal: the reason says so. Read at call time, so a probe sees it at once.
   */
  notActing(acting: boolean, now: number, shutdownTimeoutMs: number, renewIntervalMs: number): string | undefined {
    if (!this.view.holdsLease() || acting) return undefined;
    const term = this.view.term;
    const step = this.step;
    let what: string;
    let since: number;
    let boundMs = renewIntervalMs;
    if (this.shutdownSince !== undefined) {
      [what, since] = [messages.notActingShutdown, this.shutdownSince];
      boundMs += shutdownTimeoutMs;
    } else if (step && step.term === term) {
      [what, since] = [step.drains ? messages.notActingHandover : messages.notActingResign, step.since];
      if (step.drains) boundMs += shutdownTimeoutMs;
    } else {
      return messages.unhealthyNotActing(term, messages.notActingUnexplained);
    }
    const forMs = now - since;
    return forMs > boundMs
      ? messages.unhealthyNotActing(term, messages.notActingOverdue(what, forMs, boundMs))
      : undefined;
  }
}
