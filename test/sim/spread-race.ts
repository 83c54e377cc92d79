import type { HandoverRequestOptions } from '../../lib/election/elector.types.js';
import type { ElectionRuntime } from '../../lib/leadership/election-runtime.js';
import { SPREAD_REASON } from '../../lib/stores/lease-store.spread-rule.js';
import type { SimReplica } from './replica.js';

/**
 * The spread request `replica`'s balancer would file for `election` if its tick ran now (see
 * lib/leadership/spread.balancer.ts `tick`, restricted to that one election): it does not hold the
 * lease nor step down, sees another holder that publishes no pin and leads at least 2 more than
 * this replica, and asks it for the election with the same reason and `requesterLeaderships`.
 * Undefined when the balancer would not ask. Call it inside the replica's node (its clocks).
 *
 * The balancer's own ticks come every retry interval at random; this one lands where the slot rule
 * matters: within a renew interval of an operator's request for the same election, before the
 * holder has read it (#24 defect 3: a spread request silently replaced the operator's).
 */
export function spreadRequestOf(
  replica: SimReplica,
  election: string,
): { handle: ElectionRuntime; options: HandoverRequestOptions } | undefined {
  const handle = replica.handles.get(election);
  if (!replica.spreading || !handle?.supportsHandover) return undefined;
  if (handle.holdsLease() || handle.isSteppingDown) return undefined;
  let mine = 0;
  for (const other of replica.handles.values()) if (other.holdsLease()) mine += 1;
  const holder = handle.leaderId;
  const meta = handle.holderMeta;
  const theirs = meta?.leaderships;
  if (holder === undefined || holder === handle.identity || theirs === undefined || meta?.pinned) return undefined;
  if (theirs < mine + 2) return undefined;
  return { handle, options: { to: handle.identity, reason: SPREAD_REASON, requesterLeaderships: mine } };
}
