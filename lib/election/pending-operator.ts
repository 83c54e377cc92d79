import { toLeaseStoreError } from '../shared/errors.js';
import { supportsHandover } from '../stores/lease-store.capabilities.js';
import type { HandoverRequest } from '../stores/lease-store.js';
import { isReplicaRequest } from '../stores/lease-store.spread-rule.js';
import { electionMessages } from './election.messages.js';
import type { LoopCalls, LoopDeps } from './loop-deps.js';

/**
 * Where a leader's own way out meets an operator: the operator's handover request pending for the
 * term being left (`term`), if there is one that names another replica or none, and is not `except`
 * (the request being honoured). A leader leaving on its own account (the end of a drain for a spread
 * or priority request, a resignation) reserves the lease for that request's target instead: no
 * renewal reads requests once the term is being left, so this is one read. It is bounded by half a
 * renew interval, so the release still comes within the step-down's bound (health's "not acting"
 * rule); a failure or a slow store (logged at debug) counts as no request.
 */
export async function pendingOperatorRequest(
  d: Pick<LoopDeps, 'store' | 'election' | 'identity' | 'logger' | 'timings'>,
  lent: LoopCalls,
  term: number,
  except?: string,
): Promise<HandoverRequest | undefined> {
  const { store, election, identity, logger } = d;
  if (!supportsHandover(store) || lent.stopSignal.aborted) return undefined;
  let pending: HandoverRequest | undefined;
  try {
    const boundMs = Math.min(lent.callTimeoutMs, d.timings.renewIntervalMs / 2);
    pending = await lent.calls.call('readHandover', boundMs, (signal) => store.readHandover(election, { signal }));
  } catch (raw) {
    logger.debug?.(electionMessages.handoverCheckFailed(election, toLeaseStoreError(raw).message));
    return undefined;
  }
  if (!pending || pending.id === except || pending.term !== term || isReplicaRequest(pending.reason)) return undefined;
  return pending.to === identity ? undefined : pending;
}
