import type { Subject } from 'rxjs';
import type { Clock } from '../shared/clock.js';
import type { LeaseStore } from '../stores/lease-store.js';
import type { BoundedElectorCalls } from './bounded-calls.js';
import type { ElectorLogger, HandoverHooks, LeadershipEvent } from './elector.types.js';
import type { ElectorTimings, StandbyTimings } from './elector-options.js';
import type { FailureLog } from './failure-log.js';
import type { OwnLeaseMeta } from './lease-meta.js';
import type { ObservedLeader } from './observed-leader.js';
import type { TermKeeper } from './term-keeper.js';

/** What the {@link Elector} gives its loop (and the loop passes on to the pieces beside it). */
export interface LoopDeps {
  store: LeaseStore;
  election: string;
  identity: string;
  timings: Readonly<ElectorTimings>;
  clock: Clock;
  logger: ElectorLogger;
  events: Subject<LeadershipEvent>;
  failures: FailureLog;
  /** Who leads as the store last told: the loop writes it, the elector's getters read it. */
  observed: ObservedLeader;
  /** What our lease publishes (advertise, spread's count): spread sets the count through the elector. */
  meta: OwnLeaseMeta;
  /** Our state and term: the loop drives its transitions, the elector's getters read it. */
  terms: TermKeeper;
  handover?: HandoverHooks;
  handoverHoldMs: number;
  standby?: StandbyTimings;
}

/**
 * What the loop lends the pieces beside it (handover desk, standby slots, state calls): its bounded
 * calls, the signal `stop()` aborts, and the bound of a follower's call.
 */
export interface LoopCalls {
  calls: BoundedElectorCalls;
  stopSignal: AbortSignal;
  callTimeoutMs: number;
}
