// Issue 27, part 1: leadership events on node:diagnostics_channel, published by a bare Elector (no
// Nest), on the fake clock over the in-memory store. Subscribers get plain objects naming the
// election, this replica and the term; nothing of a store's connection or lease id.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { jest } from '@jest/globals';
import { LEADER_ELECTION_CHANNELS, type LeaderElectionChannelMessages } from '../../lib/index.js';
import { leaderElectionChannels } from '../../lib/shared/diagnostics-channels.js';
import { FaultInjectingStore } from '../support/fault-injecting.store.js';
import { timings, useElectorFixture } from './elector-fixture.js';

type Key = keyof typeof LEADER_ELECTION_CHANNELS;

/** Subscribes to every channel until the test ends; returns what each received, in order. */
function listen(): Array<{ key: Key; message: Record<string, unknown> }> {
  const seen: Array<{ key: Key; message: Record<string, unknown> }> = [];
  for (const key of Object.keys(LEADER_ELECTION_CHANNELS) as Key[]) {
    const onMessage = (message: unknown) => seen.push({ key, message: message as Record<string, unknown> });
    subscribe(LEADER_ELECTION_CHANNELS[key], onMessage);
    cleanups.push(() => unsubscribe(LEADER_ELECTION_CHANNELS[key], onMessage));
  }
  return seen;
}
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('diagnostics channels', () => {
  const fx = useElectorFixture();

  it('are namespaced leaderlease:<event>, one per key, created once', () => {
    expect(LEADER_ELECTION_CHANNELS).toEqual({
      elected: 'leaderlease:elected',
      revoked: 'leaderlease:revoked',
      leaderChanged: 'leaderlease:leader-changed',
      handover: 'leaderlease:handover',
      storeCallFailed: 'leaderlease:store-call-failed',
      leaderOnlyRun: 'leaderlease:leader-only-run',
      leaderOnlySkipped: 'leaderlease:leader-only-skipped',
    });
    expect(Object.isFrozen(LEADER_ELECTION_CHANNELS)).toBe(true);
    for (const key of Object.keys(LEADER_ELECTION_CHANNELS) as Key[]) {
      expect(leaderElectionChannels[key].name).toBe(LEADER_ELECTION_CHANNELS[key]);
      expect(leaderElectionChannels[key].hasSubscribers).toBe(false);
    }
  });

  it('a bare Elector publishes elected, leader-changed and revoked with election, identity and term', async () => {
    const seen = listen();
    const a = fx.elector('a');
    await a.start();
    expect(a.isLeader()).toBe(true);
    const elected = seen.find((s) => s.key === 'elected')
      ?.message as unknown as LeaderElectionChannelMessages['elected'];
    expect(elected).toEqual({ election: 'jobs', identity: 'a', term: 1, validUntil: expect.any(Number) });
    expect(seen.find((s) => s.key === 'leaderChanged')?.message).toEqual({
      election: 'jobs',
      identity: 'a',
      leaderId: 'a',
      term: 1,
    });

    const b = fx.elector('b');
    await b.start();
    expect(seen.filter((s) => s.key === 'leaderChanged').at(-1)?.message).toEqual({
      election: 'jobs',
      identity: 'b',
      leaderId: 'a',
      term: 1,
    });

    await a.resign();
    expect(seen.filter((s) => s.key === 'revoked').map((s) => s.message)).toEqual([
      { election: 'jobs', identity: 'a', term: 1, reason: expect.stringContaining('resign') },
    ]);
    // Order as on events$: elected before its leader-changed; nothing for renewals.
    expect(seen.map((s) => `${s.key}:${s.message.identity}`).slice(0, 2)).toEqual(['elected:a', 'leaderChanged:a']);
  });

  it('a failed store call names the call, the typed kind, the store and our term, and nothing more', async () => {
    const store = new FaultInjectingStore(fx.memory);
    const a = fx.elector('a', store);
    await a.start();
    const seen = listen();
    store.set('transient', 'renew');
    await fx.clock.advance(timings.renewIntervalMs + 10);
    const failed = seen.filter((s) => s.key === 'storeCallFailed').map((s) => s.message);
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed[0]).toEqual({
      election: 'jobs',
      identity: 'a',
      term: 1,
      store: store.name,
      call: 'renew',
      kind: 'transient',
      message: expect.any(String),
    });
  });

  it('a follower failing to acquire publishes acquire failures without a term; a stop() abort is not one', async () => {
    const store = new FaultInjectingStore(fx.memory).set('hang', 'acquire');
    const seen = listen();
    const a = fx.elector('a', store);
    const started = a.start();
    await fx.clock.advance(timings.renewDeadlineMs);
    await started;
    const failed = seen.filter((s) => s.key === 'storeCallFailed').map((s) => s.message);
    expect(failed[0]).toMatchObject({ call: 'acquire', kind: 'transient', term: undefined, identity: 'a' });
    const before = failed.length;
    // The next acquire hangs too: stop() aborts it, which is our doing, not the store's.
    await fx.clock.advance(timings.retryIntervalMs * 1.2);
    await a.stop();
    expect(seen.filter((s) => s.key === 'storeCallFailed')).toHaveLength(before);
  });

  it('handover: requested on the requester, honoured on the leader, declined with why', async () => {
    const [a, b] = [fx.elector('a'), fx.elector('b')];
    await a.start();
    await b.start();
    const seen = listen();
    const request = await b.requestHandover({ to: 'b', reason: 'maintenance' });
    await fx.clock.advance(timings.renewIntervalMs + 10);
    const handovers = seen.filter((s) => s.key === 'handover').map((s) => s.message);
    expect(handovers).toEqual([
      {
        election: 'jobs',
        identity: 'b',
        phase: 'requested',
        term: 1,
        requestId: request?.id,
        to: 'b',
        reason: 'maintenance',
        requestedBy: 'b',
      },
      expect.objectContaining({ identity: 'a', phase: 'honoured', requestId: request?.id, term: 1 }),
    ]);

    // b leads 1 election, a spread requester that leads 0 is not 2 behind: declined, and says why.
    for (let i = 0; i < 50 && !b.isLeader(); i++) await fx.clock.advance(50);
    expect(b.isLeader()).toBe(true);
    b.setLeaderships(1);
    seen.length = 0;
    const spread = await a.requestHandover({ reason: 'spread', requesterLeaderships: 0 });
    expect(seen.filter((s) => s.key === 'handover').map((s) => s.message)).toEqual([
      expect.objectContaining({ identity: 'a', phase: 'requested', requestId: spread?.id }),
    ]);
    await fx.clock.advance(timings.renewIntervalMs + 10);
    expect(seen.filter((s) => s.key === 'handover').at(-1)?.message).toEqual(
      expect.objectContaining({
        identity: 'b',
        phase: 'declined',
        requestId: spread?.id,
        declinedBecause: expect.any(String),
      }),
    );
  });

  it('publishes nothing, and builds nothing, without a subscriber', async () => {
    const spy = jest.spyOn(leaderElectionChannels.elected, 'publish');
    const a = fx.elector('a');
    await a.start();
    expect(a.isLeader()).toBe(true);
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });
});
