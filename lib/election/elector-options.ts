import { messages } from '../leader-election.messages.js';
import type { LeaseStore } from '../stores/lease-store.js';

export interface ElectorTimings {
  /** How long the store keeps the lease without a renewal. Default 15000 (Azure allows 15–60 s). */
  leaseDurationMs: number;
  /** We stop acting as leader this long after the last successful renew was *sent*. Default 10000. */
  renewDeadlineMs: number;
  /** How often the leader renews. Default 2500. */
  renewIntervalMs: number;
  /** How often followers try to acquire (±15 % jitter). Default 2000. */
  retryIntervalMs: number;
}

export const DEFAULT_TIMINGS: Readonly<ElectorTimings> = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  renewIntervalMs: 2_500,
  retryIntervalMs: 2_000,
};

/**
 * The safety margin `leaseDurationMs - renewDeadlineMs` must hold the worst step-down lag: a late
 * deadline timer (event-loop stall, GC pause), the call latency between our send instant and the
 * server's, clock-rate drift between us and the store, and the store's expiry granularity. It must
 * be at least max(MIN_MARGIN_MS, leaseDurationMs / MIN_MARGIN_DIVISOR). A fraction of the lease
 * scales with what the user already tolerates (drift grows with the lease); the floor does not
 * scale, because a stall or a round trip does not get shorter with the lease. So a quarter margin
 * (the rule of thumb) is accepted exactly for leases of at least 4 x MIN_MARGIN_MS = 400 ms;
 * every networked store's minimum lease (1 s and up) is above that. See README "Timing rules".
 */
export const MIN_MARGIN_MS = 100;
export const MIN_MARGIN_DIVISOR = 5;
export const MIN_MARGIN_FRACTION = 1 / MIN_MARGIN_DIVISOR;

/** How long spread leaves an election with the replica a directed handover made its leader. */
export const DEFAULT_HANDOVER_HOLD_MS = 300_000;

/** Default `standbyPollMs`: a standby follower polls every 30 s. */
export const DEFAULT_STANDBY_POLL_MS = 30_000;
/** Most candidate slots an election may have (`activeFollowers`). */
export const MAX_ACTIVE_FOLLOWERS = 16;

/** What an election name may be (also checked by the CLI before it asks a store). */
export const ELECTION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/**
 * Validate and default the elector's options; throws a RangeError/TypeError naming the option and
 * its allowed range, so a misconfigured app fails at startup rather than electing unsafely.
 */
