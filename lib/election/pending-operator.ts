import { toLeaseStoreError } from '../shared/errors.js';
import { supportsHandover } from '../stores/lease-store.capabilities.js';
import type { HandoverRequest } from '../stores/lease-store.js';
import { isReplicaRequest } from '../stores/lease-store.spread-rule.js';
import { electionMessages } from './election.messages.js';
import type { LoopCalls, LoopDeps } from './loop-deps.js';

/**
 * One read of the handover request pending for `d`'s election, bounded by `boundMs`: null when none
 * is, undefined when the store keeps no requests or the read failed (logged at debug: the caller
 * reads again at its next turn, or goes on without it).
 */
export async function readPendingRequest(
  d: Pick<LoopDeps, 'store' | 'election' | 'logger'>,
  lent: LoopCalls,
  boundMs: number,
): Promise<HandoverRequest | null | undefined> {
  const { store, election, logger } = d;
  if (!supportsHandover(store)) return undefined;
  try {
    const read = (signal: AbortSignal) => store.readHandover(election, { signal });
    return (await lent.calls.call('readHandover', boundMs, read)) ?? null;
  } catch (raw) {
    logger.debug?.(electionMessages.handoverCheckFailed(election, toLeaseStoreError(raw).message));
    return undefined;
  }
}

/**
 * Where a leader's own way out meets an operator: the operator's handover request pending for the
 * term being left (`term`), if there is one that names another replica or none, and is not `except`
 * (the request being honoured). A leader leaving on its own account (the end of a drain for a spread
 * or priority request, a resignation) reserves the lease for that request's target instead: no
 * renewal reads requests once the term is being left, so this is one read. It is bounded by half a
 * renew interval, so the release still comes within the step-down's bound (health's "not acting"
 * rule); a failure or a slow store counts as no request.
 */
export async function pendingOperatorRequest(
  d: Pick<LoopDeps, 'store' | 'election' | 'identity' | 'logger' | 'timings'>,
  lent: LoopCalls,
  term: number,
  except?: string,
): Promise<HandoverRequest | undefined> {
  if (lent.stopSignal.aborted) return undefined;
  const pending = await readPendingRequest(d, lent, Math.min(lent.callTimeoutMs, d.timings.renewIntervalMs / 2));
  if (!pending || pending.id === except || pending.term !== term || isReplicaRequest(pending.reason)) return undefined;
  return pending.to === d.identity ? undefined : pending;
}
