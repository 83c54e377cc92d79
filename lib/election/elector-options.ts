import type { Clock } from '../shared/clock.js';
import { isStorableText, isValidIdentity } from '../shared/identity.js';
import type { LeaseStore } from '../stores/lease-store.js';
import { electionMessages as messages } from './election.messages.js';
import { checkPriorityOption } from './priority.js';

/**
 * The four timings of an election, all in milliseconds. Validated together: `renewDeadlineMs` must
 * leave a margin below `leaseDurationMs` that holds the worst step-down lag (see the timing rules).
 */
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

/** The timings used when none are given: a 15 s lease, fit for Azure Blob's 15–60 s range. */
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
 * every networked store's minimum lease (1 s and up) is above that. See docs/design/timing-rules.md.
 */
export const MIN_MARGIN_MS = 100;
export const MIN_MARGIN_DIVISOR = 5;
export const MIN_MARGIN_FRACTION = 1 / MIN_MARGIN_DIVISOR;

/** How long spread leaves an election with the replica a directed handover made its leader. */
export const DEFAULT_HANDOVER_HOLD_MS = 300_000;

/** Default `standbyPollMs`: a standby follower polls every 30 s. */
export const DEFAULT_STANDBY_POLL_MS = 30_000;
/** Longest `standbyPollMs`: an hour (shorter where the store's longest lease cannot hold the reservation). */
export const MAX_STANDBY_POLL_MS = 3_600_000;
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
    priority?: number;
    handoverHoldMs?: number;
    activeFollowers?: number;
    standbyPollMs?: number;
    clock?: Partial<Clock>;
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
  checkIdentityOptions(identity, advertise);
  checkPriorityOption(options.priority);
  checkClockOption(options.clock);
  checkProductionStore(store);
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
  const standby = resolveStandby(options.activeFollowers, options.standbyPollMs, timings, store);
  return { election, identity, timings, handoverHoldMs, ...(standby ? { standby } : {}) };
}

/**
 * `identity` and `advertise`, when given, as every store can keep them (see lib/shared/identity.ts):
 * a value a store cannot carry would otherwise fail in every store call, a retry loop that never
 * leads. Throws a TypeError naming the option and the allowed form. Also run by the module's own
 * option check, so a Nest app fails at startup whatever builds its electors.
 */
export function checkIdentityOptions(identity: unknown, advertise: unknown): void {
  if (identity !== undefined && !isValidIdentity(identity)) throw new TypeError(messages.invalidIdentity(identity));
  if (
    advertise !== undefined &&
    (typeof advertise !== 'string' || advertise === '' || advertise.length > 1024 || !isStorableText(advertise))
  ) {
    throw new TypeError(messages.invalidAdvertise(advertise));
  }
}

/** What a clock must have: both clocks and the timers (see {@link Clock}). */
const CLOCK_METHODS = ['now', 'wallNow', 'setTimeout', 'clearTimeout'] as const;

/**
 * The `clock` option, when given, has every method of {@link Clock}: a missing one would otherwise
 * fail at the first term (or, for a timer, never fire). Throws a TypeError naming `clock` and what
 * it lacks. Also run by the module's own option check: its stuck-work, spread and metrics use it too.
 */
export function checkClockOption(clock: unknown): void {
  if (clock === undefined) return;
  const methods = clock !== null && (typeof clock === 'object' || typeof clock === 'function') ? clock : {};
  const missing = CLOCK_METHODS.filter((name) => typeof (methods as Record<string, unknown>)[name] !== 'function');
  // A clock written for 0.1.0 has no wall clock: its own message says what to add.
  if (missing.length === 1 && missing[0] === 'wallNow') throw new TypeError(messages.clockWithoutWallNow);
  if (missing.length > 0) throw new TypeError(messages.clockInvalid(missing, clock));
}

/**
 * What a store that keeps its leases in this process's memory declares (`InMemoryLeaseStore`
 * does): read structurally, so this layer needs no import of that class.
 */
interface ProcessLocalStore {
  readonly inMemory?: unknown;
  readonly allowInProduction?: unknown;
}

