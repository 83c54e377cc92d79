import 'reflect-metadata';
import { type INestApplication, Injectable, type OnModuleInit } from '@nestjs/common';
import { firstValueFrom, take, toArray } from 'rxjs';
import {
  type ElectedHookEvent,
  type LeaderChangedHookEvent,
  OnElected,
  OnLeaderChanged,
  OnRevoked,
  type RevokedHookEvent,
} from '../../lib/nest/decorators/leadership-hooks.decorator.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { FaultInjectingStore } from '../support/fault-injecting.store.js';
import {
  CaptureLogger,
  closeAll,
  createApp,
  electionOf,
  RETRY_MS,
  RecordingStore,
  SLACK_MS,
  sleep,
  waitFor,
} from './helpers.js';

@Injectable()
class Hooks implements OnModuleInit {
  initialised = false;
  readonly elected: Array<ElectedHookEvent & { initialised: boolean }> = [];
  readonly revoked: RevokedHookEvent[] = [];
  readonly leaders: LeaderChangedHookEvent[] = [];
  readonly pump: Array<{ what: 'start' | 'stop'; term: number; at: number }> = [];

  onModuleInit(): void {
    this.initialised = true;
  }

  @OnElected()
  onElected(event: ElectedHookEvent): void {
    this.elected.push({ ...event, initialised: this.initialised });
  }

  /** A queue pump: works while leader, stops when the term's signal aborts. */
  @OnElected()
  async runPump({ term, signal }: ElectedHookEvent): Promise<void> {
    this.pump.push({ what: 'start', term, at: Date.now() });
    while (!signal.aborted) await sleep(10);
    this.pump.push({ what: 'stop', term, at: Date.now() });
  }

  @OnRevoked()
  onRevoked(event: RevokedHookEvent): void {
    this.revoked.push(event);
  }

  @OnLeaderChanged()
  onLeaderChanged(event: LeaderChangedHookEvent): void {
    this.leaders.push(event);
  }

  @OnElected()
  @OnRevoked()
  failing(): void {
    throw new Error('handler bug');
  }

  @OnElected()
  async failingAsync(): Promise<void> {
    throw new Error('async handler bug');
  }
}

