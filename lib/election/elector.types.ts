import type { Clock } from '../shared/clock.js';
import type { HandoverRequest, LeaseStore } from '../stores/lease-store.js';
import type { ElectorTimings } from './elector-options.js';

export interface ElectorLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug?(message: string): void;
}

export interface ElectorOptions extends Partial<ElectorTimings> {
  store: LeaseStore;
  /** The lease name: blob name, row key or etcd key suffix. */
  election: string;
  /** Unique per process; default `hostname-pid-<4 hex chars>`. */
  identity?: string;
  /** Default: performance.now / Date.now and Node's timers. A custom clock has both clocks (`now`, `wallNow`). */
  clock?: Clock;
  logger?: ElectorLogger;
  /**
   * Where to reach this replica (for example its internal URL), stored with the lease while it
   * leads, so followers, `status()` and the CLI can point clients at the leader. 1-1024 characters.
   */
  advertise?: string;
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
  beforeStepDown?(request: HandoverRequest): Promise<unknown> | unknown;
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

export type ElectorState = 'idle' | 'follower' | 'leader' | 'stopped';

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
  election: string;
  identity: string;
  isLeader: boolean;
  leaderId: string | null;
  term: number | null;
  state: ElectorState;
  /** Wall-clock time of the last successful acquire/renew of our lease, ISO 8601. */
  lastRenewAt: string | null;
  consecutiveFailures: number;
  lastError: { kind: string; message: string } | null;
  /** The leader's `advertise` value (ours while we lead), as stored with its lease; null when unknown. */
  leaderAdvertise: string | null;
  /** The leader's term as last observed (ours while we lead); null when no leader is known. */
  leaderTerm: number | null;
}

export interface ElectorHealth {
  healthy: boolean;
  reason?: string;
}

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
