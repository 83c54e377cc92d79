// Needs no testing kit: the real module over the in-memory store elects this single instance.

import { InMemoryLeaseStore, LeaderElectionModule, LeaderElectionService } from '@leaderlease/nestjs';
import { Test, TestingModule } from '@nestjs/testing';
import { AppController } from './app.controller';
import { JobsService } from './jobs.service';

describe('AppController', () => {
  let moduleRef: TestingModule;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [LeaderElectionModule.forRoot({ store: new InMemoryLeaseStore(), election: 'jobs', identity: 'solo' })],
      controllers: [AppController],
      providers: [JobsService],
    }).compile();
    await moduleRef.init();
  });

  afterEach(() => moduleRef.close());

  it('runs the leader-only job once this instance leads', async () => {
    await moduleRef.get(LeaderElectionService).waitForLeadership();
    moduleRef.get(JobsService).tick();
    expect(moduleRef.get(AppController).status()).toEqual({ identity: 'solo', leader: true, ticks: 1 });
  });
});
