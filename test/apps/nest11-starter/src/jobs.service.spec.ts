// Written with the package's testing kit: leadership is switched by hand, no store, no timers.

import { LeaderElectionTestingModule, TestingLeadership } from '@leaderlease/nestjs/testing';
import { Test, TestingModule } from '@nestjs/testing';
import { AppController } from './app.controller';
import { JobsService } from './jobs.service';

describe('JobsService', () => {
  let moduleRef: TestingModule;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [LeaderElectionTestingModule.forRoot({ leader: false, identity: 'replica-a' })],
      controllers: [AppController],
      providers: [JobsService],
    }).compile();
    await moduleRef.init();
  });

  afterEach(() => moduleRef.close());

  it('ticks only while this replica leads', async () => {
    const jobs = moduleRef.get(JobsService);
    const leadership = moduleRef.get(TestingLeadership);
    jobs.tick();
    expect(jobs.ticks).toBe(0);
    await leadership.elect();
    jobs.tick();
    expect(jobs.ticks).toBe(1);
    await leadership.revoke();
    jobs.tick();
    expect(jobs.ticks).toBe(1);
  });
});
