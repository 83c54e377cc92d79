// Issue #28, the preferred leader: the pure rules. The follower's (ask the holder for the lease when
// strictly higher, unpinned, and with spread only a holder leading more), the holder's (honour only a
// strictly higher requester, unpinned, not unbalancing spread), the option's range, and when a
// follower may ask again (priority.asks.ts).
import {
  checkPriorityOption,
  MAX_PRIORITY,
  MIN_PRIORITY,
  priorityDeclined,
  priorityOf,
  priorityWouldAsk,
} from '../../lib/election/priority.js';
import { PriorityAsks } from '../../lib/leadership/priority.asks.js';
import type { HandoverRequest } from '../../lib/stores/lease-store.js';
import {
  isReplicaRequest,
  PRIORITY_REASON,
  SPREAD_REASON,
  spreadRequestYields,
} from '../../lib/stores/lease-store.spread-rule.js';

const request = (extra: Partial<HandoverRequest>): HandoverRequest => ({
  election: 'jobs',
  id: 'r1',
  term: 4,
  to: 'c',
  requestedBy: 'c',
  reason: PRIORITY_REASON,
  requestedAt: 0,
  ...extra,
});

describe('priority: the follower asks (priorityWouldAsk)', () => {
  it('only when strictly higher than the holder: equal or lower priorities never ask', () => {
    expect(priorityWouldAsk({ ours: 10, holder: { priority: 5 } })).toBe(true);
    expect(priorityWouldAsk({ ours: 5, holder: { priority: 5 } })).toBe(false);
    expect(priorityWouldAsk({ ours: 4, holder: { priority: 5 } })).toBe(false);
    expect(priorityWouldAsk({ ours: -1, holder: { priority: -2 } })).toBe(true);
  });

  it('a holder publishing no priority (the default, or an older version) counts as 0', () => {
    expect(priorityWouldAsk({ ours: 1, holder: undefined })).toBe(true);
    expect(priorityWouldAsk({ ours: 1, holder: { advertise: 'http://a' } })).toBe(true);
    expect(priorityWouldAsk({ ours: 0, holder: {} })).toBe(false);
    expect(priorityWouldAsk({ ours: -5, holder: undefined })).toBe(false);
    // A value that is not a safe integer (written by hand) is no priority.
    expect(priorityOf({ priority: 1.5 })).toBe(0);
    expect(priorityOf({ priority: Number.NaN })).toBe(0);
    expect(priorityOf({ priority: -7 })).toBe(-7);
  });

  it('never asks a holder pinned by a directed handover', () => {
    expect(priorityWouldAsk({ ours: 10, holder: { priority: 0, pinned: true } })).toBe(false);
  });

  it('with spread: only a holder leading more elections than we do (else spread would move it back)', () => {
    const holder = (leaderships: number) => ({ priority: 0, leaderships });
    expect(priorityWouldAsk({ ours: 10, holder: holder(2), ourLeaderships: 1 })).toBe(true);
    expect(priorityWouldAsk({ ours: 10, holder: holder(1), ourLeaderships: 1 })).toBe(false);
    expect(priorityWouldAsk({ ours: 10, holder: holder(0), ourLeaderships: 1 })).toBe(false);
    // A holder without spread publishes no count: priority alone decides.
    expect(priorityWouldAsk({ ours: 10, holder: { priority: 0 }, ourLeaderships: 3 })).toBe(true);
  });
});