export function resolveElectorOptions(
  options: {
    store?: LeaseStore;
    election?: string;
    identity?: string;
    advertise?: string;
    handoverHoldMs?: number;
    activeFollowers?: number;
    standbyPollMs?: number;
  } & Partial<ElectorTimings>,
): {
  election: string;
  identity?: string;
  timings: ElectorTimings;
  handoverHoldMs: number;
  standby?: StandbyTimings;
} {
  const { store, election, identity, advertise, handoverHoldMs = DEFAULT_HANDOVER_HOLD_MS } = options;
  if (!store || typeof store.acquire !== 'function') {
    throw new TypeError(messages.optionRequired('store', 'a LeaseStore such as AzureBlobLeaseStore'));
  }
  if (typeof election !== 'string' || !ELECTION_PATTERN.test(election)) {
    throw new TypeError(messages.invalidElection(election));
  }
  if (identity !== undefined && (typeof identity !== 'string' || identity.trim() === '' || identity.length > 256)) {
    throw new TypeError(messages.invalidIdentity(identity));
  }
  if (advertise !== undefined && (typeof advertise !== 'string' || advertise === '' || advertise.length > 1024)) {
    throw new TypeError(messages.invalidAdvertise(advertise));
  }
  if (!Number.isInteger(handoverHoldMs) || handoverHoldMs < 0 || handoverHoldMs > 86_400_000) {
    throw new RangeError(
      messages.optionRange('handoverHoldMs', handoverHoldMs, 'whole milliseconds from 0 to 86400000'),
    );
  }
  const timings = { ...DEFAULT_TIMINGS };
  for (const key of Object.keys(DEFAULT_TIMINGS) as (keyof ElectorTimings)[]) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw new RangeError(messages.optionNotPositive(key, value));
    }
    timings[key] = value;
  }
  const { min, max, step, reason } = {
    min: store.limits.minLeaseDurationMs,
    max: store.limits.maxLeaseDurationMs,
    step: store.limits.leaseDurationStepMs ?? 1,
    reason: store.limits.reason,
  };
  if (timings.leaseDurationMs < min || timings.leaseDurationMs > max) {
    throw new RangeError(messages.leaseDurationOutOfRange(store.name, timings.leaseDurationMs, min, max, reason));
  }
  if (timings.leaseDurationMs % step !== 0) {
    throw new RangeError(messages.leaseDurationStep(store.name, timings.leaseDurationMs, step));
  }
  // Smaller lease (as in tests) without explicit timings: scale the defaults down with it.
  if (options.leaseDurationMs !== undefined) {
    if (options.renewDeadlineMs === undefined) timings.renewDeadlineMs = Math.round((timings.leaseDurationMs * 2) / 3);
    if (options.renewIntervalMs === undefined) timings.renewIntervalMs = Math.round(timings.renewDeadlineMs / 4);
    if (options.retryIntervalMs === undefined) timings.retryIntervalMs = Math.round(timings.leaseDurationMs / 7.5);
  }
  if (!(timings.renewDeadlineMs < timings.leaseDurationMs) || !(timings.renewDeadlineMs > timings.renewIntervalMs)) {
    throw new RangeError(
      messages.optionOrder(
        'renewDeadlineMs',
        timings.renewDeadlineMs,
        'renewIntervalMs',
        timings.renewIntervalMs,
        'leaseDurationMs',
        timings.leaseDurationMs,
      ),
    );
  }
  const minMargin = Math.max(MIN_MARGIN_MS, timings.leaseDurationMs * MIN_MARGIN_FRACTION);
  if (timings.leaseDurationMs - timings.renewDeadlineMs < minMargin) {
    throw new RangeError(
      messages.marginTooSmall(
        timings.leaseDurationMs,
        timings.renewDeadlineMs,
        Math.ceil(minMargin),
        MIN_MARGIN_MS,
        `1/${MIN_MARGIN_DIVISOR}`,
      ),
    );
  }
  const standby = resolveStandby(options.activeFollowers, options.standbyPollMs, timings.retryIntervalMs);
  return { election, identity, timings, handoverHoldMs, ...(standby ? { standby } : {}) };
}

/** With `activeFollowers`: how many followers poll often, and how often the others do. */
export interface StandbyTimings {
  activeFollowers: number;
  standbyPollMs: number;
}

function resolveStandby(
  activeFollowers: number | undefined,
  standbyPollMs: number | undefined,
  retryIntervalMs: number,
): StandbyTimings | undefined {
  if (activeFollowers === undefined) {
    if (standbyPollMs !== undefined) throw new TypeError(messages.standbyPollWithoutActive);
    return undefined;
  }
  if (!Number.isInteger(activeFollowers) || activeFollowers < 1 || activeFollowers > MAX_ACTIVE_FOLLOWERS) {
    throw new RangeError(
      messages.optionRange('activeFollowers', activeFollowers, `a whole number from 1 to ${MAX_ACTIVE_FOLLOWERS}`),
    );
  }
  const pollMs = standbyPollMs ?? Math.max(DEFAULT_STANDBY_POLL_MS, retryIntervalMs);
  if (!Number.isInteger(pollMs) || pollMs < retryIntervalMs || pollMs > 3_600_000) {
    throw new RangeError(
      messages.optionRange(
        'standbyPollMs',
        pollMs,
        `whole milliseconds from retryIntervalMs (${retryIntervalMs}) to 3600000`,
      ),
    );
  }
  return { activeFollowers, standbyPollMs: pollMs };
}
