import type { HandoverRequest, LeaseMeta } from '../stores/lease-store.js';
import { electionMessages as messages } from './election.messages.js';

// The preferred leader (issue #28): each replica has a `priority` (default 0), published with its
// lease. A follower of strictly higher priority than the holder asks for the lease with a handover
// request to itself (reason `priority`); the holder honours it unless a directed handover pinned
// the election. Equal priorities never move leadership, and a move only ever goes up, so once the
// highest-priority replica that can lead holds the lease nobody asks again: no flapping.
//
// With spread, a move by priority must not undo the balance: a follower asks only a holder that
// leads more elections than itself (so after the move it leads at most one more than the holder,
// and spread has nothing to move back). Converged, a replica of higher priority leads at least as
// many elections as one of lower priority, at most one more: the highest take ⌈E/N⌉ first.

/** Range of the `priority` option: any safe integer (a release number or a deploy time in seconds fits). */
export const MIN_PRIORITY = Number.MIN_SAFE_INTEGER;
export const MAX_PRIORITY = Number.MAX_SAFE_INTEGER;

/**
 * The `priority` option, when given, is a safe integer: throws a RangeError naming it and its
 * range otherwise. Run by the elector and by the module's own option check.
 */
export function checkPriorityOption(priority: unknown): void {
  if (priority === undefined) return;
  if (typeof priority !== 'number' || !Number.isSafeInteger(priority)) {
    throw new RangeError(
      messages.optionRange('priority', priority, `a whole number from ${MIN_PRIORITY} to ${MAX_PRIORITY}`),
    );
  }
}

/** The priority a holder published; 0 when it published none (the default, or a version without it). */
export function priorityOf(meta: LeaseMeta | undefined): number {
  const priority = meta?.priority;
  return typeof priority === 'number' && Number.isSafeInteger(priority) ? priority : 0;
}

/** What a follower knows when it weighs asking the holder of one election for it. */
export interface PriorityView {
  /** Our priority. */
  ours: number;
  /** The holder's meta as last observed (its priority, `pinned`, its `leaderships` with spread). */
  holder: LeaseMeta | undefined;
  /** With spread: how many elections we lead; undefined without spread. */
  ourLeaderships?: number;
}

/**
 * The follower's rule: ask the holder for the lease when our priority is strictly higher than its
 * own, no directed handover pins it, and, with spread (both counts known), it leads more elections
 * than we do. Pure: the caller checks that we can lead (healthy, following, not stopping).
 */
export function priorityWouldAsk(view: PriorityView): boolean {
  if (view.ours <= priorityOf(view.holder) || view.holder?.pinned === true) return false;
  const theirs = view.holder?.leaderships;
  return view.ourLeaderships === undefined || theirs === undefined || theirs > view.ourLeaderships;
}

/** What the holder knows when it judges a `priority` request for its term. */
export interface PriorityHolder {
  /** Our priority. */
  ours: number;
  /** A directed handover made us the leader recently (see `handoverHoldMs`). */
  pinned: boolean;
  /** With spread: how many elections we lead; undefined without spread. */
  leaderships: number | undefined;
  /** The pin's length, for the message. */
  holdMs: number;
}

/**
 * The holder's rule for a `priority` request, judged with what holds now (the requester's view may
 * be stale): why it is declined, or undefined to honour it.
 */
export function priorityDeclined(holder: PriorityHolder, request: HandoverRequest): string | undefined {
  if (holder.pinned) return messages.handoverPinned(holder.holdMs);
  const theirs = request.requesterPriority;
  if (theirs === undefined || !(theirs > holder.ours)) return messages.handoverNotHigher(holder.ours, theirs);
  const { leaderships } = holder;
  const requesterLeads = request.requesterLeaderships;
  if (leaderships !== undefined && requesterLeads !== undefined && !(leaderships > requesterLeads)) {
    return messages.handoverPriorityUnbalances(leaderships, requesterLeads);
  }
  return undefined;
}