/**
 * Under `NODE_ENV=production` (read when the elector is built), refuses a store whose leases live in
 * this process only, unless it was built with `allowInProduction: true`: every replica of a
 * deployment would elect itself, and nothing would say so.
 */
export function checkProductionStore(store: LeaseStore, nodeEnv = globalThis.process?.env?.NODE_ENV): void {
  const local = store as LeaseStore & ProcessLocalStore;
  if (nodeEnv === 'production' && local.inMemory === true && local.allowInProduction !== true) {
    throw new Error(messages.inMemoryInProduction(store.name));
  }
}

/** How long a follower's call (and a release) may take: a win must still leave time to renew. */
export function callTimeoutMs(timings: ElectorTimings): number {
  return timings.renewDeadlineMs - timings.renewIntervalMs;
}

/** Jitter of follower and standby polls (±15 %). */
export const POLL_JITTER = 0.15;

/**
 * How long a directed handover keeps the freed lease for the named replica: one lease, or, with
 * standby followers, until a standby heir's next poll has come (it polls every `standbyPollMs`
 * ±15 %) and its acquire has had its call timeout. Never longer than the store's longest lease:
 * {@link resolveElectorOptions} refuses timings that would need more.
 */
export function handoverReserveMs(timings: ElectorTimings, standby: StandbyTimings | undefined): number {
  if (!standby) return timings.leaseDurationMs;
  return Math.max(
    timings.leaseDurationMs,
    Math.ceil(standby.standbyPollMs * (1 + POLL_JITTER) + callTimeoutMs(timings)),
  );
}

/** With `activeFollowers`: how many followers poll often, and how often the others do. */
export interface StandbyTimings {
  activeFollowers: number;
  standbyPollMs: number;
}

function resolveStandby(
  activeFollowers: number | undefined,
  standbyPollMs: number | undefined,
  timings: ElectorTimings,
  store: LeaseStore,
): StandbyTimings | undefined {
  const { retryIntervalMs } = timings;
  if (activeFollowers === undefined) {
    if (standbyPollMs !== undefined) throw new TypeError(messages.standbyPollWithoutActive);
    return undefined;
  }
  if (!Number.isInteger(activeFollowers) || activeFollowers < 1 || activeFollowers > MAX_ACTIVE_FOLLOWERS) {
    throw new RangeError(
      messages.optionRange('activeFollowers', activeFollowers, `a whole number from 1 to ${MAX_ACTIVE_FOLLOWERS}`),
    );
  }
  // The reservation for a standby heir (handoverReserveMs) must fit the store's longest lease; the
  // 1 ms keeps its rounding up (and float error in × 1.15) from going past it.
  const maxLeaseMs = store.limits.maxLeaseDurationMs;
  const fits = Math.floor((maxLeaseMs - callTimeoutMs(timings) - 1) / (1 + POLL_JITTER));
  const maxPollMs = Math.min(MAX_STANDBY_POLL_MS, fits);
  if (maxPollMs < retryIntervalMs) {
    throw new RangeError(messages.standbyPollNoneFits(store.name, retryIntervalMs, maxLeaseMs, callTimeoutMs(timings)));
  }
  // The default shortens itself to fit (Azure with 60 s leases); a value given explicitly never is.
  const pollMs = standbyPollMs ?? Math.min(maxPollMs, Math.max(DEFAULT_STANDBY_POLL_MS, retryIntervalMs));
  if (!Number.isInteger(pollMs) || pollMs < retryIntervalMs || pollMs > maxPollMs) {
    const why =
      fits < MAX_STANDBY_POLL_MS ? messages.standbyPollForStore(store.name, maxLeaseMs, callTimeoutMs(timings)) : '';
    throw new RangeError(
      messages.optionRange(
        'standbyPollMs',
        pollMs,
        `whole milliseconds from retryIntervalMs (${retryIntervalMs}) to ${maxPollMs}${why}`,
      ),
    );
  }
  return { activeFollowers, standbyPollMs: pollMs };
}
