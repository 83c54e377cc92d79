// The fixture's timings and the bounds the chaos specs hold them to, and where their Azurite is.
import { AZURITE_ACCOUNT, AZURITE_ACCOUNT_KEY } from '../../setup/azurite.js';

/** The fixture's election timings (Azure's minimum lease). */
export const T = {
  leaseMs: 15_000,
  renewDeadlineMs: 10_000,
  renewIntervalMs: 2_000,
  retryMs: 1_000,
  shutdownTimeoutMs: 5_000,
} as const;
/** The elector's polling jitter (±15 %). */
export const RETRY_MAX_MS = T.retryMs * 1.15;
/** A loaded 2-core machine running several scenarios at once: bounds are generous on purpose. */
export const SLACK_MS = 5_000;
/** Crash failover: the lease must expire, then a follower's next poll wins. */
export const FAILOVER_BOUND_MS = T.leaseMs + RETRY_MAX_MS + SLACK_MS;
/** Graceful handover: the lease was released, so a follower's next poll wins. */
export const HANDOVER_BOUND_MS = RETRY_MAX_MS + 2_500;
/** A process must be gone this long after SIGTERM / `close` (drain ≤ shutdownTimeout + 1 s grace). */
export const EXIT_BOUND_MS = 15_000;
/**
 * Longest silence allowed between two store calls of a running instance: a renew may hang until
 * the deadline (10 s), then the follower polls again within a retry interval.
 */
export const CONTENTION_SILENCE_MS = T.renewDeadlineMs + RETRY_MAX_MS + 4_000;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Where the global setup's Azurite is (or one started for this file when run without it). */
export async function sharedAzurite(): Promise<{ port: number; stop(): Promise<void> }> {
  const port = Number(process.env.AZURITE_BLOB_PORT);
  if (port > 0) return { port, stop: async () => undefined };
  const { startAzurite } = await import('../../setup/azurite.js');
  const azurite = await startAzurite();
  return { port: azurite.port, stop: () => azurite.stop() };
}

/** An account connection string whose blob endpoint is `port` on loopback (a proxy, or nothing). */
export function connectionStringFor(port: number, key = AZURITE_ACCOUNT_KEY): string {
  return `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${key};BlobEndpoint=http://127.0.0.1:${port}/${AZURITE_ACCOUNT};`;
}
