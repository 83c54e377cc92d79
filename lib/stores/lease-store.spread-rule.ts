import type { HandoverCapableStore } from './lease-store.capabilities.js';
import type { CallOptions, HandoverRequest } from './lease-store.js';

// The one rule of the handover request slot (one pending request per election), which every store
// declaring `LeaseStore.conditionalSpreadRequests` applies atomically, and the elector's fallback
// for a store that does not.

/** The `reason` of the requests a spread balancer makes (see {@link spreadRequestYields}). */
export const SPREAD_REASON = 'spread';

/**
 * The request-slot rule every store with `LeaseStore.conditionalSpreadRequests` applies
 * atomically: true when `request` (a spread request) must not replace `pending`, a request that is
 * not a spread request, made for the same term or a later one. An operator's choice outranks a
 * replica balancing; a request for an older term is stale and any request replaces it.
 */
export function spreadRequestYields(pending: HandoverRequest | undefined, request: HandoverRequest): boolean {
  return (
    request.reason === SPREAD_REASON &&
    pending !== undefined &&
    pending.reason !== SPREAD_REASON &&
    pending.term >= request.term
  );
}

/**
 * Records `request` as the elector does: true when written, false when a spread request yielded.
 * A store that does not declare `LeaseStore.conditionalSpreadRequests` gets a read first, for
 * spread requests only (best effort: the residual race is a write landing in between).
 */
export async function recordHandoverRequest(
  store: HandoverCapableStore,
  request: HandoverRequest,
  options: CallOptions,
): Promise<boolean> {
  if (request.reason === SPREAD_REASON && store.conditionalSpreadRequests !== true) {
    if (spreadRequestYields(await store.readHandover(request.election, options), request)) return false;
  }
  return (await store.requestHandover(request, options)) !== false;
}
