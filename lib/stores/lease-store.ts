// The store contract: the interface every backend implements, the types of its calls and the sizes
// a store must accept. Beside it, by role: the capability guards the elector asks a store through
// (lease-store.capabilities.ts) and the handover request slot's spread rule (lease-store.spread-rule.ts);
// the typed errors a store throws are shared/errors.ts. All of it reaches store authors through
// lib/store.ts.

import type { LeaseLostError, TransientLeaseStoreError } from '../shared/errors.js';

/**
 * The contract every lease backend implements. The elector is the only caller; it never
 * interprets a backend's raw errors, only the typed outcomes below.
 *
 * Rules every implementation follows:
 * - Every call honours its `signal`: once it aborts, the call settles promptly by throwing
 *   a {@link TransientLeaseStoreError} (or the signal's reason wrapped in one). SDK-level retries
 *   must be disabled or bounded so a call cannot outlive the signal.
 * - Expiry is judged by the store's own clock (server time, server-side TTL), never by comparing a
 *   timestamp written by another node with the local clock.
 * - Renew and release are conditional on the {@link Lease.leaseId} the acquire returned.
 * - No log line, error message or field of a result contains a connection string, key or SAS.
 */
export interface LeaseStore {
  /** Short name used in messages, e.g. `AzureBlobLeaseStore`. */
  readonly name: string;
  /** What lease durations this backend accepts; the elector refuses anything else at construction. */
  readonly limits: LeaseStoreLimits;

  /**
   * Try to take the lease of `election` for `leaseDurationMs` (server time).
   * - Free or expired → taken: resolves `{ acquired: true, lease }` with a **new** lease id and a
   *   term strictly greater than any term previously handed out for this election.
   * - Held (unexpired) by anyone, including a previous term of the same identity →
   *   `{ acquired: false, holder, term }` as far as the store knows them.
   * Creates whatever container/table/key the election needs when missing, race-safe.
   * Not idempotent: at most one of N concurrent callers gets `acquired: true`.
   *
   * Anything but a clear answer (a throw, including an abort or a lost reply) may still have taken
   * the lease. The store then gives back the attempt's own fresh lease id — at once, and again once
   * the abandoned request has settled — so no lease is left held under an id nobody knows and
   * another instance leads within the call timeout plus one retry (built-in stores do this in
   * `store-support.ts`; a third-party store should do the same).
   */
  acquire(request: AcquireRequest): Promise<AcquireResult>;

  /**
   * Extend `lease` to `leaseDurationMs` from now (server time). Throws {@link LeaseLostError}
   * when the lease is no longer ours (expired and taken, released, broken, or the lease id does not
   * match). Idempotent while the lease is ours. Renewing our own lease after it expired, when nobody
   * took it meanwhile, may succeed (Azure allows it); the elector never relies on that, because it
   * stops acting at its deadline, which comes before expiry. A store whose leases keep the duration
   * fixed at acquire (Azure) may ignore `leaseDurationMs` here; the elector always passes the same.
   */
  renew(lease: Lease, options: RenewOptions): Promise<void>;

  /**
   * Give the lease up so another instance can take it at once. Idempotent: releasing a lease that
   * is no longer ours (expired, taken, already released) resolves without effect; it never
   * releases someone else's lease.
   *
   * With `options.handoverTo` (a store with the handover capability): the freed lease is reserved
   * for that identity for `options.reserveMs` (the store's clock), in the same atomic operation
   * (Azure: metadata written under the lease just before the release). While the reservation
   * lasts, an acquire by any other identity answers `{ acquired: false, reservedFor, expiresInMs }`
   * (the reservation's remaining time), and the named identity acquires as from a free lease. A
   * store without the capability ignores both options (the lease is simply freed).
   */
  release(lease: Lease, options: ReleaseOptions): Promise<void>;

  /** Who holds the lease of `election` right now, as far as the store knows. */
  read(election: string, options: CallOptions): Promise<LeaseInfo>;

  /**
   * Optional push capability: call `onMayBeFree` whenever the lease of `election` may have become
   * free (released or deleted), so followers contend at once instead of at their next poll.
   * Best effort: polling remains the fallback, so a watch that breaks must not throw here; it may
   * reconnect on its own. Spurious calls are allowed.
   */
  watch?(election: string, onMayBeFree: () => void): LeaseWatch;

