// Issue 27, part 5: currentLeadership() inside leader-only runs (@LeaderOnly, runIfLeader, @OnElected),
// after awaits and timers too, undefined outside; and the leader-only run / skipped channels. The
// real service, explorer and decorator on the testing kit's elector.
import 'reflect-metadata';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  currentLeadership,
  LEADER_ELECTION_CHANNELS,
  LeaderElectionService,
  LeaderOnly,
  type LeadershipContext,
  OnElected,
} from '../../lib/index.js';
import { LeaderElectionTestingModule, TestingLeadership } from '../../lib/testing.js';

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

@Injectable()
class Jobs {
  readonly seen: Array<{ where: string; context: LeadershipContext | undefined }> = [];
  onElectedDone?: Promise<void>;

  @LeaderOnly()
  async work(): Promise<string> {
    this.seen.push({ where: 'start', context: currentLeadership() });
    await tick();
    this.seen.push({ where: 'after await', context: currentLeadership() });
    await new Promise<void>((resolve) =>
      setTimeout(() => {
        this.seen.push({ where: 'in timer', context: currentLeadership() });
        resolve();
      }, 1),
    );
    return 'done';
  }

  @LeaderOnly()
  fails(): never {
    throw new Error('boom');
  }

  @OnElected()
  elected(): void {
    this.seen.push({ where: 'onElected', context: currentLeadership() });
    this.onElectedDone = tick().then(() => {
      this.seen.push({ where: 'onElected after await', context: currentLeadership() });
    });
  }
}

describe('currentLeadership()', () => {
  let moduleRef: TestingModule;
  let jobs: Jobs;
  let leadership: TestingLeadership;
  const cleanups: Array<() => void> = [];

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [LeaderElectionTestingModule.forRoot()],
      providers: [Jobs],
    }).compile();
    await moduleRef.init();
    jobs = moduleRef.get(Jobs);
    leadership = moduleRef.get(TestingLeadership);
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) cleanup();
    await moduleRef.close();
  });

  function listen(key: 'leaderOnlyRun' | 'leaderOnlySkipped'): Array<Record<string, unknown>> {
    const seen: Array<Record<string, unknown>> = [];
    const onMessage = (message: unknown) => seen.push(message as Record<string, unknown>);
    subscribe(LEADER_ELECTION_CHANNELS[key], onMessage);
    cleanups.push(() => unsubscribe(LEADER_ELECTION_CHANNELS[key], onMessage));
    return seen;
  }

  it('answers inside a @LeaderOnly run, after awaits and in timers, and undefined outside', async () => {
    expect(currentLeadership()).toBeUndefined();
    await expect(jobs.work()).resolves.toBe('done');
    const election = moduleRef.get(LeaderElectionService);
    const runs = jobs.seen.filter((s) => !s.where.startsWith('onElected'));
    expect(runs.map((s) => s.where)).toEqual(['start', 'after await', 'in timer']);
    for (const { context } of runs) {
      expect(context && { ...context, signal: undefined }).toEqual({
        election: election.status().election,
        identity: election.identity,
        term: 1,
        signal: undefined,
      });
      // The term's own signal (aborted when the term ends), not a copy.
      expect(context?.signal).toBe(election.signal);
    }
    expect(currentLeadership()).toBeUndefined();
  });

  it('answers in an @OnElected handler (and after its awaits) with the term it was elected for', async () => {
    await jobs.onElectedDone;
    expect(jobs.seen.map((s) => [s.where, s.context?.term])).toEqual([
      ['onElected', 1],
      ['onElected after await', 1],
    ]);
    await leadership.revoke();
    jobs.seen.length = 0;
    await leadership.elect(7);
    await jobs.onElectedDone;
    expect(jobs.seen.map((s) => [s.where, s.context?.term])).toEqual([
      ['onElected', 7],
      ['onElected after await', 7],
    ]);
  });

  it('answers in runIfLeader, undefined in its otherwise and on a follower', async () => {
    const election = moduleRef.get(LeaderElectionService);
    const inside = await election.runIfLeader(async () => {
      await tick();
      return currentLeadership();
    });
    expect(inside?.term).toBe(1);
    await leadership.revoke();
    expect(
      election.runIfLeader(
        () => currentLeadership(),
        () => currentLeadership(),
      ),
    ).toBeUndefined();
  });

  it('keeps the term a run started in after that term ends, its signal aborted', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const election = moduleRef.get(LeaderElectionService);
    const run = election.runIfLeader(async () => {
      await gate;
      return currentLeadership();
    });
    await leadership.setLeader('replica-b');
    release();
    const after = await run;
    expect(after?.term).toBe(1);
    expect(after?.signal.aborted).toBe(true);
  });

  it('runs publish started and finished (outcome, duration) with the handler and term; skips publish too', async () => {
    const runs = listen('leaderOnlyRun');
    const skips = listen('leaderOnlySkipped');
    await jobs.work();
    expect(() => jobs.fails()).toThrow('boom');
    expect(runs).toEqual([
      expect.objectContaining({ handler: 'Jobs.work', phase: 'started', term: 1 }),
      expect.objectContaining({
        handler: 'Jobs.work',
        phase: 'finished',
        outcome: 'ok',
        durationMs: expect.any(Number),
      }),
      expect.objectContaining({ handler: 'Jobs.fails', phase: 'started' }),
      expect.objectContaining({ handler: 'Jobs.fails', phase: 'finished', outcome: 'error' }),
    ]);
    expect(skips).toEqual([]);
    await leadership.setLeader('replica-b');
    await expect(jobs.work()).resolves.toBeUndefined();
    const election = moduleRef.get(LeaderElectionService);
    expect(skips).toEqual([
      {
        election: election.status().election,
        identity: election.identity,
        handler: 'Jobs.work',
        leaderId: 'replica-b',
        steppingDown: false,
      },
    ]);
  });
});
