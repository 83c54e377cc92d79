// The loop's poll policy as pure functions: the next tick's delay from the timings, the jitter draw,
// the store's expiry hint, standby mode and the sit-out, with no elector, store or clock involved.
import {
  type FollowerPoll,
  followerDelayMs,
  type NextTick,
  nextTickDelayMs,
  spreadWouldAsk,
} from '../../lib/election/follower-schedule.js';

/** A draw that always returns `value` (0.5 is no jitter: ±0 %). */
const draw = (value: number) => () => value;

const follower: FollowerPoll = {
  retryIntervalMs: 2_000,
  leaseDurationMs: 15_000,
  now: 100_000,
  watching: false,
  spreadWouldAsk: false,
  random: draw(0.5),
};

const tick: NextTick = { ...follower, renewIntervalMs: 3_000, leading: false, pushPending: false, contendNotBefore: 0 };

describe('follower schedule', () => {
  it('polls every retry interval ±15 % without a watch or a hint', () => {
    expect(followerDelayMs(follower)).toBe(2_000);
    expect(followerDelayMs({ ...follower, random: draw(0) })).toBeCloseTo(1_700);
    expect(followerDelayMs({ ...follower, random: draw(1) })).toBeCloseTo(2_300);
    // A hint alone (no watch to report releases) changes nothing.
    expect(followerDelayMs({ ...follower, hint: { inMs: 9_000, at: 100_000 } })).toBe(2_000);
  });

  it('with a watch and a hint, polls just after the hinted expiry, at most every max(retry, lease)', () => {
    const watched = { ...follower, watching: true, hint: { inMs: 9_000, at: 99_000 } };
    // 8 s left + 0.15 × 2 s × (1 + 0.5) after it.
    expect(followerDelayMs(watched)).toBeCloseTo(8_000 + 450);
    expect(followerDelayMs({ ...watched, hint: { inMs: 60_000, at: 100_000 } })).toBe(15_000);
    // A store that keeps answering 0 never makes a hot loop.
    expect(followerDelayMs({ ...watched, hint: { inMs: 0, at: 100_000 } })).toBeGreaterThanOrEqual(300);
  });

  it('keeps polling every retry interval while spread may ask the holder', () => {
    expect(
      followerDelayMs({ ...follower, watching: true, hint: { inMs: 9_000, at: 100_000 }, spreadWouldAsk: true }),
    ).toBe(2_000);
    expect(spreadWouldAsk(1, { leaderships: 3 })).toBe(true);
    expect(spreadWouldAsk(1, { leaderships: 2 })).toBe(false);
    expect(spreadWouldAsk(1, { leaderships: 3, pinned: true })).toBe(false);
    expect(spreadWouldAsk(undefined, { leaderships: 3 })).toBe(false);
  });

  it('polls every standbyPollMs ±15 % on standby, whatever the store', () => {
    const standby = { standbyPollMs: 30_000 };
    expect(followerDelayMs({ ...follower, standby })).toBe(30_000);
    expect(followerDelayMs({ ...follower, standby, watching: true, hint: { inMs: 0, at: 0 } })).toBe(30_000);
  });

  it('renews every renew interval counted from the previous send, never later', () => {
    expect(nextTickDelayMs({ ...tick, leading: true, lastRenewSentAt: 99_000 })).toBe(2_000);
    expect(nextTickDelayMs({ ...tick, leading: true, lastRenewSentAt: 90_000 })).toBe(0);
    expect(nextTickDelayMs({ ...tick, leading: true, lastRenewSentAt: 200_000 })).toBe(3_000);
  });

  it('answers a push at once, except while sitting out; a sit-out ends with the first acquire', () => {
    expect(nextTickDelayMs({ ...tick, pushPending: true })).toBe(0);
    expect(nextTickDelayMs({ ...tick, pushPending: true, contendNotBefore: 100_500 })).toBe(500);
    expect(nextTickDelayMs({ ...tick, contendNotBefore: 103_000 })).toBe(2_000);
    expect(nextTickDelayMs({ ...tick, contendNotBefore: 100_000 })).toBe(2_000);
  });
});
