import type { ElectorOptions } from '../election/elector.js';

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

/**
 * The elector's own options (store, election, identity and its timings, documented on
 * {@link ElectorOptions}), minus what the module supplies itself, plus the module's options. Derived
 * rather than copied, so an elector option is a module option the day it exists.
 */
export interface LeaderElectionModuleOptions extends Omit<ElectorOptions, 'clock' | 'logger'> {
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
  /**
   * Off by default. When set, a `@LeaderOnly` call or `@OnElected` handler that has run longer than
   * this many milliseconds counts as stuck: the health indicator reports down, naming the handler,
   * until it ends, and a warning is logged. Whole milliseconds, 1 to 2147483647. Do not set it
   * shorter than a legitimate run: an `@OnElected` loop that runs for the whole term counts too.
   */
  stuckAfterMs?: number;
  /**
   * With `stuckAfterMs`: a leader whose work is stuck resigns (the term's `signal` aborts, so the
   * stuck work can stop) and sits out a round, so a healthy replica takes over. Default false.
   */
  resignWhenStuck?: boolean;
}

/** The options once validated and defaulted. */
export interface ResolvedLeaderElectionOptions extends LeaderElectionModuleOptions {
  shutdownTimeoutMs: number;
  resignWhenStuck: boolean;
  closeStoreOnShutdown: boolean;
  guard: Required<LeaderOnlyGuardOptions>;
}
