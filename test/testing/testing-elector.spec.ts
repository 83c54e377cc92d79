// The testing kit must feed the service what a real Elector would: same events, same order, same
// fields. Each scenario runs on a real Elector (in-memory store, FakeClock: deterministic) and on the
// kit's TestingElector, and the two event logs must match.

import { electionMessages as messages } from '../../lib/election/election.messages.js';
import { Elector, type LeadershipEvent } from '../../lib/index.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { TestingElector } from '../../lib/testing/testing.elector.js';
import { FakeClock } from '../../lib/testing.js';

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
const timings = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, renewIntervalMs: 500, retryIntervalMs: 400 };

type Seen = Pick<LeadershipEvent, 'type' | 'term' | 'leaderId' | 'reason'> | 'complete';

function record(elector: { events$: Elector['events$'] }): Seen[] {
  const seen: Seen[] = [];
  elector.events$.subscribe({
    // `renewed` is the real elector's heartbeat; the kit has no renewals to report.
    next: ({ type, term, leaderId, reason }) => type !== 'renewed' && seen.push({ type, term, leaderId, reason }),
    complete: () => seen.push('complete'),
  });
  return seen;
}

describe('TestingElector emits what the real Elector emits', () => {
  let clock: FakeClock;
  let store: InMemoryLeaseStore;
  const electors: Elector[] = [];
  const real = (identity: string) => {
    const elector = new Elector({ store, election: 'jobs', identity, clock, logger: quiet, ...timings });
    electors.push(elector);
    return elector;
  };

  beforeEach(() => {
    clock = new FakeClock();
    store = new InMemoryLeaseStore({ clock });
  });
  afterEach(async () => {
    await Promise.all(electors.splice(0).map((e) => e.stop()));
    expect(clock.pendingTimers).toBe(0);
  });

  it('win at start, resign, another instance leads, stop as a follower', async () => {
    const a = real('a');
    const realSeen = record(a);
    await a.start();
    await a.resign();
    const b = real('b');
    await b.start();
    await clock.advance(3 * timings.retryIntervalMs); // a polls and learns who leads now
    await a.stop();

    const kit = new TestingElector('jobs', 'a', true);
    const kitSeen = record(kit);
    await kit.start();
    await kit.resign();
    kit.setLeader('b');
    await kit.stop();

    expect(realSeen).toEqual([
      { type: 'elected', term: 1, leaderId: undefined, reason: undefined },
      { type: 'leader-changed', term: undefined, leaderId: 'a', reason: undefined },
      { type: 'revoked', term: 1, leaderId: undefined, reason: messages.reasonResigned },
      { type: 'leader-changed', term: undefined, leaderId: undefined, reason: undefined },
      { type: 'leader-changed', term: undefined, leaderId: 'b', reason: undefined },
      'complete',
    ]);
    expect(kitSeen).toEqual(realSeen);
  });

  it('lose at start to a holder, win after it leaves, stop as the leader', async () => {
    const b = real('b');
    await b.start();
    const a = real('a');
    const realSeen = record(a);
    await a.start();
    await b.stop(); // releases: a wins on its next attempt
    await clock.advance(3 * timings.retryIntervalMs);
    expect(a.isLeader()).toBe(true);
    await a.stop();

    const kit = new TestingElector('jobs', 'a', false);
    const kitSeen = record(kit);
    await kit.start();
    kit.setLeader('b');
    kit.setLeader(undefined);
    kit.elect(2);
    await kit.stop();

    const learnedB = { type: 'leader-changed', term: undefined, leaderId: 'b', reason: undefined };
    // The real follower may or may not see the gap between b's release and its own win.
    const withoutGap = realSeen.filter((e) => e === 'complete' || e.type !== 'leader-changed' || e.leaderId);
    expect(withoutGap).toEqual([
      learnedB,
      { type: 'elected', term: 2, leaderId: undefined, reason: undefined },
      { type: 'leader-changed', term: undefined, leaderId: 'a', reason: undefined },
      { type: 'revoked', term: 2, leaderId: undefined, reason: messages.reasonStopped },
      'complete',
    ]);
    expect(kitSeen.filter((e) => e === 'complete' || e.type !== 'leader-changed' || e.leaderId)).toEqual(withoutGap);
    // Leaving leadership at stop clears the known leader in both.
    expect(kitSeen.at(-2)).toEqual(realSeen.at(-2));
  });

  it('signal, term, leaderId and status() follow the same rules', async () => {
    const a = real('a');
    await a.start();
    const kit = new TestingElector('jobs', 'a', true);
    await kit.start();
    for (const elector of [a, kit]) {
      const signal = elector.signal;
      expect([elector.isLeader(), elector.term, elector.leaderId, signal.aborted]).toEqual([true, 1, 'a', false]);
      await elector.resign();
      expect([elector.isLeader(), elector.term, elector.leaderId, signal.aborted]).toEqual([
        false,
        undefined,
        undefined,
        true,
      ]);
      expect((signal.reason as DOMException).message).toBe(messages.termEnded(messages.reasonResigned));
      expect(elector.signal.aborted).toBe(true);
      expect(elector.health()).toEqual({ healthy: true });
      const { lastRenewAt: _at, ...status } = elector.status();
      expect(status).toEqual({
        election: 'jobs',
        identity: 'a',
        isLeader: false,
        leaderId: null,
        term: null,
        state: 'follower',
        consecutiveFailures: 0,
        lastError: null,
        leaderAdvertise: null,
        leaderTerm: null,
        priority: 0,
        leaderPriority: null,
      });
      await elector.stop();
      expect(elector.health()).toEqual({ healthy: false, reason: messages.notRunning('stopped') });
      await expect(elector.start()).rejects.toThrow(messages.alreadyStarted('jobs'));
    }
  });
});
