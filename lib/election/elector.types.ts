import type { Clock } from '../shared/clock.js';
import type { HandoverRequest, LeaseStore } from '../stores/lease-store.js';
import type { ElectorTimings } from './elector-options.js';

/**
 * Where an {@link Elector} writes what it does; Nest's `Logger` fits. Without one, only warnings and
 * errors are printed (to the console): a library must not chatter on stdout.
 */
export interface ElectorLogger {
  /** Leadership changes and handovers. */
  log(message: string): void;
  /** Trouble the elector rides out, such as a failing store call it keeps retrying. */
  warn(message: string): void;
  /** Trouble that needs a person, such as a store refusing us (auth or configuration). */
  error(message: string): void;
  /** Routine details; optional. */
  debug?(message: string): void;
}

/**
 * Options of one {@link Elector} (one election): its store, its lease name, who this replica is, and
 * any timing of {@link ElectorTimings} to override (validated together when the elector is built).
 */
export interface ElectorOptions extends Partial<ElectorTimings> {
  /** Where the lease lives; one store may serve any number of electors. */
  store: LeaseStore;
  /** The lease name: blob name, row key or etcd key suffix. */
  election: string;
  /** Unique per process; default `hostname-pid-<4 hex chars>`. */
  identity?: string;
  /** Default: performance.now / Date.now and Node's timers. A custom clock has both clocks (`now`, `wallNow`). */
  clock?: Clock;
  /** Where to log; default: warnings and errors only, to the console. */
  logger?: ElectorLogger;
  /**
   * Where to reach this replica (for example its internal URL), stored with the lease while it
   * leads, so followers, `status()` and the CLI can point clients at the leader. 1-1024 characters.
   */
  advertise?: string;
  /**
   * Preferred leader: this replica's priority, published with its lease while it leads (a safe
   * integer; default 0). In a `LeaderElectionModule`, a healthy follower whose priority is strictly
   * higher than the leader's asks it for the lease (a handover request, reason `priority`); the
   * leader honours it unless a directed handover pinned the election (`handoverHoldMs`). Equal
   * priorities never move leadership. A bare `Elector` publishes its priority and honours such
   * requests, but does not ask by itself.
   */
  priority?: number;
  /** How a leader honours a handover request of its election (drain first); see {@link HandoverHooks}. */
  handover?: HandoverHooks;
  /**
   * After this replica became leader through a directed handover (`to` = us, not a spread request),
   * spread requests for this election are declined for this long. Default 300000 (5 minutes).
   */
  handoverHoldMs?: number;
  /**
   * Large fleets: how many followers of this election poll it every `retryIntervalMs`; the others
   * stand by and poll every `standbyPollMs`. Who is active is decided by candidate slots held as
   * leases in the same store (a crashed active follower's slot frees itself). Default: unset, every
   * follower polls every retry interval. 1–16; give every replica the same value.
   */
  activeFollowers?: number;
  /** With `activeFollowers`: how often a standby follower polls (and tries for a slot). Default 30000. */
  standbyPollMs?: number;
}

/**
 * What a leader awaits while honouring a handover request (a request for its own term, to another
 * replica): `beforeStepDown` while it still leads (stop starting work, let running work finish; the
 * lease is renewed meanwhile), then the term ends (signal aborts), then `beforeRelease` (a short
 * grace), then the release reserving the lease for `request.to`. Errors are logged, never block.
 */
export interface HandoverHooks {
  /** Awaited while this replica still leads: stop starting new work, let running work finish. */
  beforeStepDown?(request: HandoverRequest): Promise<unknown> | unknown;
  /** Awaited after the term ended (its signal aborted), just before the lease is released: a short grace. */
  beforeRelease?(request: HandoverRequest): Promise<unknown> | unknown;
}

/** What {@link Elector.requestHandover} records. */
export interface HandoverRequestOptions {
  /** The identity that should lead next; absent: any other replica (the leader sits out a round). */
  to?: string;
  /** Why (logged by the leader that honours it). Default `operator`. At most 200 characters. */
  reason?: string;
  /** Who asks. Default: this replica's identity. */
  requestedBy?: string;
  /** Spread: how many elections the requester leads (the leader declines unless it leads 2 more). */
  requesterLeaderships?: number;
}

/**
 * Where an elector is: `idle` before `start()`, `follower` while another replica leads (or none does
 * and we keep trying), `leader` while our term lasts, `stopped` after `stop()`.
 */
export type ElectorState = 'idle' | 'follower' | 'leader' | 'stopped';

/** One change of leadership seen by an elector, as emitted on `events$`. */
export interface LeadershipEvent {
  /** `renewed` follows every successful renewal of our lease; the others mark changes. */
  type: 'elected' | 'renewed' | 'revoked' | 'leader-changed';
  /** Our term, for `elected`, `renewed` and `revoked`. */
  term?: number;
  /**
   * For `elected` and `renewed`: wall-clock time (epoch ms) until which we act as leader unless
   * the next renewal succeeds — for ledgers and metrics; {@link Elector.isLeader} is the authority.
   */
  validUntil?: number;
  /** The leader now known, for `leader-changed` (undefined when unknown). */
  leaderId?: string;
  /** Why leadership ended, for `revoked`. */
  reason?: string;
}

/** A JSON-able snapshot for status endpoints and health checks. */
export interface ElectorStatus {
  /** The lease name. */
  election: string;
  /** This replica's identity. */
  identity: string;
  /** Whether this replica leads right now (checked against the deadline when the snapshot is taken). */
  isLeader: boolean;
  /** The holder as last observed (ours while we lead); null when nobody is known to lead. */
  leaderId: string | null;
  /** Our fencing token while we lead; null otherwise. */
  term: number | null;
  /** The elector's state. */
  state: ElectorState;
  /** Wall-clock time of the last successful acquire/renew of our lease, ISO 8601. */
  lastRenewAt: string | null;
  /** Store calls failed in a row; 0 after any success. */
  consecutiveFailures: number;
  /** The last failure while failures last: its kind (`transient`, `fatal` or `lost`) and message; null after a success. */
  lastError: {
    /** `transient` (retried), `fatal` (auth or configuration: health goes down) or `lost`. */
    kind: string;
    /** The store's error message. */
    message: string;
  } | null;
  /** The leader's `advertise` value (ours while we lead), as stored with its lease; null when unknown. */
  leaderAdvertise: string | null;
  /** The leader's term as last observed (ours while we lead); null when no leader is known. */
  leaderTerm: number | null;
  /** This replica's `priority` option (0 by default). */
  priority: number;
  /**
   * The leader's priority as stored with its lease (ours while we lead; 0 for a leader that
   * publishes none); null when no leader is known.
   */
  leaderPriority: number | null;
}

/**
 * What {@link Elector.health} answers, for health checks.
 * @inline
 */
export interface ElectorHealth {
  /** False when not running, refused by the store, or failing for longer than the renew deadline. */
  healthy: boolean;
  /** Why not healthy. */
  reason?: string;
}

/**
 * Options of {@link Elector.stop}.
 * @inline
 */
export interface StopOptions {
  /** Release the lease if still ours (default true), so a follower takes over at once. */
  release?: boolean;
  /** Awaited after the term's signal aborted and before the release: let leader work wind down. */
  beforeRelease?: () => Promise<unknown>;
}

/** Without a logger, only trouble is printed: a library must not chatter on stdout. */
export const defaultLogger: ElectorLogger = {
  log: () => undefined,
  warn: (message) => console.warn(message),
  error: (message) => console.error(message),
};
