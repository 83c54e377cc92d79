import type { Observable } from 'rxjs';
import type { ElectorHealth, ElectorStatus, LeadershipEvent } from '../election/elector.js';
import type { HandoverRequestOptions } from '../election/elector.types.js';
import type { ElectorTimings } from '../election/elector-options.js';
import type { HandoverRequest, LeaderStateEntry } from '../stores/lease-store.js';

/** `status().state`: the elector's state, or `stepping-down` while the app drains before releasing. */
export type LeaderElectionState = ElectorStatus['state'] | 'stepping-down';

/** A plain, JSON-able snapshot for status endpoints, logs and health checks. */
export interface LeaderElectionStatus extends Omit<ElectorStatus, 'state'> {
  /** The elector's state, or `stepping-down` while the lease is held without acting. */
  state: LeaderElectionState;
  /** Job control, when the election has scheduled `@LeaderOnly` jobs on this replica. */
  jobs?: {
    /** How many. */
    count: number;
    /** Paused jobs, as the board read in our current term says; null when not leading (followers do not read it). */
    paused: string[] | null;
    /** Scheduled runs this replica skipped because their job was paused, since startup. */
    skippedWhilePaused: number;
    /** When the leader last read the job board in its current term (ISO 8601); null when not leading. */
    boardReadAt: string | null;
  };
}

/** One term of leadership: its fencing token and the signal that aborts when it ends. */
export interface LeadershipTerm {
  /** Fencing token: increases with every term of the election; pass it to writes a store can fence. */
  term: number;
  /** Aborts the moment this term ends: loop while `!signal.aborted`. */
  signal: AbortSignal;
}

/**
 * Runs `fn` with the term's `{ term, signal }` if this instance leads the election right now, and
 * counts it until it settles, so a handover or shutdown waits for it before releasing; otherwise
 * returns `otherwise()` (default: undefined) without calling `fn`. Returns `fn`'s value as is
 * (synchronously when `fn` is synchronous). What `@LeaderOnly()` does, for code that cannot carry a
 * decorator: work registered at run time, queue consumer callbacks. A leading `name` (default
 * `'runIfLeader'`) labels its metrics and stuck-work reports.
 * @inline
 */
export interface RunIfLeader {
  <T>(fn: (term: LeadershipTerm) => T): T | undefined;
  <T, F>(fn: (term: LeadershipTerm) => T, otherwise: () => F): T | F;
  <T>(name: string, fn: (term: LeadershipTerm) => T): T | undefined;
  <T, F>(name: string, fn: (term: LeadershipTerm) => T, otherwise: () => F): T | F;
}

/**
 * One election of the application, as `LeaderElectionService.election(name)` returns it: the same
 * members the service has for its default election, plus `requestHandover`.
 */
export interface ElectionHandle {
  /** The election (lease) name. */
  readonly election: string;
  /** This replica's identity, stored as the lease holder while it leads. */
  readonly identity: string;
  /** The current leader as last observed (ours while we hold the lease); undefined when unknown. */
  readonly leaderId: string | undefined;
  /** The leader's `advertise` value (where to reach it), as stored with its lease; undefined when unknown. */
  readonly leaderAdvertise: string | undefined;
  /** Fencing token of our current term; undefined when not leading. */
  readonly term: number | undefined;
  /** Aborts the moment the current term ends; already aborted when not leading. */
  readonly signal: AbortSignal;
  /** Every leadership change (and each renewal) of this election as it happens; hot, no replay. */
  readonly events$: Observable<LeadershipEvent>;
  /** Emits the current value on subscription, then every change; completes when the election stops. */
  readonly isLeader$: Observable<boolean>;
  /** The timings in force: the defaults with the module's options applied. */
  readonly timings: Readonly<ElectorTimings>;
  /**
   * True from the start of shutdown (for good), or of an honoured handover or a resignation for
   * stuck work until that term's release: no new leader-only work starts.
   */
  readonly isSteppingDown: boolean;
  /** True while this instance holds the lease (before its deadline) and is not stepping down. */
  isLeader(): boolean;
  /**
   * Resolves with the term once this instance leads (at once if it does). Rejects with the
   * signal's reason when `signal` aborts, or when the election stops first.
   */
  waitForLeadership(signal?: AbortSignal): Promise<LeadershipTerm>;
  /**
   * Runs `fn` with the term's `{ term, signal }` if this replica leads right now, and counts it until
   * it settles (a handover or shutdown waits for it); otherwise returns `otherwise()` (default:
   * undefined) without calling `fn`. A leading `name` labels its metrics and stuck-work reports.
   */
  readonly runIfLeader: RunIfLeader;
  /**
   * Leader state: the value last written under `key` (default `'state'`) by any leader, with the
   * term that wrote it; undefined when never written. Any replica may read.
   */
  readState<T = unknown>(key?: string): Promise<LeaderStateEntry<T> | undefined>;
  /**
   * Writes leader state (JSON-serialisable, up to the store's limit, at least 64 KiB), fenced by the
   * store: accepted only while this instance's lease is the current one there, so a leader resumed
   * after a pause can never overwrite a newer leader's value. On a non-leader it rejects at once
   * with `LeaseLostError`. Still allowed while stepping down (the lease is ours until released), so
   * draining work can save its checkpoint. Keys starting with `tick:` belong to `once: 'per-tick'`
   * and reject with a `TypeError`.
   */
  writeState<T = unknown>(value: T, key?: string): Promise<void>;
  /** Give up leadership now (the term's signal aborts) and sit out one round so another instance wins. */
  resign(): Promise<void>;
  /**
   * Asks the leader of this election, wherever it runs, to drain and hand over to `to` (without it,
   * to any other replica). Resolves with the request once it is recorded in the store, or with
   * undefined when the store shows `to` already leading (nothing recorded).
   */
  requestHandover(options?: Omit<HandoverRequestOptions, 'requesterLeaderships'>): Promise<HandoverRequest | undefined>;
  /** `state` is `stepping-down` whenever the lease is held without acting, so it agrees with `isLeader`. */
  status(): LeaderElectionStatus;
  /**
   * Unhealthy when the store refuses us, fails past the renew deadline, the elector is not running,
   * work is stuck, or the lease is held without acting beyond what a step-down takes.
   */
  health(): ElectorHealth;
}
