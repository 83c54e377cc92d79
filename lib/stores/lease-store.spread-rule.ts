import type { HandoverCapableStore } from './lease-store.capabilities.js';
import type { CallOptions, HandoverRequest } from './lease-store.js';

// The one rule of the handover request slot (one pending request per election), which every store
// declaring `LeaseStore.conditionalSpreadRequests` applies atomically, and the elector's fallback
// for a store that does not.

/** The `reason` of the requests a spread balancer makes (see {@link spreadRequestYields}). */
export const SPREAD_REASON = 'spread';

/**
 * The `reason` of the request a replica makes for itself when its `priority` is higher than the
 * holder's (the preferred leader). Under the slot rule it is a replica's own request, like spread's.
 */
export const PRIORITY_REASON = 'priority';

/**
 * The reasons of the requests replicas make on their own (spread, priority), as opposed to an
 * operator's (any other reason): each yields to an operator's pending request.
 */
export const REPLICA_REASONS: readonly string[] = [SPREAD_REASON, PRIORITY_REASON];

/** A request a replica made on its own (spread, priority), which yields to an operator's. */
export function isReplicaRequest(reason: unknown): boolean {
  return typeof reason === 'string' && REPLICA_REASONS.includes(reason);
}

/**
 * The request-slot rule every store with `LeaseStore.conditionalSpreadRequests` applies
 * atomically: true when `request`, a replica's own request (reason `spread` or `priority`), must
 * not replace `pending`, an operator's request (any other reason), made for the same term or a
 * later one. An operator's choice outranks a replica balancing or preferring itself; between two
 * requests of replicas the last one wins; a request for an older term is stale and any request
 * replaces it.
 */
export function spreadRequestYields(pending: HandoverRequest | undefined, request: HandoverRequest): boolean {
  return (
    isReplicaRequest(request.reason) &&
    pending !== undefined &&
    !isReplicaRequest(pending.reason) &&
    pending.term >= request.term
  );
}

/**
 * Records `request` as the elector does: true when written, false when a replica's request
 * yielded. A store that does not declare `LeaseStore.conditionalSpreadRequests` gets a read first,
 * for replicas' requests only (best effort: the residual race is a write landing in between).
 */
export async function recordHandoverRequest(
  store: HandoverCapableStore,
  request: HandoverRequest,
  options: CallOptions,
): Promise<boolean> {
  if (isReplicaRequest(request.reason) && store.conditionalSpreadRequests !== true) {
    if (spreadRequestYields(await store.readHandover(request.election, options), request)) return false;
  }
  return (await store.requestHandover(request, options)) !== false;
}