describe('priority: the holder judges (priorityDeclined)', () => {
  const holder = { ours: 5, pinned: false, leaderships: undefined, holdMs: 300_000 };

  it('honours a strictly higher requester', () => {
    expect(priorityDeclined(holder, request({ requesterPriority: 6 }))).toBeUndefined();
  });

  it('declines an equal, lower or unknown requester priority (a stale view never moves leadership down)', () => {
    expect(priorityDeclined(holder, request({ requesterPriority: 5 }))).toMatch(/priority is 5, the requester's 5/);
    expect(priorityDeclined(holder, request({ requesterPriority: 1 }))).toMatch(/only a higher priority/);
    expect(priorityDeclined(holder, request({}))).toMatch(/the requester's unknown/);
  });

  it('declines while pinned by a directed handover', () => {
    expect(priorityDeclined({ ...holder, pinned: true }, request({ requesterPriority: 9 }))).toMatch(
      /directed handover made this replica the leader/,
    );
  });

  it('with spread: declines unless it still leads more than the requester', () => {
    const spread = { ...holder, leaderships: 2 };
    expect(priorityDeclined(spread, request({ requesterPriority: 9, requesterLeaderships: 1 }))).toBeUndefined();
    expect(priorityDeclined(spread, request({ requesterPriority: 9, requesterLeaderships: 2 }))).toMatch(
      /leads 2 election\(s\), the requester 2/,
    );
    // A requester without spread sends no count: priority alone decides.
    expect(priorityDeclined(spread, request({ requesterPriority: 9 }))).toBeUndefined();
  });
});

describe('priority: the request slot treats a priority request as a replica’s own', () => {
  const operator = request({ reason: 'operator', id: 'op' });

  it('yields to an operator request for its term or a later one, replaces a stale one', () => {
    expect(isReplicaRequest(PRIORITY_REASON)).toBe(true);
    expect(isReplicaRequest(SPREAD_REASON)).toBe(true);
    expect(isReplicaRequest('operator')).toBe(false);
    expect(isReplicaRequest(undefined)).toBe(false);
    expect(spreadRequestYields(operator, request({ term: 4 }))).toBe(true);
    expect(spreadRequestYields({ ...operator, term: 5 }, request({ term: 4 }))).toBe(true);
    expect(spreadRequestYields({ ...operator, term: 3 }, request({ term: 4 }))).toBe(false);
  });

  it('replaces and is replaced by a spread request; an operator request replaces it', () => {
    expect(spreadRequestYields(request({ reason: SPREAD_REASON }), request({}))).toBe(false);
    expect(spreadRequestYields(request({}), request({ reason: SPREAD_REASON }))).toBe(false);
    expect(spreadRequestYields(request({}), operator)).toBe(false);
  });
});

describe('priority: the option', () => {
  it('accepts any safe integer, and says the range otherwise', () => {
    for (const ok of [undefined, 0, 10, -3, MIN_PRIORITY, MAX_PRIORITY])
      expect(() => checkPriorityOption(ok)).not.toThrow();
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX_PRIORITY + 1, '10', null]) {
      expect(() => checkPriorityOption(bad)).toThrow(RangeError);
    }
    expect(() => checkPriorityOption(0.5)).toThrow(
      'priority must be a whole number from -9007199254740991 to 9007199254740991 (got 0.5)',
    );
  });
});

describe('priority: when a follower may ask (PriorityAsks)', () => {
  const timings = { leaseDurationMs: 3000, renewDeadlineMs: 2000, renewIntervalMs: 500, retryIntervalMs: 400 };
  const base = timings.renewIntervalMs + 2 * timings.retryIntervalMs;

  it('not before the holder term has been seen for 2 renew intervals, then once, then backing off', () => {
    const asks = new PriorityAsks();
    expect(asks.due('jobs', 'a', 3, 0, timings)).toBe(false);
    expect(asks.due('jobs', 'a', 3, 999, timings)).toBe(false);
    expect(asks.due('jobs', 'a', 3, 1_000, timings)).toBe(true);
    asks.asked('jobs', 1_000, timings);
    expect(asks.due('jobs', 'a', 3, 1_000 + base - 1, timings)).toBe(false);
    expect(asks.due('jobs', 'a', 3, 1_000 + base, timings)).toBe(true);
    asks.asked('jobs', 1_000 + base, timings);
    expect(asks.due('jobs', 'a', 3, 1_000 + 3 * base - 1, timings)).toBe(false);
    expect(asks.due('jobs', 'a', 3, 1_000 + 3 * base, timings)).toBe(true);
    // The back-off stops doubling at 4 times the first.
    let now = 1_000 + 3 * base;
    for (let i = 0; i < 10; i++) {
      asks.asked('jobs', now, timings);
      expect(asks.due('jobs', 'a', 3, now + 4 * base - 1, timings)).toBe(false);
      now += 4 * base;
      expect(asks.due('jobs', 'a', 3, now, timings)).toBe(true);
    }
  });

  it('a new term or holder starts afresh (after its own settling), and elections are independent', () => {
    const asks = new PriorityAsks();
    asks.due('jobs', 'a', 3, 0, timings);
    asks.asked('jobs', 1_000, timings);
    expect(asks.due('jobs', 'a', 4, 1_100, timings)).toBe(false);
    expect(asks.due('jobs', 'a', 4, 2_100, timings)).toBe(true);
    expect(asks.due('jobs', 'b', 4, 2_100, timings)).toBe(false);
    expect(asks.due('reports', 'a', 4, 0, timings)).toBe(false);
    expect(asks.due('reports', 'a', 4, 1_000, timings)).toBe(true);
    asks.keep(new Set(['jobs']));
    // Forgotten: seen afresh.
    expect(asks.due('reports', 'a', 4, 1_000, timings)).toBe(false);
  });
});
