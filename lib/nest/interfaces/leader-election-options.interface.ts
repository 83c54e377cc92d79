import type { ElectorOptions } from '../../election/elector.js';
import type { Clock } from '../../shared/clock.js';

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
export type LeaderElectionModuleOptions = LeaderElectionSharedOptions & LeaderElectionNames;

/**
 * Exactly one of `election` and `elections` (checked at startup too, for JavaScript callers).
 * @inline
 */
export type LeaderElectionNames =
  | {
      /** The lease name of the app's one election (blob name, row key or etcd key suffix). */
      election: string;
      /** Not with `election`. */
      elections?: never;
    }
  | {
      /**
       * Several elections in one app: each its own lease, with the same store and timings. The
       * first is the default election (what `@LeaderOnly()` without a name and the service's own
       * members act on). Add more at run time with `LeaderElectionService.addElection`.
       */
      elections: string[];
      /** Not with `elections`. */
      election?: never;
    };

/**
 * Every module option but the election names.
 * @inline
 */
export interface LeaderElectionSharedOptions
  extends Omit<ElectorOptions, 'clock' | 'logger' | 'election' | 'handover'> {
  /**
   * Spread the elections over the replicas: a replica that leads at least 2 fewer than another asks
   * it for one (a handover request), so no replica leads more than ⌈E/N⌉ of E elections among N
   * replicas. Needs a store with handover requests (every built-in store). Default: true with
   * several elections, false with one.
   */
  spread?: boolean;
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
   * The time source of everything time-based in the module: every election's elector (terms,
   * renewals, polls, handover holds), stuck-work detection and resignation, spread, drains,
   * once-per-tick fire times and the metrics' durations. A test passes a `FakeClock` (from
   * `@leaderlease/nestjs/testing`), shared with its `InMemoryLeaseStore`, and moves time with
   * `await clock.advance(ms)`: a failover with no real waiting. `@nestjs/schedule`'s own timers
   * are not driven by it. Needs `now`, `wallNow`, `setTimeout` and `clearTimeout`. Default: the
   * system clock (`performance.now`, `Date.now`, Node's timers).
   */
  clock?: Clock;
  /**
   * Off by default. When set, a `@LeaderOnly` call or `@OnElected` handler that has run longer than
   * this many milliseconds counts as stuck: the health indicator reports down, naming the handler,
   * until it ends, and a warning is logged. Whole milliseconds, 1 to 2147483647. A handler may set
   * its own: `@OnElected({ stuckAfterMs: false })` for a loop that runs for the whole term (a queue
   * pump), `@LeaderOnly({ stuckAfterMs })` for a job allowed longer (or shorter).
   */
  stuckAfterMs?: number;
  /**
   * With `stuckAfterMs`: a leader whose work is stuck resigns (the term's `signal` aborts, so the
   * stuck work can stop) and sits out a round, so a healthy replica takes over. Default false.
   */
  resignWhenStuck?: boolean;
  /**
   * Enter leader-only runs in an AsyncLocalStorage context so `currentLeadership()` answers inside
   * them. Default true. On Node 20 and 22 the first run turns on the process's promise hooks, which
   * makes every `await` in the app slower (measured: 128–280 ns → 352–441 ns); set false when nothing
   * calls `currentLeadership()` and the app uses no other AsyncLocalStorage (tracing, nestjs-cls).
   */
  leadershipContext?: boolean;
}

/** The options once validated and defaulted. */
export interface ResolvedLeaderElectionOptions extends LeaderElectionSharedOptions {
  election?: string;
  elections?: string[];
  /** `elections`, or `[election]`: the default first. */
  electionNames: string[];
  spread: boolean;
  shutdownTimeoutMs: number;
  resignWhenStuck: boolean;
  leadershipContext: boolean;
  closeStoreOnShutdown: boolean;
  guard: Required<LeaderOnlyGuardOptions>;
}
