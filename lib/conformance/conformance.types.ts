// The shapes of the exported conformance suite (`leaseStoreConformance`): what a store author passes
// in, the optional fault fixtures, and the plain cases it hands back for any test runner.
import type { LeaseStore } from '../stores/lease-store.js';

/**
 * One case of the conformance suite: register it with your test runner, e.g. in Jest or Vitest
 * `for (const c of cases) (c.skip ? it.skip : it)(c.name, c.run, c.timeoutMs);`, or with
 * `node:test` `for (const c of cases) test(c.name, { skip: c.skip, timeout: c.timeoutMs }, () => c.run());`.
 */
export interface ConformanceCase {
  /** What the store must do, e.g. `lease: the term strictly increases across holders, …`. */
  readonly name: string;
  /** Runs the case with real timers; rejects (an `AssertionError` mostly) when the store breaks the contract. */
  run(): Promise<void>;
  /** A generous bound for `run()` on a loaded 2-core machine, for the runner's per-test timeout. */
  readonly timeoutMs: number;
  /** The case needs a capability or a fixture the options did not declare: register it as skipped. */
  readonly skip?: boolean;
  /** Why it is skipped (a missing fixture or capability). */
  readonly skipReason?: string;
  /**
   * The case may run alongside the others (`test.concurrent`): every case uses its own elections,
   * so all but the clock-skew case (it skews the whole process's `Date`) are safe to overlap.
   */
  readonly concurrent: boolean;
}

/** How a reply gets lost after the server applied the request: the connection is reset, or stays silent. */
export type ReplyLoss = 'reset' | 'silence';

/**
 * A fault fixture: a store over the same backend whose link to the server can lose the reply to a
 * request after the server applied it (a TCP or HTTP proxy in front of the real server, or a wrapper).
 */
export interface ReplyLosingStore {
  /** The store whose replies get lost (same backend and namespace as `createStore`). */
  readonly store: LeaseStore;
  /**
   * Lose the reply to the next acquire by `identity`, after the server applied it: then reset the
   * connection (`reset`: the call fails), or keep silent (`silence`: the caller's signal ends it).
   */
  loseNextAcquireReply(identity: string, how: ReplyLoss): void;
  /**
   * Lose the reply to the next request carrying `marker` (a leader-state write whose value holds
   * it), after the server applied it. Without it, the leader-state reply-loss case is skipped.
   */
  loseNextReplyContaining?(marker: string, how: ReplyLoss): void;
  /** Replies lost so far: proves the fault fired. */
  readonly repliesLost: number;
  /** Ends the fixture (its proxy); the store itself is closed by the suite unless `closeStores` is false. */
  close?(): Promise<void>;
}

/** A fault fixture: a store whose every connection goes through a proxy that `blackHole()` silences. */
export interface BlackHoledStore {
  /** The store whose connections go through the proxy (closed by the case itself). */
  readonly store: LeaseStore;
  /** From now on no byte passes in either direction, yet every socket stays open. */
  blackHole(): void;
  /** Heals the link and ends the fixture. */
  close(): Promise<void>;
}

/** What {@link leaseStoreConformance} needs to know about the store under test. */
export interface LeaseStoreConformanceOptions {
  /**
   * A store over the backend under test. Each call returns a new client of the same backend and
   * namespace (as another replica would have one); a store whose leases live in the instance (the
   * in-memory store) returns the same instance every time.
   */
  createStore(): LeaseStore | Promise<LeaseStore>;
  /**
   * The lease duration the cases request, in ms, within the store's `limits` (default 1000). The
   * expiry cases wait about one lease each, so a short lease makes a fast suite.
   */
  leaseDurationMs?: number;
  /**
   * How long past its expiry the server may still hold a lease, in ms (default 0): a store that
   * counts or revokes leases in whole seconds (etcd, Azure) says 1000. The expiry cases allow this
   * much and no more.
   */
  expiryGranularityMs?: number;
  /** The store implements `writeState`/`readState` (default false): the leader-state cases run. */
  leaderState?: boolean;
  /** The store implements `requestHandover`/`readHandover`/`clearHandover` (default false): the handover cases run. */
  handover?: boolean;
  /**
   * The store implements `readRecord`/`writeRecord` (default false): the shared-records cases run
   * (compare-and-set, no lost update under concurrent writers, records independent of the lease).
   */
  records?: boolean;
  /** The store implements `watch` (default false): the push cases run. */
  push?: boolean;
  /**
   * The store implements the folded renewal `renewWith` (default false): its cases run (the renewal,
   * its state writes and reads answering as the separate calls would), each part with its capability.
   */
  renewWith?: boolean;
  /**
   * Optional: a store whose namespace (table, container, key prefix) does not exist yet; without it
   * the case "a missing namespace is created on first acquire" is skipped.
   */
  createStoreInFreshNamespace?(): LeaseStore | Promise<LeaseStore>;
  /** Optional fault fixture; without it the reply-loss cases are skipped. */
  createReplyLosingStore?(): ReplyLosingStore | Promise<ReplyLosingStore>;
  /** Optional fault fixture; without it the black-hole close case is skipped. */
  createBlackHoledStore?(): BlackHoledStore | Promise<BlackHoledStore>;
  /**
   * How long `close()` may take on a black-holed connection, in ms (default 10000, what the built-in
   * stores promise).
   */
  closeBoundMs?: number;
  /**
   * Close every store a case opened when the case ends (default true). Say false when `createStore`
   * returns one shared instance that `close()` would end for the cases after it.
   */
  closeStores?: boolean;
}
