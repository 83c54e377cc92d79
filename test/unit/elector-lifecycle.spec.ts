// Issue 11, findings 3 and 4: stop() leaves nothing of ours running, resign() wins over an
// acquire in flight. The store ignores its signal here ('hang-then-succeed'): the elector's own
// guard for third-party stores is what is tested.
import { FaultInjectingStore } from '../support/fault-injecting.store.js';
import { quiet, useElectorFixture } from './elector-fixture.js';

describe('Elector lifecycle', () => {
  const fx = useElectorFixture();

  describe('stop()', () => {
    it('waits for an acquire in flight; if it wins late, releases it before resolving', async () => {
      const store = new FaultInjectingStore(fx.memory).set('hang-then-succeed', 'acquire');
      const a = fx.elector('a', store);
      void a.start();
      let stopped = false;
      const stopping = a.stop().then(() => {
        stopped = true;
      });
      await fx.clock.advance(100);
      expect(stopped).toBe(false);
      store.set('pass');
      store.releaseHeld(); // the store carries the acquire out: we won, after stop() began
      await stopping;
      expect(await fx.held()).toBe(false);
      expect(a.isLeader()).toBe(false);
      expect(store.calls.release).toBe(1);
      // Nothing of ours is pending, and nothing starts later.
      expect(fx.clock.pendingTimers).toBe(0);
      const set = fx.clock.timersSet;
      await fx.clock.advance(10_000);
      expect(fx.clock.timersSet).toBe(set);
    });

    it('waits for a late answer at most one call timeout; one that comes later starts nothing', async () => {
      const store = new FaultInjectingStore(fx.memory).set('hang-then-succeed', 'acquire');
      const warnings: string[] = [];
      const a = fx.elector('a', store, { logger: { ...quiet, warn: (m: string) => warnings.push(m) } });
      void a.start();
      let stopped = false;
      const stopping = a.stop().then(() => {
        stopped = true;
      });
      await fx.clock.advance(1499); // renewDeadline - renewInterval
      expect(stopped).toBe(false);
      await fx.clock.advance(1);
      await stopping;
      expect(fx.clock.pendingTimers).toBe(0);
      const set = fx.clock.timersSet;
      store.set('pass');
      store.releaseHeld();
      await fx.clock.advance(5_000);
      expect(fx.clock.timersSet).toBe(set);
      expect(store.calls.release).toBe(0);
      expect(warnings).toContainEqual(expect.stringContaining('after stop() had finished'));
    });

    it('a leader that stops sets no timer afterwards', async () => {
      const a = fx.elector('a');
      await a.start();
      await fx.clock.advance(1200);
      await a.stop();
      expect(fx.clock.pendingTimers).toBe(0);
      const set = fx.clock.timersSet;
      await fx.clock.advance(10_000);
      expect(a.isLeader()).toBe(false);
      expect(a.state).toBe('stopped');
      expect(fx.clock.timersSet).toBe(set);
    });
  });

  describe('resign()', () => {
    it('wins over an acquire in flight: the win is released and we sit out the round', async () => {
      const storeA = new FaultInjectingStore(fx.memory).set('hang-then-succeed', 'acquire');
      const a = fx.elector('a', storeA);
      const events = fx.record(a);
      const starting = a.start();
      const resigning = a.resign();
      storeA.set('pass');
      storeA.releaseHeld(); // the acquire sent before resign() wins
      await resigning;
      expect(a.isLeader()).toBe(false);
      expect(await fx.held()).toBe(false);
      await starting;
      expect(events.filter((e) => e.type === 'elected')).toEqual([]);
      const b = fx.elector('b');
      await b.start();
      expect(b.isLeader()).toBe(true);
      await fx.clock.advance(5_000);
      expect(a.isLeader()).toBe(false);
      expect(b.isLeader()).toBe(true);
    });

    it('with nobody else around, leads again only after sitting out', async () => {
      const storeA = new FaultInjectingStore(fx.memory).set('hang-then-succeed', 'acquire');
      const a = fx.elector('a', storeA);
      void a.start();
      const resigning = a.resign();
      storeA.set('pass');
      storeA.releaseHeld();
      await resigning;
      await fx.clock.advance(700);
      expect(a.isLeader()).toBe(false);
      await fx.clock.advance(1000);
      expect(a.isLeader()).toBe(true);
    });

    it('on a follower with a poll already scheduled: that poll sits the round out too', async () => {
      const b = fx.elector('b');
      await b.start();
      const a = fx.elector('a');
      await a.start(); // lost: its next poll is scheduled within one retry interval (400 ms ± 15 %)
      await a.resign(); // sit out: no acquire before 2 retry intervals (800 ms) from now
      await b.stop(); // the lease is free at once
      await fx.clock.advance(700);
      expect(a.isLeader()).toBe(false);
      await fx.clock.advance(700);
      expect(a.isLeader()).toBe(true);
    });
  });
});
