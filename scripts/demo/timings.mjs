// @ts-check
// The library's defaults, which the sample app keeps; only used to tell the user what to expect.
export const LEASE_S = 15;
export const RETRY_S = 2;
// A crash: the lease expires 15 s after its last renewal (0–2.5 s before the crash), then a
// follower wins at its next poll (every 2 s ± 15 %). A graceful stop releases: the next poll wins.
export const CRASH_EXPECTED = '~13–17 s';
export const GRACEFUL_EXPECTED = '0–2.3 s';
// A directed handover: the leader reads the request at its next renewal (every 2.5 s), drains
// (the jobs take ≤ 0.2 s), releases the lease reserved for the named instance, which takes it at
// its next poll (every 2 s ± 15 %).
export const DIRECTED_EXPECTED = '0–5 s';
export const RENEW_S = 2.5;

export const INSTANCE_STOP_TIMEOUT_MS = 20_000; // shutdownTimeout (10 s) + release, with room to spare
export const AZURITE_STOP_TIMEOUT_MS = 5_000;
