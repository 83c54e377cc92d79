import { randomUUID } from 'node:crypto';
import { settleWithin, throwIfAborted, untilAborted } from '../shared/abort.js';
import { LeaseStoreError, TransientLeaseStoreError } from '../shared/errors.js';
import type { AcquireRequest, AcquireResult, LeaseStoreLimits, LeaseWatch } from './lease-store.js';
import { storeMessages as messages } from './store.messages.js';

/**
 * What every store shares, so that a store file is its protocol and nothing else:
 * - {@link StoreCallKit}: call bookkeeping (pending clean-ups, closing, ended), the abort-aware
 *   run → classify, the "closed" check, close() with a grace period, and the one rule for
 *   acquires of unknown outcome;
 * - {@link WatchFanOut}: the election → callbacks fan-out of push watches;
 * - construction checks (connection URL, key prefix), driver error codes, server-clock limits.
 * The leader-state rules live in state-support.ts, the handover encodings in handover-support.ts,
 * the capability guards in the contract (lease-store.ts).
 *
 * Composition rather than a base class: the stores differ in what a connection is (a pool, one
 * client, an HTTP pipeline, nothing at all), and each uses only the parts it needs — a base class
 * would need generics and abstract hooks for every difference, and would put `protected` state in
 * the published types of every store.
 */

/** How long close() waits for in-flight clean-ups before ending connections anyway. */
const CLOSE_GRACE_MS = 5_000;

/**
 * A store built from {@link StoreCallKit} settles `close()` within this, whatever its server does
 * (even when it never answers on a connection that stays open): one grace for the watches and the
 * pending clean-ups together, one for ending the connections.
 */
export const STORE_CLOSE_BOUND_MS = 2 * CLOSE_GRACE_MS;

/** Refuses to start another request once the call's signal aborted (call it between requests). */
export type Step = () => void;

export interface StoreCallKitOptions {
  /** The store's name, for the "closed" error. */
  name: string;
  /** Turns what a driver threw into a typed outcome (a LeaseStoreError is passed through as is). */
  classify(error: unknown): LeaseStoreError;
  /** A fresh lease id, chosen before the acquire is sent. Default: a random UUID. */
  newLeaseId?: () => string;
  /**
   * Called with true when a first call starts and with false when the last one ended: a store can
   * then let its idle connection stop holding the process (unref) without dropping one in use.
   */
  onBusy?: (busy: boolean) => void;
}

/**
 * One acquire attempt in the store's protocol. `attempt` must use `leaseId` as the id of the lease
 * it takes, and throw for anything but a clear answer (taken, or held by someone else).
 */
export interface AcquireProtocol {
  attempt(leaseId: string, step: Step): Promise<AcquireResult>;
  /**
   * Give back whatever `attempt` may have taken under `leaseId`, whatever its term: conditional on
   * that id alone, which nobody else knows, so it can never release another holder's lease.
   */
  releaseAttempt(leaseId: string, signal: AbortSignal): Promise<unknown>;
}

/**
 * A store's side of every call (run, acquire, track, close), one per store instance. Not to be confused
 * with the elector's side, `BoundedElectorCalls` (election/bounded-calls.ts), which bounds each call
 * the elector makes to a store.
 */
export class StoreCallKit {
  /** Clean-ups of acquires of unknown outcome; close() lets them finish before ending connections. */
  private readonly pending = new Set<Promise<unknown>>();
  /**
   * Aborted once a close's grace is over: a give-back still waiting on a silent server must not
   * hold its socket (and the process) open for a whole lease; that lease then expires by itself.
   */
  private abandoned = new AbortController();
  private closing?: Promise<void>;
  private ended = false;
  private inFlight = 0;

  constructor(private readonly options: StoreCallKitOptions) {}

  /** Throws once close() has ended (or begun ending) the store's connections. */
  assertOpen(): void {
    if (this.ended) throw new TransientLeaseStoreError(messages.backend.closed(this.options.name));
  }

  /**
   * `work` bounded by `signal`: the call settles (with a TransientLeaseStoreError) as soon as the
   * signal aborts, even when the driver cannot take a request back; the abandoned work runs to its
   * end in the background, and `step` refuses to send another request after the abort.
   */
  async run<T>(signal: AbortSignal, work: (step: Step) => Promise<T>): Promise<T> {
    return this.answer(signal, this.start(signal, work));
  }

  /**
   * The one rule for acquires of unknown outcome: anything but a clear answer (an error, a
   * timeout, an abort, a lost reply) may have taken the lease. The attempt's fresh lease id is then
   * released at once, and again once the abandoned request has settled, so a request landing late
   * leaves no orphan. Always safe: nobody else knows that id. Another instance then leads within
   * the call timeout plus one retry, never a whole lease later.
   */
  async acquire(request: AcquireRequest, protocol: AcquireProtocol): Promise<AcquireResult> {
    const { signal, leaseDurationMs } = request;
    const leaseId = this.options.newLeaseId?.() ?? randomUUID();
    // start() refuses an aborted signal or a closed store before anything is sent: nothing to undo.
    const running = this.start(signal, (step) => protocol.attempt(leaseId, step));
    try {
      return await this.answer(signal, running);
    } catch (error) {
      // Past the lease duration the attempt's lease has expired anyway.
      const abandoned = this.abandoned.signal;
      const giveBack = () =>
        abandoned.aborted
          ? Promise.resolve()
          : protocol.releaseAttempt(leaseId, AbortSignal.any([AbortSignal.timeout(leaseDurationMs), abandoned]));
      this.track(giveBack());
      this.track(running.then(giveBack, giveBack));
      throw error;
    }
  }

