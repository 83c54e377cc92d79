import { hostname } from 'node:os';
import { Elector, type ElectorOptions, type LeadershipEvent } from '../../lib/election/elector.js';
import { FakeClock } from '../../lib/shared/fake-clock.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { FaultInjectingStore } from '../support/fault-injecting.store.js';

// Deterministic: every timer runs on the fake clock, every store call is in memory.
const timings = { leaseDurationMs: 3000, renewDeadlineMs: 2000, renewIntervalMs: 500, retryIntervalMs: 400 };
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

describe('Elector', () => {
  let clock: FakeClock;
  let memory: InMemoryLeaseStore;
  const electors: Elector[] = [];

  function elector(identity: string, store: LeaseStore = memory, extra: Partial<ElectorOptions> = {}) {
    const created = new Elector({ store, election: 'jobs', identity, clock, logger: quiet, ...timings, ...extra });
    electors.push(created);
    return created;
  }

  function record(target: Elector): LeadershipEvent[] {
    const events: LeadershipEvent[] = [];
    target.events$.subscribe((event) => events.push(event));
    return events;
  }

  beforeEach(() => {
    clock = new FakeClock();
    memory = new InMemoryLeaseStore({ clock });
  });

  afterEach(async () => {
    await Promise.all(electors.splice(0).map((e) => e.stop()));
    expect(clock.pendingTimers).toBe(0);
  });

  it('acquires on start, without waiting a poll interval', async () => {
    const a = elector('a');
    const events = record(a);
    await a.start();
    expect(a.isLeader()).toBe(true);
    expect(a.term).toBe(1);
    expect(a.leaderId).toBe('a');
    expect(a.signal.aborted).toBe(false);
    expect(events).toEqual([
      { type: 'elected', term: 1, validUntil: expect.any(Number) },
      { type: 'leader-changed', leaderId: 'a' },
    ]);
    // Counted from when the acquire was sent: the whole renew deadline, no more (wall clock).
    expect(events[0].validUntil).toBe(clock.wallNow() + timings.renewDeadlineMs);
  });

  it('keeps leading while renewals succeed, far beyond the renew deadline', async () => {
    const store = new FaultInjectingStore(memory);
    const a = elector('a', store);
    await a.start();
    const events = record(a);
    await clock.advance(20_000);
    expect(a.isLeader()).toBe(true);
    expect(a.term).toBe(1);
    expect(store.calls.renew).toBeGreaterThanOrEqual(39);
    const renewals = events.filter((e) => e.type === 'renewed');
    expect(renewals.length).toBe(store.calls.renew);
    expect(renewals.every((e) => e.term === 1)).toBe(true);
  });

  it('steps down exactly at the deadline when renewals fail', async () => {
    const store = new FaultInjectingStore(memory);
    const a = elector('a', store);
    const events = record(a);
    await a.start();
    const signal = a.signal;
    store.set('transient'); // the store is down: renew, release and re-acquire all fail
    await clock.advance(1999);
    expect(a.isLeader()).toBe(true);
    expect(a.status().consecutiveFailures).toBeGreaterThan(0);
    await clock.advance(1);
    expect(a.isLeader()).toBe(false);
    expect(signal.aborted).toBe(true);
    expect(a.term).toBeUndefined();
    expect(events).toContainEqual({ type: 'revoked', term: 1, reason: expect.stringContaining('deadline') });
  });

  it('steps down at the deadline when a renewal hangs, and a late answer does not revive it', async () => {
    const store = new FaultInjectingStore(memory);
    const a = elector('a', store);
    await a.start();
    store.set('hang-then-succeed', 'renew').set('transient', 'acquire', 'release');
    await clock.advance(1999);
    expect(a.isLeader()).toBe(true);
    await clock.advance(1);
    expect(a.isLeader()).toBe(false);
    store.set('pass', 'renew');
    store.releaseHeld();
    await clock.advance(0);
    expect(a.isLeader()).toBe(false);
    expect(a.term).toBeUndefined();
  });

  it('steps down when a well-behaved store call hangs until its signal aborts', async () => {
    const store = new FaultInjectingStore(memory);
    const a = elector('a', store);
    await a.start();
    store.set('hang');
    await clock.advance(2000);
    expect(a.isLeader()).toBe(false);
    await clock.advance(2000); // let the hanging release time out too
    expect(store.calls.release).toBe(1);
  });

  it('does not stall on a store that ignores its signal: it gives up at the deadline and keeps contending', async () => {
    const store = new FaultInjectingStore(memory);
    const a = elector('a', store);
    const events = record(a);
    await a.start();
    store.set('hang-then-succeed', 'renew');
    await clock.advance(2000);
    expect(events).toContainEqual({ type: 'revoked', term: 1, reason: expect.stringContaining('deadline') });
    await clock.advance(1000);
    expect(store.calls.acquire).toBeGreaterThan(1); // the loop went on without the hung call
    expect(a.isLeader()).toBe(true);
    expect(a.term).toBe(2);
    store.releaseHeld();
  });

  it('stop() returns even when the store ignores its signals', async () => {
    const store = new FaultInjectingStore(memory);
    const a = elector('a', store);
    await a.start();
    store.set('hang-then-succeed');
    let stopped = false;
    const stopping = a.stop().then(() => {
      stopped = true;
    });
    await clock.advance(1499);
    expect(stopped).toBe(false); // waiting for the release, up to its timeout
    await clock.advance(1);
    await stopping;
    expect(a.state).toBe('stopped');
    store.set('pass');
    store.releaseHeld();
  });

  it('counts failing time from the first failed call, even when the deadline ends the term first', async () => {
    const store = new FaultInjectingStore(memory);
    const a = elector('a', store);
    await a.start();
    store.set('hang');
    await clock.advance(2400); // first failed renew sent at +500
    expect(a.isLeader()).toBe(false);
    expect(a.status().consecutiveFailures).toBeGreaterThan(0);
    expect(a.health().healthy).toBe(true);
    await clock.advance(200);
    expect(a.health()).toEqual({ healthy: false, reason: expect.stringContaining('store failing') });
    await clock.advance(2000); // let the hanging release time out
  });

  it('treats a clock jump past the deadline (a pause) as the end of leadership before any timer runs', async () => {
    const a = elector('a');
    const events = record(a);
    await a.start();
    const signal = a.signal;
    clock.jump(2500); // no timer has run: a GC or SIGSTOP pause
    expect(a.isLeader()).toBe(false);
    expect(signal.aborted).toBe(true);
    expect(events.map((e) => e.type)).toContain('revoked');
  });

  it('lets a follower take over once the leader stops renewing and the lease expires, with a greater term', async () => {
    const storeA = new FaultInjectingStore(memory);
    const a = elector('a', storeA);
    const b = elector('b');
    await a.start();
    await b.start();
    expect(b.isLeader()).toBe(false);
    expect(b.leaderId).toBe('a');
    storeA.set('transient');
    await clock.advance(2000);
    expect(a.isLeader()).toBe(false);
    expect(b.isLeader()).toBe(false); // the lease itself lasts 3000 ms
    await clock.advance(1500);
    expect(b.isLeader()).toBe(true);
    expect(b.term).toBe(2);
  });

  it('a leader that lost the lease keeps contending and leads again later', async () => {
    const storeA = new FaultInjectingStore(memory);
    const a = elector('a', storeA);
    const b = elector('b');
    await a.start();
    await b.start();
    storeA.set('transient');
    await clock.advance(3500);
    expect(b.isLeader()).toBe(true);
    storeA.set('pass');
    await clock.advance(1000);
    expect(a.isLeader()).toBe(false);
    expect(a.leaderId).toBe('b');
    await b.stop();
    await clock.advance(1000);
    expect(a.isLeader()).toBe(true);
    expect(a.term).toBe(3);
  });

  it('steps down at once when the store says the lease is no longer ours', async () => {
    const store = new FaultInjectingStore(memory);
    const a = elector('a', store);
    const events = record(a);
    await a.start();
    store.set('lost', 'renew').set('transient', 'acquire');
    await clock.advance(500);
    expect(a.isLeader()).toBe(false);
    expect(a.leaderId).toBeUndefined();
    expect(events).toContainEqual({ type: 'revoked', term: 1, reason: expect.stringContaining('no longer ours') });
    // Like every other step-down, observers hear that we are no longer the known leader.
    expect(events.at(-1)).toEqual({ type: 'leader-changed', leaderId: undefined });
  });

  it('resign hands leadership to another instance and sits out the next round', async () => {
    const a = elector('a');
    const b = elector('b');
    await a.start();
    await b.start();
    await a.resign();
    expect(a.isLeader()).toBe(false);
    await clock.advance(600);
    expect(b.isLeader()).toBe(true);
    expect(a.isLeader()).toBe(false);
  });

  it('resign with nobody else around: leads again after sitting out', async () => {
    const a = elector('a');
    await a.start();
    await a.resign();
    await clock.advance(500);
    expect(a.isLeader()).toBe(false);
    await clock.advance(1000);
    expect(a.isLeader()).toBe(true);
    expect(a.term).toBe(2);
  });

  it('releases on stop; a watching follower takes over without waiting for its poll', async () => {
    const a = elector('a');
    const b = elector('b', memory, { retryIntervalMs: 1500 });
    await a.start();
    await b.start();
    const signal = a.signal;
    await a.stop();
    expect(signal.aborted).toBe(true);
    expect(a.state).toBe('stopped');
    await clock.advance(0);
    expect(b.isLeader()).toBe(true);
  });

  it('stop({ release: false }) leaves the lease to expire', async () => {
    const a = elector('a');
    await a.start();
    await a.stop({ release: false });
    const info = await memory.read('jobs', { signal: new AbortController().signal });
    expect(info).toEqual({ held: true, holder: 'a', term: 1 });
  });

  it('stop awaits beforeRelease after aborting the signal and before releasing', async () => {
    const a = elector('a');
    await a.start();
    const signal = a.signal;
    const seen: string[] = [];
    await a.stop({
      beforeRelease: async () => {
        seen.push(`aborted=${signal.aborted}`);
        const info = await memory.read('jobs', { signal: new AbortController().signal });
        seen.push(`held=${info.held}`);
      },
    });
    expect(seen).toEqual(['aborted=true', 'held=true']);
    expect((await memory.read('jobs', { signal: new AbortController().signal })).held).toBe(false);
  });

  it('never leads while the store refuses it (fatal), and reports unhealthy', async () => {
    const store = new FaultInjectingStore(memory).set('fatal');
    const errors: string[] = [];
    const a = elector('a', store, { logger: { ...quiet, error: (m: string) => errors.push(m) } });
    await a.start();
    await clock.advance(5000);
    expect(a.isLeader()).toBe(false);
    expect(a.health()).toEqual({ healthy: false, reason: expect.stringContaining('injected fatal') });
    expect(a.status()).toMatchObject({ state: 'follower', isLeader: false, lastError: { kind: 'fatal' } });
    expect(errors.length).toBe(1); // loud once, not once per poll
  });

  it('transient failures turn health down only once they outlast the renew deadline', async () => {
    const store = new FaultInjectingStore(memory).set('transient');
    const a = elector('a', store);
    await a.start();
    expect(a.health().healthy).toBe(true);
    await clock.advance(2100);
    expect(a.health().healthy).toBe(false);
    store.set('pass');
    await clock.advance(500);
    expect(a.health().healthy).toBe(true);
    expect(a.isLeader()).toBe(true);
  });

  it('an acquire answered after the deadline is handed back, not acted upon', async () => {
    const store = new FaultInjectingStore(memory).set('hang-then-succeed', 'acquire');
    const a = elector('a', store);
    const started = a.start();
    clock.jump(2500);
    store.set('pass');
    store.releaseHeld();
    await started;
    expect(a.isLeader()).toBe(false);
    expect((await memory.read('jobs', { signal: new AbortController().signal })).held).toBe(false);
  });

  it('followers see who leads and report leader changes', async () => {
    const a = elector('a');
    const b = elector('b');
    const events = record(b);
    await a.start();
    await b.start();
    expect(b.leaderId).toBe('a');
    expect(b.status()).toMatchObject({ isLeader: false, leaderId: 'a', term: null, state: 'follower' });
    expect(events).toEqual([{ type: 'leader-changed', leaderId: 'a' }]);
  });

  it('defaults identity to hostname-pid-random', () => {
    const a = elector(undefined as unknown as string);
    expect(a.identity).toMatch(
      new RegExp(`^${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-${process.pid}-[0-9a-f]{4}$`),
    );
    expect(elector(undefined as unknown as string).identity).not.toBe(a.identity);
  });
});
