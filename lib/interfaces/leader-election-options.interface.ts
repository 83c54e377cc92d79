import type { LeaseStore } from '../stores/lease-store.js';

/** How {@link LeaderOnlyGuard} answers a request that reached a follower. */
export interface LeaderOnlyGuardOptions {
  /**
   * Name the current leader in an `X-Leader-Id` header and in the 503 body (`leaderId`), so a
   * client or proxy can go to it. Turn off when identities (host names) must not leak. Default true.
   */
  exposeLeaderId?: boolean;
  /** Send `Retry-After` (seconds, the retry interval rounded up): when a new leader may exist. Default true. */
  retryAfter?: boolean;
}

export interface LeaderElectionModuleOptions {
  /** Where the lease lives, e.g. `new AzureBlobLeaseStore({ connectionString, container })`. */
  store: LeaseStore;
  /** The lease name shared by all replicas that compete (blob name / row key). */
  election: string;
  /** Unique per process; default `hostname-pid-<4 hex chars>`. */
  identity?: string;
  /** How long the store keeps the lease without a renewal. Default 15000 (Azure allows 15–60 s). */
  leaseDurationMs?: number;
  /** Stop acting as leader this long after the last successful renew was sent. Default 10000. */
  renewDeadlineMs?: number;
  /** How often the leader renews. Default 2500. */
  renewIntervalMs?: number;
  /** How often followers try to acquire (± jitter). Default 2000. */
  retryIntervalMs?: number;
  /**
   * On shutdown, how long to wait for running `@LeaderOnly` calls before ending the term (their
   * `signal` aborts) and releasing the lease. 0 = do not wait. Default 10000.
   */
  shutdownTimeoutMs?: number;
  /**
   * Call `store.close()` when the application shuts down. Default true, because the store is
   * usually constructed inline in `forRoot`/`useFactory` and belongs to this module; set false
   * when the store is shared with something that outlives the app (another app in the process).
   */
  closeStoreOnShutdown?: boolean;
  /** How followers answer `@LeaderOnly` routes. */
  guard?: LeaderOnlyGuardOptions;
}

/** The options once validated and defaulted. */
export interface ResolvedLeaderElectionOptions extends LeaderElectionModuleOptions {
  shutdownTimeoutMs: number;
  closeStoreOnShutdown: boolean;
  guard: Required<LeaderOnlyGuardOptions>;
}