  /** Keeps a background clean-up (its failure ignored) until it ends; close() waits for it. */
  track(work: Promise<unknown>): void {
    const tracked = work.catch(() => undefined).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  /**
   * Idempotent, and settles within {@link STORE_CLOSE_BOUND_MS} whatever the server does: stops
   * the watches while pending clean-ups finish (both together up to {@link CLOSE_GRACE_MS}: an
   * unwatch — UNLISTEN, a watch cancel, a connection's goodbye — may wait for an answer that never
   * comes on a black-holed connection), refuses further calls, then ends the connections the store
   * opened itself (waiting for that up to {@link CLOSE_GRACE_MS} too; a driver may wait for a reply
   * before it lets a connection go). What is still waiting then is abandoned, never awaited.
   */
  close(steps: { stopWatching?: () => Promise<unknown>; disconnect?: () => Promise<unknown> | unknown }) {
    this.closing ??= (async () => {
      await this.settlePending([Promise.resolve().then(steps.stopWatching)]);
      this.ended = true;
      await settleWithin([Promise.resolve().then(steps.disconnect)], CLOSE_GRACE_MS);
    })();
    return this.closing;
  }

  /**
   * Waits for the pending clean-ups (and `alongside`), up to {@link CLOSE_GRACE_MS}, then abandons
   * those still running (a store that stays usable after this gets a fresh controller for later ones).
   */
  async settlePending(alongside: Promise<unknown>[] = []): Promise<void> {
    await settleWithin([...this.pending, ...alongside], CLOSE_GRACE_MS);
    this.abandoned.abort();
    this.abandoned = new AbortController();
  }

  private start<T>(signal: AbortSignal, work: (step: Step) => Promise<T>): Promise<T> {
    throwIfAborted(signal);
    this.assertOpen();
    const step: Step = () => throwIfAborted(signal);
    if (this.inFlight++ === 0) this.options.onBusy?.(true);
    // Through an async function, so a synchronous throw becomes a rejection like any other.
    const running = (async () => work(step))();
    const done = () => {
      if (--this.inFlight === 0) this.options.onBusy?.(false);
    };
    running.then(done, done);
    return running;
  }

  private async answer<T>(signal: AbortSignal, running: Promise<T>): Promise<T> {
    try {
      return await untilAborted(signal, running);
    } catch (error) {
      throw error instanceof LeaseStoreError ? error : this.options.classify(error);
    }
  }
}

/**
 * The election → callbacks fan-out of a push watch: one connection (LISTEN, SUBSCRIBE, in-process
 * map) serves every watched election. `onFirst` runs when the first watcher arrives and `onEmpty`
 * when the last one leaves, so a store holds its watch connection only while someone listens (and
 * a stopped elector leaves nothing behind that keeps the process alive).
 */
export class WatchFanOut {
  private readonly watchers = new Map<string, Set<() => void>>();

  constructor(private readonly hooks: { onFirst?: () => void; onEmpty?: () => void } = {}) {}

  get size(): number {
    return this.watchers.size;
  }

  add(election: string, onMayBeFree: () => void): LeaseWatch {
    const first = this.watchers.size === 0;
    const set = this.watchers.get(election) ?? new Set();
    this.watchers.set(election, set);
    // Wrapped, so the same callback added twice is two watches, each closed on its own.
    const listener = () => onMayBeFree();
    set.add(listener);
    if (first) this.hooks.onFirst?.();
    let closed = false;
    return {
      close: async () => {
        if (closed) return;
        closed = true;
        set.delete(listener);
        if (set.size === 0 && this.watchers.get(election) === set) this.watchers.delete(election);
        if (this.watchers.size === 0) this.hooks.onEmpty?.();
      },
    };
  }

  /** The lease of `election` may be free: wake its watchers. */
  notify(election: string): void {
    for (const listener of [...(this.watchers.get(election) ?? [])]) listener();
  }

  /** A release may have been missed (the watch connection was down): wake every watcher once. */
  wakeAll(): void {
    for (const set of [...this.watchers.values()]) for (const listener of [...set]) listener();
  }
}

/**
 * Refuses a malformed connection URL at construction, naming the option and never echoing the
 * value (it may carry a password); a driver would otherwise fail on first use with an error the
 * store could only call transient, and retry it forever.
 */
export function checkConnectionUrl(
  store: string,
  option: string,
  value: string,
  protocols: readonly string[],
  expected: string,
): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // No cause attached: URL errors carry the input.
  }
  if (!url || !protocols.includes(url.protocol)) {
    throw new TypeError(messages.storeOptions.connectionInvalid(store, option, expected));
  }
}

/** Printable ASCII without spaces, at most 200 characters: safe in a Redis key or channel and in an etcd key. */
const KEY_PREFIX = /^[\x21-\x7e]{0,200}$/;

/** The `keyPrefix` of a key-value store (Redis, etcd), refused at construction when malformed. */
export function checkKeyPrefix(store: string, prefix: string): string {
  if (typeof prefix !== 'string' || !KEY_PREFIX.test(prefix)) {
    throw new TypeError(messages.backend.invalidPrefix(store, 'keyPrefix', prefix));
  }
  return prefix;
}

/** A driver error's `code` (SQLSTATE, ER_…, ECONNREFUSED), if it has a string one. */
export function errorCode(error: unknown): string | undefined {
  const value = (error as { code?: unknown } | undefined)?.code;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Limits of a store whose server judges expiry by its own clock (SQL `now()`, a key TTL): 1 s to
 * 24 h. Below 1 s a single slow round trip or pause would cost leadership.
 */
export function serverClockLimits(server: string): LeaseStoreLimits {
  return {
    minLeaseDurationMs: 1_000,
    maxLeaseDurationMs: 24 * 3_600_000,
    reason: messages.backend.shortLeaseReason(server),
  };
}
