// The store contract: the interface every backend implements; the types of its calls and the sizes
// a store must accept are lease-store.calls.ts, re-exported here. Beside it, by role: the capability
// guards the elector asks a store through (lease-store.capabilities.ts) and the handover request slot's spread rule (lease-store.spread-rule.ts);
// the typed errors a store throws are shared/errors.ts. All of it reaches store authors through
// lib/store.ts.

import type { LeaseLostError, TransientLeaseStoreError } from '../shared/errors.js';
import type {
  AcquireRequest,
  AcquireResult,
  CallOptions,
  HandoverRequest,
  LeaderStateEntry,
  Lease,
  LeaseInfo,
  LeaseStoreLimits,
  LeaseWatch,
  MAX_HANDOVER_REQUEST_BYTES,
  MAX_SHARED_RECORD_BYTES,
  RecordWriteOptions,
  ReleaseOptions,
  RenewOptions,
  RenewWithOptions,
  RenewWithReply,
  SharedRecord,
  StateCallOptions,
} from './lease-store.calls.js';

export * from './lease-store.calls.js';

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
   * Optional folded renewal (declared by implementing it): {@link renew}, carrying what the leader
   * must write and bringing back what it must learn, in one call — one round trip where the backend
   * allows (an SQL statement's `RETURNING`, a Lua script's reply, an etcd txn's responses). The
   * elector then makes ONE store call per renewal; without it, it renews and makes the separate
   * calls (`readHandover`, `readRecord`, `writeState`) after each renewal, as before.
   *
   * Semantics: those of `renew` (throws {@link LeaseLostError} when the lease is no longer ours, and
   * then writes nothing), plus:
   * - `writeState`: written in the same conditional operation as the renewal, all or none, each
   *   entry exactly as `writeState(lease, value, { key })` would (sizes checked before anything is
   *   sent: a RangeError naming the limit). Only with the leader-state capability.
   * - `readHandover` / `readRecords`: the reply holds what `readHandover` / `readRecord` would
   *   answer right after the renewal (null for none), and nothing that was not asked. Only with the
   *   capability each needs. A record's version is usable for `writeRecord`'s `ifVersion`.
   */
  renewWith?(lease: Lease, options: RenewWithOptions): Promise<RenewWithReply>;

  /**
   * How often the leader asks what a renewal cannot tell by itself (the pending handover request,
   * the job board): every Nth renewal, counting from the term's first (integer 1-20, default 1). A
   * store whose every read is billed separately sets more (Azure: 4); the handover desk's and the
   * job board's latency bound is then N renew intervals instead of one.
   */
  readonly readEveryNthRenewal?: number;

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
   * `spreadRequestYields` (lease-store.spread-rule.ts) in the same atomic operation: a replica's own
   * request (reason `spread` or `priority`, `REPLICA_REASONS`) never replaces an operator's pending
   * request (any other reason) for its term or a later one. It then resolves `false` (nothing
   * written); `true` or nothing means written. Any other request replaces whatever is pending (an
   * operator's request outranks a replica's; between two operators the last one wins, and the
   * earlier caller sees another request id when it reads the slot again).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: stores written against Promise<void> must still compile
  requestHandover?(request: HandoverRequest, options: CallOptions): Promise<boolean | void>;

  /**
   * Declares that `requestHandover` refuses, atomically at the store, a replica's own request
   * (`spread`, `priority`) that would replace an operator's pending request (see
   * `spreadRequestYields`) and resolves `false` then. Every built-in store declares it. Without it
   * the elector reads the pending request before writing a replica's request (best effort: an
   * operator request written between that read and the write is still replaced).
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
   * Optional shared-records capability (declared by implementing both `readRecord` and
   * `writeRecord`): small JSON records beside an election that ANY replica may write, leader or not,
   * whether the lease is held or not — they never touch the lease. The library keeps operators'
   * commands there (the job board: pause, resume, run now), which a follower or the CLI must be able
   * to record. Every write is a compare-and-set on the record's version, so concurrent writers never
   * lose each other's updates: read, change, write with `ifVersion`, and read again on `false`.
   *
   * `key`: 1-200 chars of [A-Za-z0-9._:-]; a record is independent of leader state with the same key.
   * Resolves undefined when the record does not exist (an election nobody ever led included).
   */
  readRecord?(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined>;

  /**
   * Writes `value` (JSON-serialisable, at most {@link MAX_SHARED_RECORD_BYTES} encoded: larger
   * rejects with a RangeError naming the limit before anything is sent) as record `key` of
   * `election` if its current version is `options.ifVersion` (`null`: only if it does not exist), in
   * one atomic operation at the store. Resolves `true` when written (the record gets a new version),
   * `false` when the condition failed (nothing written). Creates whatever the election needs when
   * missing (row, container, key), race-safe, without creating or changing its lease.
   */
  writeRecord?(election: string, key: string, value: unknown, options: RecordWriteOptions): Promise<boolean>;

  /**
   * Optional: the names of every election this store's namespace (container, table, key prefix)
   * has a lease record for, held or not, sorted. For operators' tools (the CLI's `status`).
   */
  listElections?(options: CallOptions): Promise<string[]>;

  /**
   * Close connections the store opened itself; never a client the user passed in. Waits (up to
   * 5 s) for its own clean-ups first (give-backs of acquires of unknown outcome). Idempotent. The
   * Nest module calls it on shutdown (`closeStoreOnShutdown`); with a raw `Elector`, call it after
   * `stop()` unless the store lets the process exit on its own (see docs/guides/stores.md).
   */
  close?(): Promise<void>;
}
