import type { LeaseMeta } from '../stores/lease-store.js';
import { POLL_JITTER } from './elector-options.js';

/** The holder's remaining lease as the store last told (a hint), and when we heard it (monotonic). */
export interface ExpiryHint {
  inMs: number;
  at: number;
}

/** What a follower's next poll depends on. `random` draws in [0, 1) (Math.random in production). */
export interface FollowerPoll {
  retryIntervalMs: number;
  leaseDurationMs: number;
  /** Monotonic now. */
  now: number;
  /** Standing by (`activeFollowers`, no slot, no handover to us awaited): polls every `standbyPollMs`. */
  standby?: { standbyPollMs: number };
  /** A push watch is open: it reports releases (not expiries). */
  watching: boolean;
  hint?: ExpiryHint;
  /** Spread may ask the holder for its lease: keep its meta fresh (see {@link spreadWouldAsk}). */
  spreadWouldAsk: boolean;
  random: () => number;
}

/** The next tick of the loop: a leader's renew, or a follower's poll (acquire, or only a read while sitting out). */
export interface NextTick extends FollowerPoll {
  renewIntervalMs: number;
  leading: boolean;
  /** When our last acquire/renew was sent (monotonic). */
  lastRenewSentAt?: number;
  /** A store pushed "may be free" while a call was in flight. */
  pushPending: boolean;
  /** Until then (monotonic) we sit out (resigned, handed over): polls only read who leads. */
  contendNotBefore: number;
}

/** `ms` ±{@link POLL_JITTER}, from one draw. */
export function jittered(ms: number, random: () => number): number {
  return ms * (1 + (random() * 2 - 1) * POLL_JITTER);
}

/**
 * Delay of the loop's next tick. A leader renews every renew interval counted from the previous
 * send. A follower: at once after a push (unless sitting out); while sitting out, polls that fall
 * inside only read who leads now, and the first acquire comes when the sit-out ends. (The follower
 * delay is drawn twice once the sit-out is over: kept, so seeded simulation runs replay as before.)
 */
export function nextTickDelayMs(t: NextTick): number {
  if (t.leading) {
    const delay = t.renewIntervalMs - (t.now - (t.lastRenewSentAt ?? 0));
    return Math.min(Math.max(0, delay), t.renewIntervalMs);
  }
  if (t.pushPending && t.now >= t.contendNotBefore) return 0;
  const sitOutMs = t.contendNotBefore - t.now;
  const delay = Math.min(followerDelayMs(t), Math.max(0, sitOutMs));
  return sitOutMs <= 0 ? followerDelayMs(t) : delay;
}

/**
 * A follower's next try. Without a watch, or without the store's expiry hint: every retry
 * interval (±15 %). With both, a release wakes us through the watch, so a poll is needed only
 * for what the watch does not report — the holder's lease expiring (a crash) — and as a safety
 * net for a lost notification: we try again just after the holder's lease can have expired
 * (0.15–0.3 × min(retry, lease) after the hinted expiry: spread, and never a hot loop on a store
 * that keeps answering 0), and at least every max(retry, lease) ±15 %. Crash failover stays
 * within lease + retry; the hint only schedules, the acquire itself is judged by the store.
 * A standby follower (`activeFollowers`, no slot) polls every `standbyPollMs` whatever the store.
 */
export function followerDelayMs(p: FollowerPoll): number {
  const { retryIntervalMs: retry, leaseDurationMs: lease, hint } = p;
  const jitter = (ms: number): number => jittered(ms, p.random);
  if (p.standby) return jitter(p.standby.standbyPollMs);
  if (!p.watching || !hint || p.spreadWouldAsk) return jitter(retry);
  const untilExpiry = Math.max(0, hint.inMs - (p.now - hint.at));
  const afterExpiry = Math.min(retry, lease) * POLL_JITTER * (1 + p.random());
  return Math.min(untilExpiry + afterExpiry, jitter(Math.max(retry, lease)));
}

/**
 * Spread may ask this holder for its lease (it leads at least 2 more than we do, unpinned): keep
 * its lease meta fresh by polling every retry interval rather than on the expiry hint.
 */
export function spreadWouldAsk(ourLeaderships: number | undefined, holderMeta: LeaseMeta | undefined): boolean {
  const theirs = holderMeta?.leaderships;
  return (
    ourLeaderships !== undefined && theirs !== undefined && theirs >= ourLeaderships + 2 && holderMeta?.pinned !== true
  );
}
