import type { LeaseStoreError } from '../shared/errors.js';
import { electionMessages as messages } from './election.messages.js';
import type { ElectorHealth, ElectorLogger } from './elector.types.js';

const STILL_FAILING_EVERY = 10;

/** How the store has been answering lately: feeds logs, `status()` and `health()`. */
export class FailureLog {
  consecutiveFailures = 0;
  lastError?: LeaseStoreError;
  private failingSince = 0;

  constructor(
    private readonly election: string,
    private readonly storeName: string,
    private readonly logger: ElectorLogger,
  ) {}

  noteSuccess(): void {
    if (this.consecutiveFailures > 0) this.logger.log(messages.storeRecovered(this.election, this.storeName));
    this.consecutiveFailures = 0;
  }

  /** `sentAt`: when the failed call was sent, so "failing for" counts from the first failed attempt. */
  noteFailure(error: LeaseStoreError, sentAt: number, log: boolean): void {
    const changed = error.kind !== this.lastError?.kind || error.message !== this.lastError?.message;
    if (this.consecutiveFailures === 0) this.failingSince = sentAt;
    this.consecutiveFailures += 1;
    this.lastError = error;
    if (!log) return;
    if (this.consecutiveFailures === 1 || changed) {
      const line = messages.storeFailing(this.election, this.storeName, error.kind, error.message);
      if (error.kind === 'fatal') this.logger.error(line);
      else this.logger.warn(line);
    } else if (this.consecutiveFailures % STILL_FAILING_EVERY === 0) {
      this.logger.warn(messages.storeStillFailing(this.election, this.storeName, this.consecutiveFailures));
    }
  }

  /** Unhealthy when the store refuses us (auth/config) or has been failing for `unhealthyAfterMs`. */
  health(now: number, unhealthyAfterMs: number): ElectorHealth {
    if (this.consecutiveFailures > 0 && this.lastError) {
      if (this.lastError.kind === 'fatal') return { healthy: false, reason: this.lastError.message };
      if (now - this.failingSince >= unhealthyAfterMs) {
        return {
          healthy: false,
          reason: messages.unhealthyFailing(this.consecutiveFailures, this.lastError.message),
        };
      }
    }
    return { healthy: true };
  }

  /** The error to show in `status()`: only while the store is still failing. */
  get currentError(): { kind: string; message: string } | null {
    return this.consecutiveFailures > 0 && this.lastError
      ? { kind: this.lastError.kind, message: this.lastError.message }
      : null;
  }
}
