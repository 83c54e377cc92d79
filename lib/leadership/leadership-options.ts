import type { LeaseStore } from '../stores/lease-store.js';

/**
 * After the shutdown timeout, calls still running get this long (at most shutdownTimeoutMs) to react
 * to their aborted signal before the lease is released; bounded so shutdown always completes.
 */
export const ABORT_GRACE_MS = 1_000;

/**
 * What an election's runtime reads of the module options, once validated and defaulted. Declared
 * here, below the Nest layer, so the runtime never imports it: the module's resolved options fit it.
 */
export interface LeadershipOptions {
  /** Its name, for metrics and messages. */
  readonly store: Pick<LeaseStore, 'name'>;
  /** How long a drain (shutdown or handover) waits for running leader-only work. */
  readonly shutdownTimeoutMs: number;
  /** The module's stuck-work threshold (ms); undefined: off unless a handler sets its own. */
  readonly stuckAfterMs?: number;
  /** A leader whose work is stuck resigns. */
  readonly resignWhenStuck: boolean;
  /** false: runs enter no AsyncLocalStorage context (`currentLeadership()` answers undefined). */
  readonly leadershipContext?: boolean;
}
