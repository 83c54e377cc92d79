// The types of the store contract's calls (lease-store.ts): what each call takes and answers, and
// the sizes a store must accept. Reaches store authors through lib/store.ts, like the contract.

/** What a store accepts; the elector validates its timings against these when it is built. */
export interface LeaseStoreLimits {
  /** Shortest lease duration the backend supports, ms. */
  minLeaseDurationMs: number;
  /** Longest lease duration the backend supports, ms. */
  maxLeaseDurationMs: number;
  /** Durations must be a multiple of this (Azure counts whole seconds). Default 1 ms. */
  leaseDurationStepMs?: number;
  /** Why the range is what it is, quoted in the validation error. */
  reason: string;
  /** Largest leader-state value (UTF-8 JSON bytes) `writeState` accepts. Default and minimum 65536. */
  maxStateBytes?: number;
}

/** What every store call receives: the bound of the call. */
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

/** A leader-state value as read back, with the term that wrote it. */
export interface LeaderStateEntry<T = unknown> {
  /** The value as written (parsed from JSON). */
  value: T;
  /** The term (fencing token) of the lease that wrote it. */
  term: number;
}

/** Arguments of {@link LeaseStore.acquire}. */
export interface AcquireRequest extends CallOptions {
  /** The lease name. */
  election: string;
  /** The caller's identity, stored with the lease so others can read who leads. */
  identity: string;
  /** How long the lease lasts without a renewal, ms of the store's clock. */
  leaseDurationMs: number;
  /**
   * Stored with the lease when taken (a store with the handover capability); returned to everyone
   * by `read()` and by refused acquires. Replaces the previous holder's meta; absent → none.
   */
  meta?: LeaseMeta;
}

/** Options of {@link LeaseStore.renew}. */
export interface RenewOptions extends CallOptions {
  /** The lease's new duration from now, ms of the store's clock (the elector always passes the same). */
  leaseDurationMs: number;
  /**
   * When given, replaces the meta stored with the lease, in the renew's own conditional operation
   * where the store can (Azure: a metadata write under the lease). A store may skip a write when
   * the meta equals what this lease last stored.
   */
  meta?: LeaseMeta;
}

/** Options of {@link LeaseStore.release}. */
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
  /**
   * The holder's `priority` option (preferred leader), when not 0. Absent: 0, as for a holder of a
   * version without it. A follower of higher priority asks for the lease (a `priority` request).
   */
  priority?: number;
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
  /** The election whose leader should hand over. */
  election: string;
  /** Unique per request. */
  id: string;
  /** The term the request is for: the leader's term when it was made. */
  term: number;
  /** The identity that should lead next; absent: any other replica (force re-election). */
  to?: string;
  /** Who asked: a replica's identity, or `cli:<user>@<host>`. */
  requestedBy: string;
  /**
   * Why: `operator` (a person or script), `spread` (a replica balancing), `priority` (a replica of
   * higher priority asking for the lease), or free text. `spread` and `priority` requests are a
   * replica's own: they never replace another kind of request pending (see `spreadRequestYields`).
   */
  reason: string;
  /** Wall-clock time of the request (epoch ms, the requester's clock): for display only. */
  requestedAt: number;
  /** Spread: how many elections the requester led; the leader honours it only if it leads 2 or more than that. */
  requesterLeaderships?: number;
  /** A `priority` request: the requester's priority; the leader honours it only if its own is lower. */
  requesterPriority?: number;
}

/** A held lease: everything renew/release need. Opaque to the elector apart from `term`. */
export interface Lease {
  /** The lease name. */
  readonly election: string;
  /** The identity that holds it (ours). */
  readonly holder: string;
  /** Unique per acquisition; renew and release are conditional on it. */
  readonly leaseId: string;
  /** Fencing token: strictly increases across successful acquisitions of one election. */
  readonly term: number;
}

/** What {@link LeaseStore.acquire} resolves: the lease, or who holds it. */
export type AcquireResult =
  | {
      /** Taken: the lease is ours. */
      acquired: true;
      /** The new lease, with a new lease id and a greater term. */
      lease: Lease;
    }
  | {
      /** Not taken: someone holds it (or it is reserved for someone else). */
      acquired: false;
      /** Identity of the holder, as far as the store knows. */
      holder?: string;
      /** Term of the holder's lease, as far as the store knows. */
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

/** What {@link LeaseStore.read} resolves: who holds the lease of an election. */
export interface LeaseInfo {
  /** Whether an unexpired lease exists now (store's clock). */
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

/** A running {@link LeaseStore.watch}. */
export interface LeaseWatch {
  /** Stops the watch and frees what it holds (a subscription, a connection). */
  close(): Promise<void>;
}

/**
 * A shared record as read back (see {@link LeaseStore.readRecord}): the value and an opaque version
 * that changes with every successful write.
 */
export interface SharedRecord<T = unknown> {
  /** The value as written (parsed from JSON). */
  value: T;
  /** Opaque to the caller; pass it back as `ifVersion` to write only over this very value. */
  version: string;
}

/** Options of {@link LeaseStore.writeRecord}. */
export interface RecordWriteOptions extends CallOptions {
  /**
   * The compare-and-set condition: the version read before (`readRecord`), or `null` to write only
   * if the record does not exist yet.
   */
  ifVersion: string | null;
}

/** Largest encoded shared-record value a store must accept (UTF-8 JSON bytes). */
export const MAX_SHARED_RECORD_BYTES = 65_536;

/** One leader-state entry a folded renewal writes (see {@link LeaseStore.renewWith}). */
export interface StateWrite {
  /** As {@link StateCallOptions.key}: 1-200 chars of [A-Za-z0-9._:-]. */
  key: string;
  /** JSON-serialisable, at most `limits.maxStateBytes` encoded, as for `writeState`. */
  value: unknown;
}

/** Options of {@link LeaseStore.renewWith}: a renewal, what it carries, and what it brings back. */
export interface RenewWithOptions extends RenewOptions {
  /**
   * Leader-state entries written under the renewal's own condition (a store with the leader-state
   * capability): all of them only if the renewal succeeds, each as `writeState` would (the entry's
   * term is the lease's). Distinct keys.
   */
  writeState?: readonly StateWrite[];
  /** Bring back the pending handover request (a store with the handover capability). */
  readHandover?: boolean;
  /** Bring back these shared records (a store with the shared-records capability). Distinct keys. */
  readRecords?: readonly string[];
}

/** What {@link LeaseStore.renewWith} brings back: exactly what was asked, read once the renewal applied. */
export interface RenewWithReply {
  /** With `readHandover`: the pending request, or null when there is none. Absent otherwise. */
  handover?: HandoverRequest | null;
  /** With `readRecords`: each asked key's record, or null when it does not exist. Absent otherwise. */
  records?: Record<string, SharedRecord | null>;
}
