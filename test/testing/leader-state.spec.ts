// Issue 16: the testing kit keeps leader state in memory, fenced like a store, so a user's unit
// test can read and write it and drive once-per-tick cron jobs. Public API only.
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { LeaderElectionService, LeaderOnly, LeaseLostError } from '../../lib/index.js';
import { LeaderElectionTestingModule, TestingLeadership } from '../../lib/testing.js';

@Injectable()
class Reports {
  readonly sent: number[] = [];
  constructor(private readonly election: LeaderElectionService) {}

  /** The sample app's pattern: the counter lives in leader state, so a new leader continues it. */
  @Cron('0 0 6 * * *', { name: 'daily-report' })
  @LeaderOnly({ once: 'per-tick' })
  async send(): Promise<void> {
    const next = ((await this.election.readState<number>('reports'))?.value ?? 0) + 1;
    await this.election.writeState(next, 'reports');
    this.sent.push(next);
  }
}

describe('testing kit: leader state', () => {
  let moduleRef: TestingModule;
  let leadership: TestingLeadership;
  let election: LeaderElectionService;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [LeaderElectionTestingModule.forRoot()],
      providers: [Reports],
    }).compile();
    await moduleRef.init();
    leadership = moduleRef.get(TestingLeadership);
    election = moduleRef.get(LeaderElectionService);
  });
  afterEach(() => moduleRef.close());

  it('reads and writes; a follower is refused; state survives the handover with the writer’s term', async () => {
    expect(await election.readState()).toBeUndefined();
    await election.writeState({ cursor: 10 });
    expect(await election.readState()).toEqual({ value: { cursor: 10 }, term: 1 });
    await leadership.setLeader('other-replica');
    await expect(election.writeState({ cursor: 11 })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await election.readState()).toEqual({ value: { cursor: 10 }, term: 1 });
    await leadership.elect();
    await election.writeState({ cursor: 11 });
    expect(await election.readState()).toEqual({ value: { cursor: 11 }, term: 2 });
  });

  it('values are stored as JSON (no shared objects) and checked like a store (size, keys)', async () => {
    const value = { list: [1, 2] };
    await election.writeState(value);
    value.list.push(3);
    expect((await election.readState<typeof value>())?.value.list).toEqual([1, 2]);
    await expect(election.writeState('x'.repeat(70_000))).rejects.toThrow(/maxStateBytes/);
    await expect(election.writeState(1, 'no spaces')).rejects.toThrow(/key/);
  });

  it('a once-per-tick job called twice in the same tick runs once; its counter lives in leader state', async () => {
    const reports = moduleRef.get(Reports);
    await reports.send();
    await reports.send();
    expect(reports.sent).toEqual([1]);
    const tick = await election.readState<number>('tick:daily-report');
    expect(typeof tick?.value).toBe('number');
    expect(tick?.value).toBeLessThanOrEqual(Date.now());
    await leadership.revoke();
    await reports.send(); // a follower: skipped
    expect(reports.sent).toEqual([1]);
  });
});
