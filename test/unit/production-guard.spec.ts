// The production guard (issue 27): with NODE_ENV=production an Elector, and so LeaderElectionModule,
// refuses an InMemoryLeaseStore at construction (every replica would elect itself), unless the store
// was built with allowInProduction: true. The testing kit builds no Elector and is unaffected.
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Elector } from '../../lib/election/elector.js';
import { LeaderElectionModule, LeaderElectionService, LeaderOnly } from '../../lib/index.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { LeaderElectionTestingModule, TestingLeadership } from '../../lib/testing.js';
import { quiet } from './elector-fixture.js';

const REFUSAL =
  "store: InMemoryLeaseStore keeps leases in this process's memory, and NODE_ENV is production: every replica would elect itself leader. Use a shared store (AzureBlobLeaseStore, PostgresLeaseStore, MySqlLeaseStore, RedisLeaseStore, EtcdLeaseStore), or, for an app that runs as one single process, new InMemoryLeaseStore({ allowInProduction: true })";

@Injectable()
class Jobs {
  @LeaderOnly()
  run(): string {
    return 'ran';
  }
}

const saved = process.env.NODE_ENV;
afterEach(() => {
  if (saved === undefined) delete process.env.NODE_ENV;
  else process.env.NODE_ENV = saved;
});

const elector = (store: InMemoryLeaseStore) => new Elector({ store, election: 'guarded', logger: quiet });

describe('production guard', () => {
  it('refuses an in-memory store in production, naming InMemoryLeaseStore and NODE_ENV', () => {
    process.env.NODE_ENV = 'production';
    expect(() => elector(new InMemoryLeaseStore())).toThrow(new Error(REFUSAL));
  });

  it('accepts it in production when built with allowInProduction: true', async () => {
    process.env.NODE_ENV = 'production';
    const built = elector(new InMemoryLeaseStore({ allowInProduction: true }));
    await built.start();
    expect(built.isLeader()).toBe(true);
    await built.stop();
  });

  it.each([undefined, 'test', 'development', 'Production'])('accepts it when NODE_ENV is %p', (nodeEnv) => {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
    expect(() => elector(new InMemoryLeaseStore())).not.toThrow();
  });

  it('reads NODE_ENV when the elector is built', async () => {
    process.env.NODE_ENV = 'test';
    const built = elector(new InMemoryLeaseStore());
    process.env.NODE_ENV = 'production';
    await built.start();
    expect(built.isLeader()).toBe(true);
    await built.stop();
    expect(() => elector(new InMemoryLeaseStore())).toThrow(REFUSAL);
  });

  it('refuses a non-boolean allowInProduction when the store is built', () => {
    expect(() => new InMemoryLeaseStore({ allowInProduction: 'yes' as never })).toThrow(
      new TypeError('InMemoryLeaseStore: allowInProduction must be true or false (got yes)'),
    );
  });

  it('fails LeaderElectionModule at startup, and lets an allowed store through', async () => {
    process.env.NODE_ENV = 'production';
    const compile = (store: InMemoryLeaseStore) =>
      Test.createTestingModule({
        imports: [LeaderElectionModule.forRoot({ store, election: 'guarded' })],
        providers: [Jobs],
      }).compile();
    await expect(compile(new InMemoryLeaseStore())).rejects.toThrow(REFUSAL);
    const moduleRef = await compile(new InMemoryLeaseStore({ allowInProduction: true }));
    await moduleRef.init();
    expect(moduleRef.get(LeaderElectionService).isLeader()).toBe(true);
    expect(moduleRef.get(Jobs).run()).toBe('ran');
    await moduleRef.close();
  });

  it('leaves the testing kit alone in production', async () => {
    process.env.NODE_ENV = 'production';
    const moduleRef = await Test.createTestingModule({
      imports: [LeaderElectionTestingModule.forRoot({ leader: false })],
      providers: [Jobs],
    }).compile();
    await moduleRef.init();
    expect(moduleRef.get(Jobs).run()).toBeUndefined();
    await moduleRef.get(TestingLeadership).elect();
    expect(moduleRef.get(Jobs).run()).toBe('ran');
    await moduleRef.close();
  });
});