describe('LeaderElectionService and leadership hooks', () => {
  const apps: INestApplication[] = [];
  afterEach(() => closeAll(apps));

  it('status() is plain JSON; isLeader$ starts with the current value; waitForLeadership resolves on election', async () => {
    const store = new InMemoryLeaseStore();
    const a = await createApp({ election: { store, identity: 'app-a' } });
    apps.push(a);
    const b = await createApp({ election: { store, identity: 'app-b' } });
    apps.push(b);
    const [ea, eb] = [electionOf(a), electionOf(b)];

    const status = ea.status();
    expect(JSON.parse(JSON.stringify(status))).toEqual(status);
    expect(status).toMatchObject({
      election: 'e2e',
      identity: 'app-a',
      isLeader: true,
      leaderId: 'app-a',
      term: 1,
      state: 'leader',
      consecutiveFailures: 0,
    });
    expect(typeof status.lastRenewAt).toBe('string');
    expect(eb.status()).toMatchObject({
      identity: 'app-b',
      isLeader: false,
      leaderId: 'app-a',
      term: null,
      state: 'follower',
    });

    await expect(firstValueFrom(ea.isLeader$)).resolves.toBe(true);
    await expect(firstValueFrom(eb.isLeader$)).resolves.toBe(false);
    await expect(ea.waitForLeadership()).resolves.toMatchObject({ term: 1 });

    const bValues = firstValueFrom(eb.isLeader$.pipe(take(2), toArray()));
    const waiting = eb.waitForLeadership();
    const aborted = new AbortController();
    const waitingAborted = eb.waitForLeadership(aborted.signal);
    aborted.abort(new Error('caller gave up'));
    await expect(waitingAborted).rejects.toThrow('caller gave up');

    const signalA = ea.signal;
    await ea.resign();
    expect(signalA.aborted).toBe(true);
    expect(ea.isLeader()).toBe(false);
    const won = await waiting;
    expect(won.term).toBe(2);
    expect(won.signal.aborted).toBe(false);
    await expect(bValues).resolves.toEqual([false, true]);
    // app-a sits out two retry intervals after resigning, then polls and learns who leads.
    await waitFor('app-a to see app-b lead', () => ea.leaderId === 'app-b', RETRY_MS * 3 + SLACK_MS);
  });

  it('runIfLeader runs on the leader only (else otherwise()), and the shutdown drain waits for it as for @LeaderOnly', async () => {
    const store = new RecordingStore();
    const a = await createApp({ election: { store, identity: 'app-a' } });
    apps.push(a);
    const b = await createApp({ election: { store, identity: 'app-b' } });
    apps.push(b);
    expect(electionOf(b).runIfLeader(() => 'ran')).toBeUndefined();
    expect(
      electionOf(b).runIfLeader(
        () => 'ran',
        () => 'skipped',
      ),
    ).toBe('skipped');

    let finishedAt = 0;
    const work = electionOf(a).runIfLeader(async () => {
      await sleep(300);
      finishedAt = Date.now();
      return 'done';
    });
    await a.close();
    apps.splice(apps.indexOf(a), 1);
    await expect(work).resolves.toBe('done');
    expect(store.releases).toHaveLength(1);
    expect(finishedAt).toBeGreaterThan(0);
    expect(finishedAt).toBeLessThanOrEqual(store.releases[0]!.at);
  });

  it('waitForLeadership rejects when the app shuts down first; isLeader$ completes', async () => {
    const store = new InMemoryLeaseStore();
    apps.push(await createApp({ election: { store, identity: 'app-a' } }));
    const b = await createApp({ election: { store, identity: 'app-b' } });
    const values = firstValueFrom(electionOf(b).isLeader$.pipe(toArray()));
    const waiting = electionOf(b).waitForLeadership();
    await b.close();
    await expect(waiting).rejects.toThrow('leader election "e2e" stopped before this instance became the leader');
    await expect(values).resolves.toEqual([false]);
  });

  it('delivers a leadership won during module init at bootstrap, to initialised providers; failing handlers are only logged', async () => {
    const store = new RecordingStore();
    const logger = new CaptureLogger();
    const a = await createApp({ election: { store, identity: 'app-a' }, providers: [Hooks], logger });
    apps.push(a);
    const hooks = a.get(Hooks);
    expect(hooks.elected).toEqual([{ term: 1, signal: expect.any(AbortSignal), initialised: true }]);
    expect(hooks.leaders).toEqual([{ leaderId: 'app-a' }]);
    await waitFor('the failing handlers to be logged', () => logger.matching('error', /handler bug/).length >= 2);
    expect(logger.matching('error', /^@OnElected\(\) handler Hooks\.failing failed: handler bug$/)).toHaveLength(1);
    expect(
      logger.matching('error', /^@OnElected\(\) handler Hooks\.failingAsync failed: async handler bug$/),
    ).toHaveLength(1);
    // The elector carries on: still leading, still renewing.
    await sleep(700);
    expect(electionOf(a).isLeader()).toBe(true);
    expect(electionOf(a).status().consecutiveFailures).toBe(0);
  });

  it('@OnElected signal aborts on resign; @OnRevoked and @OnLeaderChanged follow; the other app is elected', async () => {
    const store = new InMemoryLeaseStore();
    const a = await createApp({ election: { store, identity: 'app-a' }, providers: [Hooks] });
    apps.push(a);
    const b = await createApp({ election: { store, identity: 'app-b' }, providers: [Hooks] });
    apps.push(b);
    const [ha, hb] = [a.get(Hooks), b.get(Hooks)];
    expect(ha).not.toBe(hb);
    expect(hb.elected).toEqual([]);
    expect(hb.leaders).toEqual([{ leaderId: 'app-a' }]);
    const { signal } = ha.elected[0]!;
    expect(signal.aborted).toBe(false);

    await electionOf(a).resign();
    expect(signal.aborted).toBe(true);
    expect(ha.revoked).toEqual([{ term: 1, reason: 'resigned' }]);
    await waitFor('the pump to stop', () => ha.pump.some((p) => p.what === 'stop'));
    await waitFor('app-b elected', () => hb.elected.length === 1, RETRY_MS * 3 + SLACK_MS);
    expect(hb.elected[0]).toMatchObject({ term: 2 });
    await waitFor('app-a to see app-b lead', () => ha.leaders.at(-1)?.leaderId === 'app-b', RETRY_MS * 1.2 + SLACK_MS);
    expect(hb.leaders.at(-1)).toEqual({ leaderId: 'app-b' });
  });

  it('@OnElected signal aborts when the store says the lease is no longer ours', async () => {
    const shared = new InMemoryLeaseStore();
    const faulty = new FaultInjectingStore(shared);
    const a = await createApp({ election: { store: faulty, identity: 'app-a' }, providers: [Hooks] });
    apps.push(a);
    const hooks = a.get(Hooks);
    const { signal } = hooks.elected[0]!;
    faulty.set('lost', 'renew');
    await waitFor('the term to end', () => signal.aborted, 3_000);
    expect(hooks.revoked).toEqual([{ term: 1, reason: 'the store says the lease is no longer ours' }]);
    expect(electionOf(a).isLeader()).toBe(false);
  });

  it('@OnElected signal aborts at the renew deadline when the store keeps failing', async () => {
    const faulty = new FaultInjectingStore(new InMemoryLeaseStore());
    const a = await createApp({ election: { store: faulty, identity: 'app-a' }, providers: [Hooks] });
    apps.push(a);
    const hooks = a.get(Hooks);
    const { signal } = hooks.elected[0]!;
    const failingFrom = Date.now();
    faulty.set('transient');
    await waitFor('the term to end', () => signal.aborted, 2_000 + SLACK_MS);
    // Renew deadline 2000 ms after the last successful renew was sent (≤ 500 ms before failingFrom).
    expect(Date.now() - failingFrom).toBeGreaterThanOrEqual(1_400);
    expect(hooks.revoked).toEqual([{ term: 1, reason: 'renew deadline passed without a successful renewal' }]);
  });

  it('app.close() completes even when a store call ignores its abort signal (bounded, with a warning)', async () => {
    const faulty = new FaultInjectingStore(new InMemoryLeaseStore());
    const logger = new CaptureLogger();
    const a = await createApp({ election: { store: faulty, identity: 'app-a' }, logger });
    faulty.set('hang-then-succeed');
    const renewsBefore = faulty.calls.renew;
    await waitFor('a renew call to get stuck', () => faulty.calls.renew > renewsBefore, 2_000);
    const start = Date.now();
    await a.close();
    const took = Date.now() - start;
    // The elector stops waiting for the stuck renew at once and for the release at its timeout
    // (renew deadline - renew interval = 1500 ms here), plus slack for a loaded machine.
    expect(took).toBeGreaterThanOrEqual(1_400);
    expect(took).toBeLessThan(1_500 + SLACK_MS);
    expect(logger.matching('warn', /release failed .*timed out/)).toHaveLength(1);
    faulty.releaseHeld();
  });

  it('on app.close() the pump sees the abort and stops before the lease is released', async () => {
    const store = new RecordingStore();
    const a = await createApp({ election: { store, identity: 'app-a' }, providers: [Hooks] });
    const hooks = a.get(Hooks);
    await a.close();
    const stop = hooks.pump.find((p) => p.what === 'stop');
    expect(stop).toBeDefined();
    expect(stop!.at).toBeLessThanOrEqual(store.releases[0]!.at);
    expect(hooks.revoked).toEqual([{ term: 1, reason: 'stopped' }]);
    expect(electionOf(a).status().state).toBe('stopped');
  });
});
