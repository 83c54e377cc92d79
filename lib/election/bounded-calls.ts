import { untilAborted } from '../shared/abort.js';
import { type Clock, type ClockTimer, timeoutSignal } from '../shared/clock.js';
import { leaderElectionChannels as channels, publishOn, type StoreCallName } from '../shared/diagnostics-channels.js';
import { toLeaseStoreError } from '../shared/errors.js';
import type { Lease, LeaseStore, LeaseWatch } from '../stores/lease-store.js';
import { electionMessages as messages } from './election.messages.js';
import type { ElectorLogger } from './elector.types.js';

/**
 * Every store call the elector makes, each under a timeout (and under `stop()` unless told
 * otherwise), plus what still runs after we stopped waiting (late answers of calls that ignored
 * their signal, releases), so `stop()` can wait for it and then start nothing more. (The store's
 * own side of a call is `StoreCallKit` in stores/store-support.ts.)
 */
export class BoundedElectorCalls {
  /** Calls we stopped waiting for, until their answer has been dealt with (`onLate`). */
  private readonly lateAnswers = new Set<Promise<unknown>>();
  private readonly releases = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    private readonly store: LeaseStore,
    private readonly election: string,
    private readonly clock: Clock,
    private readonly logger: ElectorLogger,
    private readonly stopSignal: AbortSignal,
    /** Bound of a follower's call and of a release: see {@link Elector} for why. */
    private readonly callTimeoutMs: number,
    /** Who we are and our term, for the `storeCallFailed` diagnostics channel. */
    private readonly caller: { identity: string; term(): number | undefined },
  ) {}

  /**
   * One store call under a timeout (and under `stop()` unless `stoppable` is false). Stores should
   * honour the signal; if one does not, we stop waiting at the timeout anyway, so a misbehaving
   * store can stall neither the loop nor shutdown. `onLate` gets a result that came after that
   * (our own guard for third-party stores; the built-in ones undo a late win themselves).
   */
  call<T>(
    what: StoreCallName,
    timeoutMs: number,
    call: (signal: AbortSignal) => Promise<T>,
    onLate?: (value: T) => unknown,
    stoppable = true,
  ): Promise<T> {
    const parent = stoppable ? this.stopSignal : undefined;
    const { signal, dispose } = timeoutSignal(this.clock, timeoutMs, parent);
    const answer = (async () => call(signal))();
    const onAbandoned =
      onLate &&
      (() =>
        void track(
          this.lateAnswers,
          answer.then(onLate, () => undefined),
        ));
    const result = untilAborted(signal, answer, onAbandoned).finally(dispose);
    if (!channels.storeCallFailed.hasSubscribers) return result;
    return result.catch((raw: unknown) => {
      // Our own stop() aborting a call is no failure of the store.
      if (!(stoppable && this.stopSignal.aborted)) this.publishFailure(what, raw);
      throw raw;
    });
  }

  private publishFailure(call: StoreCallName, raw: unknown): void {
    const { kind, message } = toLeaseStoreError(raw);
    const { election, store } = this;
    const { identity } = this.caller;
    publishOn('storeCallFailed', {
      election,
      identity,
      term: this.caller.term(),
      store: store.name,
      call,
      kind,
      message,
    });
  }

  /**
   * Hand `lease` back, best effort: a failure is logged, never thrown. With `reservation`, the store
   * keeps the freed lease for the named identity for a while (a directed handover); when that
   * release fails for any reason (the store refuses the reservation, or the call failed), the lease
   * is released again without one: otherwise it would block everyone, the heir included, until it
   * expires (hours, with a long lease). A second release is always safe: it is conditional on our
   * lease id and never touches a reservation already written. After {@link drain} nothing starts
   * any more; the lease then expires by itself.
   */
  release(lease: Lease, reservation?: { handoverTo: string; reserveMs: number }): Promise<void> {
    if (this.closed) {
      this.logger.warn(messages.releaseAfterStop(this.election, lease.term));
      return Promise.resolve();
    }
    const plain = () =>
      this.call('release', this.callTimeoutMs, (signal) => this.store.release(lease, { signal }), undefined, false);
    const release = reservation
      ? this.call(
          'release',
          this.callTimeoutMs,
          (signal) => this.store.release(lease, { signal, ...reservation }),
          undefined,
          false,
        ).catch((raw) => {
          const { handoverTo, reserveMs } = reservation;
          const why = toLeaseStoreError(raw).message;
          this.logger.warn(messages.reservationRefused(this.election, handoverTo, reserveMs, why));
          return plain();
        })
      : plain();
    return track(
      this.releases,
      release.catch((raw) => this.logger.warn(messages.releaseFailed(this.election, toLeaseStoreError(raw).message))),
    );
  }

  /** Opens the store's push watch, if it has one; a failure is logged: polls still find a free lease. */
  openWatch(onMayBeFree: () => void): LeaseWatch | undefined {
    if (!this.store.watch) return undefined;
    try {
      return this.store.watch(this.election, onMayBeFree);
    } catch (raw) {
      this.logger.warn(messages.watchFailed(this.election, toLeaseStoreError(raw).message));
      return undefined;
    }
  }

  /**
   * For `stop()`: closes the store's watch, waiting at most one call timeout. An unwatch may wait
   * for the server (an etcd watch cancel), which a black-holed connection never answers; the
   * built-in stores bound it themselves, this bounds a third-party store's.
   */
  async closeWatch(watch: LeaseWatch | undefined): Promise<void> {
    if (!watch) return;
    let timer: ClockTimer | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = this.clock.setTimeout(resolve, this.callTimeoutMs);
    });
    const closed = (async () => watch.close())().catch(() => undefined);
    await Promise.race([closed, bound]);
    this.clock.clearTimeout(timer);
  }

  /**
   * For `stop()`: waits for the late answers of abandoned calls (at most `answersWithinMs`; later
   * ones are ignored) and for every release (each bounded by its own timeout). Afterwards no call,
   * release or timer of ours starts.
   */
  async drain(answersWithinMs: number): Promise<void> {
    if (this.lateAnswers.size > 0) {
      let timer: ClockTimer | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = this.clock.setTimeout(resolve, answersWithinMs);
      });
      await Promise.race([Promise.all(this.lateAnswers), bound]);
      this.clock.clearTimeout(timer);
    }
    this.closed = true;
    while (this.releases.size > 0) await Promise.all(this.releases);
  }
}

function track<T>(set: Set<Promise<unknown>>, work: Promise<T>): Promise<T> {
  const tracked = work.finally(() => set.delete(tracked));
  set.add(tracked);
  return tracked;
}
