import 'reflect-metadata';
import { Controller, Get, type INestApplication, Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import type { LeaderElectionModuleOptions } from '../../lib/nest/interfaces/leader-election-options.interface.js';
import { LeaderElectionModule } from '../../lib/nest/leader-election.module.js';
import type { LeaderElectionOptionsFactory } from '../../lib/nest/leader-election.module-definition.js';
import { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import { InjectLeaderElectionOptions } from '../../lib/nest/leader-election-options.decorator.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { closeAll, createApp, electionOf, LEASE_MS, sleep, waitFor } from './helpers.js';

const CONFIG = 'CONFIG';

@Module({
  providers: [{ provide: CONFIG, useValue: { election: 'from-config', identity: 'cfg-1' } }],
  exports: [CONFIG],
})
class ConfigModule {}

const sharedStore = new InMemoryLeaseStore();

@Injectable()
class OptionsFactory implements LeaderElectionOptionsFactory {
  constructor(@Inject(CONFIG) private readonly config: { election: string; identity: string }) {}
  createLeaderElectionOptions(): LeaderElectionModuleOptions {
    return { store: sharedStore, leaseDurationMs: LEASE_MS, closeStoreOnShutdown: false, ...this.config };
  }
}

/** In a feature module that does NOT import LeaderElectionModule: the module is global by default. */
@Injectable()
class FeatureJobs {
  constructor(readonly election: LeaderElectionService) {}
  @LeaderOnly()
  work(): string {
    return `work@${this.election.identity}`;
  }
}

@Controller('feature')
class FeatureController {
  @Get()
  @LeaderOnly()
  get(): string {
    return 'feature';
  }
}

@Module({ providers: [FeatureJobs], controllers: [FeatureController] })
class FeatureModule {}

async function compileAndInit(options: Partial<LeaderElectionModuleOptions>): Promise<void> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      LeaderElectionModule.forRoot({
        store: new InMemoryLeaseStore(),
        election: 'invalid-options',
        ...options,
      } as LeaderElectionModuleOptions),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  await app.close();
}

describe('LeaderElectionModule', () => {
  const apps: INestApplication[] = [];
  afterEach(() => closeAll(apps));

  it('forRootAsync with useFactory + inject', async () => {
    const app = await createApp({
      electionModule: LeaderElectionModule.forRootAsync({
        imports: [ConfigModule],
        inject: [CONFIG],
        useFactory: async (config: { election: string; identity: string }) => {
          await sleep(5);
          return { store: new InMemoryLeaseStore(), ...config, identity: 'factory-1', leaseDurationMs: LEASE_MS };
        },
      }),
    });
    apps.push(app);
    expect(electionOf(app).status()).toMatchObject({ election: 'from-config', identity: 'factory-1', isLeader: true });
  });

  it('forRootAsync with useClass and with useExisting', async () => {
    const viaClass = await createApp({
      electionModule: LeaderElectionModule.forRootAsync({ imports: [ConfigModule], useClass: OptionsFactory }),
    });
    apps.push(viaClass);
    expect(electionOf(viaClass).status()).toMatchObject({ election: 'from-config', identity: 'cfg-1', isLeader: true });

    @Module({ imports: [ConfigModule], providers: [OptionsFactory], exports: [OptionsFactory] })
    class FactoryModule {}
    const viaExisting = await createApp({
      electionModule: LeaderElectionModule.forRootAsync({ imports: [FactoryModule], useExisting: OptionsFactory }),
    });
    apps.push(viaExisting);
    // Same store and election: the second one is a follower of the first.
    expect(electionOf(viaExisting).status()).toMatchObject({ identity: 'cfg-1', isLeader: false, leaderId: 'cfg-1' });
  });

  it('is global by default: feature modules use the service, @LeaderOnly and the guard without importing it', async () => {
    const store = new InMemoryLeaseStore();
    const leader = await createApp({ election: { store, identity: 'app-a' }, imports: [FeatureModule] });
    apps.push(leader);
    const follower = await createApp({ election: { store, identity: 'app-b' }, imports: [FeatureModule] });
    apps.push(follower);
    expect(leader.get(FeatureJobs).work()).toBe('work@app-a');
    expect(follower.get(FeatureJobs).work()).toBeUndefined();
    await request(leader.getHttpServer()).get('/feature').expect(200, 'feature');
    await request(follower.getHttpServer()).get('/feature').expect(503);
  });

  it('@InjectLeaderElectionOptions() gives any provider the options as given (forRoot and forRootAsync)', async () => {
    @Injectable()
    class ReadsOptions {
      constructor(@InjectLeaderElectionOptions() readonly options: LeaderElectionModuleOptions) {}
    }
    @Module({ providers: [ReadsOptions], exports: [ReadsOptions] })
    class OptionsFeature {}

    const viaForRoot = await createApp({
      election: { store: sharedStore, identity: 'opt-1' },
      imports: [OptionsFeature],
    });
    apps.push(viaForRoot);
    expect(viaForRoot.get(ReadsOptions).options).toMatchObject({
      election: 'e2e',
      identity: 'opt-1',
      store: sharedStore,
    });

    const viaAsync = await createApp({
      electionModule: LeaderElectionModule.forRootAsync({ imports: [ConfigModule], useClass: OptionsFactory }),
      imports: [OptionsFeature],
    });
    apps.push(viaAsync);
    expect(viaAsync.get(ReadsOptions).options).toMatchObject({ election: 'from-config', identity: 'cfg-1' });
  });

  it('with isGlobal: false a feature module that does not import it fails to start', async () => {
    await expect(
      Test.createTestingModule({
        imports: [
          LeaderElectionModule.forRoot({ store: new InMemoryLeaseStore(), election: 'not-global', isGlobal: false }),
          FeatureModule,
        ],
      }).compile(),
    ).rejects.toThrow(/LeaderElectionService/);
  });

  it.each([
    [
      'shutdownTimeoutMs < 0',
      { shutdownTimeoutMs: -1 },
      /^shutdownTimeoutMs must be a non-negative finite number of milliseconds \(got -1\)$/,
    ],
    ['shutdownTimeoutMs NaN', { shutdownTimeoutMs: Number.NaN }, /^shutdownTimeoutMs must be/],
    [
      'closeStoreOnShutdown not boolean',
      { closeStoreOnShutdown: 'yes' },
      /^closeStoreOnShutdown must be true or false/,
    ],
    ['guard not an object', { guard: 'off' }, /^guard must be an object/],
    [
      'guard.exposeLeaderId not boolean',
      { guard: { exposeLeaderId: 1 } },
      /^guard\.exposeLeaderId must be true or false \(got 1\)$/,
    ],
    ['guard.retryAfter not boolean', { guard: { retryAfter: null } }, /^guard\.retryAfter must be true or false/],
    [
      'unknown guard option',
      { guard: { exposeLeaderID: false } },
      /^guard\.exposeLeaderID is not a known option \(known: exposeLeaderId, retryAfter\)$/,
    ],
    ['election invalid (elector)', { election: 'no spaces allowed' }, /^election must be/],
    ['store missing (elector)', { store: undefined }, /^store is required/],
    ['leaseDurationMs 0 (elector)', { leaseDurationMs: 0 }, /^leaseDurationMs must be a positive/],
    [
      'renewDeadlineMs >= leaseDurationMs (elector)',
      { leaseDurationMs: 3_000, renewDeadlineMs: 3_000 },
      /^renewDeadlineMs must be greater than renewIntervalMs/,
    ],
  ])('invalid options fail the startup naming the option: %s', async (_name, options, message) => {
    await expect(compileAndInit(options as Partial<LeaderElectionModuleOptions>)).rejects.toThrow(message);
  });

  it('invalid options from forRootAsync fail the startup too', async () => {
    await expect(
      Test.createTestingModule({
        imports: [
          LeaderElectionModule.forRootAsync({
            useFactory: () => ({ store: new InMemoryLeaseStore(), election: 'x', shutdownTimeoutMs: -5 }),
          }),
        ],
      }).compile(),
    ).rejects.toThrow(/^shutdownTimeoutMs must be a non-negative/);
  });

  it('closes the store on shutdown when it owns it (default), not when closeStoreOnShutdown is false', async () => {
    class ClosableStore extends InMemoryLeaseStore {
      closed = 0;
      async close(): Promise<void> {
        this.closed += 1;
      }
    }
    const owned = new ClosableStore();
    const app = await createApp({ election: { store: owned, closeStoreOnShutdown: true } });
    expect(owned.closed).toBe(0);
    await app.close();
    expect(owned.closed).toBe(1);

    const shared = new ClosableStore();
    const other = await createApp({ election: { store: shared, closeStoreOnShutdown: false } });
    await other.close();
    expect(shared.closed).toBe(0);
  });
});

describe('no process-global state: two apps, same provider class', () => {
  const apps: INestApplication[] = [];
  afterEach(() => closeAll(apps));

  @Injectable()
  class Worker {
    readonly calls: string[] = [];
    constructor(readonly election: LeaderElectionService) {}
    @LeaderOnly()
    async run(ms: number): Promise<string> {
      this.calls.push(this.election.identity);
      await sleep(ms);
      return this.election.identity;
    }
  }

  it('each instance answers to its own app; leadership and in-flight calls never leak across apps', async () => {
    const store = new InMemoryLeaseStore();
    const a = await createApp({ election: { store, identity: 'app-a' }, providers: [Worker] });
    apps.push(a);
    const b = await createApp({ election: { store, identity: 'app-b' }, providers: [Worker] });
    apps.push(b);
    const [wa, wb] = [a.get(Worker), b.get(Worker)];
    expect(wa).not.toBe(wb);
    expect(Worker.prototype.run).toBe(Object.getPrototypeOf(wa).run); // one wrapper, shared prototype

    await expect(wa.run(1)).resolves.toBe('app-a');
    await expect(wb.run(1)).resolves.toBeUndefined();
    expect([wa.calls, wb.calls]).toEqual([['app-a'], []]);

    // Swap leadership: now b runs and a skips.
    await electionOf(a).resign();
    await waitFor('app-b to lead', () => electionOf(b).isLeader());
    await expect(wa.run(1)).resolves.toBeUndefined();
    const long = wb.run(1_500);
    expect(wb.calls).toEqual(['app-b']);

    // Closing a does not wait for b's running call (it would, were the call counted in a's drain).
    const start = Date.now();
    await a.close();
    apps.splice(apps.indexOf(a), 1);
    expect(Date.now() - start).toBeLessThan(1_000);
    await expect(long).resolves.toBe('app-b');
    expect(electionOf(b).isLeader()).toBe(true);
  });

  it('an instance created outside Nest is bound to no app: its @LeaderOnly calls refuse loudly, never run', async () => {
    const store = new InMemoryLeaseStore();
    const a = await createApp({ election: { store, identity: 'app-a' }, providers: [Worker] });
    apps.push(a);
    const stray = new Worker(electionOf(a));
    await expect(stray.run(1)).rejects.toThrow(
      /^Worker\.run is @LeaderOnly\(\) but its instance is not bound to an application's leader election.*TestingLeadership\.bind\(instance\)$/,
    );
    expect(stray.calls).toEqual([]);
    await expect(a.get(Worker).run(1)).resolves.toBe('app-a');
  });
});
