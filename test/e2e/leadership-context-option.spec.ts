// The module's `leadershipContext` option (issue 27): on by default, so currentLeadership() answers in
// a @LeaderOnly run of the real module; `false` enters no AsyncLocalStorage context (its cost is
// process-wide on Node 20 and 22: every await pays for the promise hooks it turns on), so the same
// run sees undefined; anything but a boolean fails at startup naming the option.
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  currentLeadership,
  InMemoryLeaseStore,
  LeaderElectionModule,
  type LeaderElectionModuleOptions,
  LeaderElectionService,
  LeaderOnly,
  type LeadershipContext,
} from '../../lib/index.js';

@Injectable()
class Jobs {
  @LeaderOnly()
  async work(): Promise<LeadershipContext | undefined> {
    await new Promise<void>((resolve) => setTimeout(resolve, 1));
    return currentLeadership();
  }
}

async function app(options: Partial<LeaderElectionModuleOptions>): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      LeaderElectionModule.forRoot({ store: new InMemoryLeaseStore(), election: 'context', ...options } as never),
    ],
    providers: [Jobs],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('the leadershipContext module option', () => {
  it('is on by default: a @LeaderOnly run of the real module sees its term after an await', async () => {
    const moduleRef = await app({});
    try {
      const service = moduleRef.get(LeaderElectionService);
      expect(service.isLeader()).toBe(true);
      const context = await moduleRef.get(Jobs).work();
      expect(context).toMatchObject({ election: 'context', identity: service.identity, term: service.term });
      expect(context?.signal).toBe(service.signal);
    } finally {
      await moduleRef.close();
    }
  });

  it('false: the same run sees no context', async () => {
    const moduleRef = await app({ leadershipContext: false });
    try {
      expect(moduleRef.get(LeaderElectionService).isLeader()).toBe(true);
      await expect(moduleRef.get(Jobs).work()).resolves.toBeUndefined();
    } finally {
      await moduleRef.close();
    }
  });

  it('refuses anything but a boolean at startup, naming the option', async () => {
    await expect(app({ leadershipContext: 'yes' as never })).rejects.toThrow(/leadershipContext/);
  });
});
