import { messages } from '../leader-election.messages.js';
import { untilAborted } from '../shared/abort.js';
import { type Clock, timeoutSignal } from '../shared/clock.js';
import { type Lease, type LeaseStore, toLeaseStoreError } from '../stores/lease-store.js';
import type { ElectorLogger } from './elector.types.js';

/**
 * Every store call the elector makes, each under a timeout (and under `stop()` unless told
 * otherwise), plus the releases still running, so `stop()` can wait for them.
 */
export class StoreCalls {
  private readonly releases = new Set<Promise<void>>();

  constructor(
    private readonly store: LeaseStore,
    private readonly election: string,
    private readonly clock: Clock,
    private readonly logger: ElectorLogger,
    private readonly stopSignal: AbortSignal,
    /** Bound of a follower's call and of a release: see {@link Elector} for why. */
    private readonly callTimeoutMs: number,
  ) {}

  /**
   * One store call under a timeout (and under `stop()` unless `stoppable` is false). Stores should
   * honour the signal; if one does not, we stop waiting at the timeout anyway, so a misbehaving
   * store can stall neither the loop nor shutdown. `onLate` gets a result that came after that.
   */
  call<T>(
    timeoutMs: number,
    call: (signal: AbortSignal) => Promise<T>,
    onLate?: (value: T) => unknown,
    stoppable = true,
  ): Promise<T> {
    const parent = stoppable ? this.stopSignal : undefined;
    const { signal, dispose } = timeoutSignal(this.clock, timeoutMs, parent);
    const answer = (async () => call(signal))();
    return untilAborted(signal, answer, () => onLate && answer.then(onLate, () => undefined)).finally(dispose);
  }

  /** Hand `lease` back, best effort: a failure is logged, never thrown. */
  release(lease: Lease): Promise<void> {
    const release = this.call(this.callTimeoutMs, (signal) => this.store.release(lease, { signal }), undefined, false)
      .catch((raw) => this.logger.warn(messages.releaseFailed(this.election, toLeaseStoreError(raw).message)))
      .finally(() => this.releases.delete(release));
    this.releases.add(release);
    return release;
  }

  /** Resolves once every release started so far has ended. */
  async settled(): Promise<void> {
    await Promise.all(this.releases);
  }
}