  /**
   * Optional leader-state capability (declared by implementing both `writeState` and `readState`).
   * Write `value` (JSON-serialisable) under `options.key` of `lease.election`, only if `lease` is
   * still the current, unexpired lease of its election AS JUDGED BY THE STORE (server time,
   * lease-id condition), in one atomic conditional operation. Otherwise rejects with
   * {@link LeaseLostError} and leaves the state unchanged. Values larger than
   * `limits.maxStateBytes` (default and minimum 64 KiB, UTF-8 JSON) reject with a RangeError naming
   * the limit, before anything is sent. An acquire never clears state: the next leader reads what
   * the previous one wrote.
   */
  writeState?(lease: Lease, value: unknown, options: StateCallOptions): Promise<void>;

  /** Any replica may read: the last value written under `key`, with the term that wrote it. */
  readState?(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined>;

  /**
   * Optional handover capability (declared by implementing `requestHandover`, `readHandover` and
   * `clearHandover`, and honouring `ReleaseOptions.handoverTo` and lease `meta`). Records `request`
   * as the pending handover request of `request.election` (one slot per election: it replaces the
   * earlier one, but see the spread rule below). Any replica may call it, leader or not, whether
   * the lease is held or not: it never touches the lease. The request is opaque JSON to the store
   * (at most {@link MAX_HANDOVER_REQUEST_BYTES} when encoded) but for its `reason` and `term`, which
   * the spread rule reads. Resolves once the request is durably recorded.
   *
   * A store that declares {@link LeaseStore.conditionalSpreadRequests} applies the one rule of
   * `spreadRequestYields` (lease-store.spread-rule.ts) in the same atomic operation: a spread request never replaces a
   * pending request of another kind for its term or a later one. It then resolves `false` (nothing
   * written); `true` or nothing means written. Any other request replaces whatever is pending (an
   * operator's request outranks a spread request; between two operators the last one wins, and the
   * earlier caller sees another request id when it reads the slot again).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: stores written against Promise<void> must still compile
  requestHandover?(request: HandoverRequest, options: CallOptions): Promise<boolean | void>;

  /**
   * Declares that `requestHandover` refuses, atomically at the store, a spread request that would
   * replace a pending non-spread request (see `spreadRequestYields`) and resolves `false` then.
   * Every built-in store declares it. Without it the elector reads the pending request before
   * writing a spread request (best effort: an operator request written between that read and the
   * write is still replaced).
   */
  readonly conditionalSpreadRequests?: boolean;

  /** The pending handover request of `election`, or undefined. Any replica may read. */
  readHandover?(election: string, options: CallOptions): Promise<HandoverRequest | undefined>;

  /**
   * Removes the pending request of `election` if its id is still `id` (a newer request is kept).
   * Idempotent: resolves when there is none.
   */
  clearHandover?(election: string, id: string, options: CallOptions): Promise<void>;

  /**
   * Optional: the names of every election this store's namespace (container, table, key prefix)
   * has a lease record for, held or not, sorted. For operators' tools (the CLI's `status`).
   */
  listElections?(options: CallOptions): Promise<string[]>;

  /**
   * Close connections the store opened itself; never a client the user passed in. Waits (up to
   * 5 s) for its own clean-ups first (give-backs of acquires of unknown outcome). Idempotent. The
   * Nest module calls it on shutdown (`closeStoreOnShutdown`); with a raw `Elector`, call it after
   * `stop()` unless the store lets the process exit on its own (see the README's store table).
   */
  close?(): Promise<void>;
}

export interface LeaseStoreLimits {
  minLeaseDurationMs: number;
  maxLeaseDurationMs: number;
  /** Durations must be a multiple of this (Azure counts whole seconds). Default 1 ms. */
  leaseDurationStepMs?: number;
  /** Why the range is what it is, quoted in the validation error. */
  reason: string;
  /** Largest leader-state value (UTF-8 JSON bytes) `writeState` accepts. Default and minimum 65536. */
  maxStateBytes?: number;
}

export interface CallOptions {
  /** Aborts the call; the store must settle promptly once it fires. */
  signal: AbortSignal;
}

/** Where a leader-state value lives, beside the lease of its election. */
export interface StateCallOptions extends CallOptions {
  /**
   * Namespace of the value within the election. Default 'state': the user's value. The library keeps
   * its own records (e.g. `tick:<job>` for once-per-tick cron runs) under other keys, so they never
   * touch the user's value. 1-200 chars of [A-Za-z0-9._:-].
   */
  key?: string;
}

export interface LeaderStateEntry<T = unknown> {
  value: T;
  /** The term (fencing token) of the lease that wrote it. */
  term: number;
}

export interface AcquireRequest extends CallOptions {
  election: string;
  /** The caller's identity, stored with the lease so others can read who leads. */
  identity: string;
  leaseDurationMs: number;
  /**
   * Stored with the lease when taken (a store with the handover capability); returned to everyone
   * by `read()` and by refused acquires. Replaces the previous holder's meta; absent → none.
   */
  meta?: LeaseMeta;
}

export interface RenewOptions extends CallOptions {
  leaseDurationMs: number;
  /**
   * When given, replaces the meta stored with the lease, in the renew's own conditional operation
   * where the store can (Azure: a metadata write under the lease). A store may skip a write when
   * the meta equals what this lease last stored.
   */
  meta?: LeaseMeta;
}

export interface ReleaseOptions extends CallOptions {
  /** Reserve the freed lease for this identity (see {@link LeaseStore.release}). */
  handoverTo?: string;
  /** How long the reservation lasts, ms of the store's clock. Required with `handoverTo`. */
  reserveMs?: number;
}

/**
 * What a holder publishes beside its lease for every replica to read: opaque JSON to a store, at
 * most {@link MAX_LEASE_META_BYTES} encoded. Unknown fields are kept, so a later version can add some.
 */
export interface LeaseMeta {
  /** The holder's `advertise` value, e.g. its internal URL: where to reach the leader. */
  advertise?: string;
  /** How many elections the holder leads right now (spread). */
  leaderships?: number;
  /** Set by a holder that won through a directed handover, for a while: spread leaves this election alone. */
  pinned?: boolean;
}

/** Largest encoded {@link LeaseMeta} a store must accept. */
export const MAX_LEASE_META_BYTES = 2_048;
/** Largest encoded {@link HandoverRequest} a store must accept. */
export const MAX_HANDOVER_REQUEST_BYTES = 4_096;

/**
 * A request that the current leader of `election` hands its lease over. Honoured only by the
 * leader of `term` (a request for an older term is stale: leadership has moved since).
 */
export interface HandoverRequest {
  election: string;
  /** Unique per request. */
  id: string;
  /** The term the request is for: the leader's term when it was made. */
  term: number;
  /** The identity that should lead next; absent: any other replica (force re-election). */
  to?: string;
  /** Who asked: a replica's identity, or `cli:<user>@<host>`. */
  requestedBy: string;
  /** Why: `operator` (a person or script), `spread` (a replica balancing), or free text. */
  reason: string;
  /** Wall-clock time of the request (epoch ms, the requester's clock): for display only. */
  requestedAt: number;
  /** Spread: how many elections the requester led; the leader honours it only if it leads 2 or more than that. */
  requesterLeaderships?: number;
}

/** A held lease: everything renew/release need. Opaque to the elector apart from `term`. */
export interface Lease {
  readonly election: string;
  readonly holder: string;
  /** Unique per acquisition; renew and release are conditional on it. */
  readonly leaseId: string;
  /** Fencing token: strictly increases across successful acquisitions of one election. */
  readonly term: number;
}

export type AcquireResult =
  | { acquired: true; lease: Lease }
  | {
      acquired: false;
      holder?: string;
      term?: number;
      /**
       * Optional hint: how long, in ms of the store's own clock, until the holder's lease expires if
       * not renewed (`expires_at − now` evaluated by the store). A follower of a store that can push
       * (`watch`) then polls only as a safety net and contends again at this instant, since the
       * watch does not report an expiry. Only scheduling uses it: the next acquire is judged by the
       * store. A store that leaves it out is polled every retry interval, as before.
       */
      expiresInMs?: number;
      /** The holder's meta (a store with the handover capability). */
      meta?: LeaseMeta;
      /** The lease is free but reserved for this identity (a directed handover); `holder` is then absent. */
      reservedFor?: string;
    };

export interface LeaseInfo {
  held: boolean;
  /** Identity of the holder while held. */
  holder?: string;
  /** Term of the current (or last) holder; 0 when the election has never been won. */
  term: number;
  /** The holder's meta while held (a store with the handover capability). */
  meta?: LeaseMeta;
  /** While not held: the identity a directed handover reserved the lease for, until the reservation ends. */
  reservedFor?: string;
}

export interface LeaseWatch {
  close(): Promise<void>;
}
