// Issue 16: leader state through the Nest service, and @LeaderOnly({ once: 'per-tick' }) cron jobs
// on real Nest apps sharing one store (in-process; the process-level version is test/chaos).
import 'reflect-metadata';
import { type INestApplication, Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import { LeaseLostError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import type { Lease, LeaseStore, StateCallOptions } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { CaptureLogger, closeAll, createApp, electionOf, SLACK_MS, sleep, waitFor } from './helpers.js';

/** Every run: which app, which job, the wall time. */
const runs: Array<{ app: string; job: string; at: number }> = [];

function jobsClass(label: string) {
  @Injectable()
  class PerTick {
    app = label;

    @Cron('* * * * * *')
    @LeaderOnly({ once: 'per-tick' })
    cronOuter(): void {
      runs.push({ app: this.app, job: 'outer', at: Date.now() });
    }

    @LeaderOnly({ once: 'per-tick' })
    @Cron('* * * * * *', { name: 'inner-job' })
    cronInner(): void {
      runs.push({ app: this.app, job: 'inner', at: Date.now() });
    }
  }
  return PerTick;
}

@Injectable()
class HourlyCatchUp {
  @Cron('0 0 * * * *', { name: 'hourly' })
  @LeaderOnly({ once: 'per-tick', missed: 'catch-up' })
  async report(): Promise<void> {
    runs.push({ app: 'hourly', job: 'hourly', at: Date.now() });
  }
}

describe('leader state and once-per-tick (Nest apps)', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await closeAll(apps);
    runs.length = 0;
  });

  it('the leader writes, a follower reads and is refused; after a handover the new leader continues', async () => {
    const store = new InMemoryLeaseStore();
    const a = await createApp({ election: { store, identity: 'a' } });
    apps.push(a);
    const b = await createApp({ election: { store, identity: 'b' } });
    apps.push(b);
    const ea = electionOf(a);
    const eb = electionOf(b);
    expect(ea.isLeader()).toBe(true);
    await ea.writeState({ reports: 3 });
    expect(await eb.readState()).toEqual({ value: { reports: 3 }, term: ea.term });
    await expect(eb.writeState({ reports: 99 })).rejects.toBeInstanceOf(LeaseLostError);
    const firstTerm = ea.term;
    await a.close();
    await waitFor('b to lead', () => eb.isLeader());
    const previous = await eb.readState<{ reports: number }>();
    expect(previous).toEqual({ value: { reports: 3 }, term: firstTerm });
    await eb.writeState({ reports: (previous?.value.reports ?? 0) + 1 });
    expect(await eb.readState()).toEqual({ value: { reports: 4 }, term: eb.term });
    expect(eb.term).toBeGreaterThan(firstTerm ?? 0);
  });

  it("once: 'per-tick' in either decorator order: each second runs at most once across a handover", async () => {
    const store = new InMemoryLeaseStore();
    const a = await createApp({
      election: { store, identity: 'a' },
      providers: [{ provide: 'jobs', useClass: jobsClass('a') }],
    });
    apps.push(a);
    const b = await createApp({
      election: { store, identity: 'b' },
      providers: [{ provide: 'jobs', useClass: jobsClass('b') }],
    });
    apps.push(b);
    await waitFor('two ticks of each job', () => runs.filter((r) => r.app === 'a').length >= 4, 5_000 + SLACK_MS);
    await a.close(); // graceful handover, right after a tick
    await waitFor('b to run ticks', () => runs.filter((r) => r.app === 'b').length >= 4, 5_000 + SLACK_MS);
    for (const job of ['outer', 'inner']) {
      const seconds = runs.filter((r) => r.job === job).map((r) => Math.round(r.at / 1000));
      expect(new Set(seconds).size).toBe(seconds.length);
    }
    // The ledger keys: the @Cron name, else Class.method.
    const eb = electionOf(b);
    const inner = await eb.readState<number>('tick:inner-job');
    const outer = await eb.readState<number>('tick:PerTick.cronOuter');
    expect(inner?.value).toBe(
      Math.max(...runs.filter((r) => r.job === 'inner').map((r) => Math.round(r.at / 1000) * 1000)),
    );
    expect(outer?.term).toBe(eb.term);
    // The user's own value is a separate key, untouched.
    expect(await eb.readState()).toBeUndefined();
  });

  it("missed: 'catch-up' runs the most recent missed tick once per election, never twice", async () => {
    const store = new InMemoryLeaseStore();
    const logger = new CaptureLogger();
    const app = await createApp({ election: { store, identity: 'solo' }, providers: [HourlyCatchUp], logger });
    apps.push(app);
    const election = electionOf(app);
    const lastHour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    // Nothing recorded yet: a first deployment has missed nothing.
    expect(runs).toEqual([]);
    // A previous leader ran the tick two hours ago, then nobody ran the last one.
    // (through the ledger's own path: the public writeState refuses `tick:` keys)
    await election.runtimes.default.writeTickRecord(lastHour - 3_600_000, 'tick:hourly');
    await election.resign();
    await waitFor('re-election', () => election.isLeader(), 5_000);
    await waitFor('the catch-up run', () => runs.length >= 1, 2_000);
    expect((await election.readState('tick:hourly'))?.value).toBe(lastHour);
    expect(logger.matching('log', /hourly: catching up tick/)).toHaveLength(1);
    await election.resign();
    await waitFor('second re-election', () => election.isLeader(), 5_000);
    await sleep(300);
    expect(runs).toHaveLength(1);
  });

  it('catchUpWindowMs bounds the catch-up per job: the missed tick runs where it is inside the window only', async () => {
    // A daily tick due 10 min ago, missed by both jobs (their last run was the day before); the next
    // one is ~24 h away, so no timer of the test's fires. Windows of 30 min (inside) and 5 min (outside).
    const tickAt = Math.floor((Date.now() - 10 * 60_000) / 1000) * 1000;
    const at = new Date(tickAt);
    const cronTime = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
    @Injectable()
    class DailyWindows {
      @Cron(cronTime, { name: 'daily-wide', timeZone: 'UTC' })
      @LeaderOnly({ once: 'per-tick', missed: 'catch-up', catchUpWindowMs: 30 * 60_000 })
      async wide(): Promise<void> {
        runs.push({ app: 'windows', job: 'wide', at: Date.now() });
      }

      @LeaderOnly({ once: 'per-tick', missed: 'catch-up', catchUpWindowMs: 5 * 60_000 })
      @Cron(cronTime, { name: 'daily-narrow', timeZone: 'UTC' })
      async narrow(): Promise<void> {
        runs.push({ app: 'windows', job: 'narrow', at: Date.now() });
      }
    }
    // Both records say the day before, written by an earlier leader before this app starts: its
    // first term's catch-up finds them (written during that term, they would race its claim).
    const store = new InMemoryLeaseStore();
    const signal = () => AbortSignal.timeout(1_000);
    const seed = await store.acquire({
      election: 'e2e',
      identity: 'earlier',
      leaseDurationMs: 1_000,
      signal: signal(),
    });
    if (!seed.acquired) throw new Error('the seed lease was not acquired');
    for (const key of ['tick:daily-wide', 'tick:daily-narrow']) {
      await store.writeState(seed.lease, tickAt - 86_400_000, { key, signal: signal() });
    }
    await store.release(seed.lease, { signal: signal() });
    const logger = new CaptureLogger();
    const app = await createApp({ election: { store, identity: 'solo' }, providers: [DailyWindows], logger });
    apps.push(app);
    const election = electionOf(app);
    await waitFor('leadership', () => election.isLeader(), 5_000);
    await waitFor('the catch-up run', () => runs.length >= 1, 2_000);
    await sleep(300);
    expect(runs.map((run) => run.job)).toEqual(['wide']);
    expect((await election.readState('tick:daily-wide'))?.value).toBe(tickAt);
    expect((await election.readState('tick:daily-narrow'))?.value).toBe(tickAt - 86_400_000);
    expect(logger.matching('log', /catching up tick/)).toEqual([
      expect.stringContaining(`daily-wide: catching up tick ${at.toISOString()}`),
    ]);
  });

  it("the `tick:` keys are the ledger's: writeState refuses them (service, handle) with a TypeError, before the store", async () => {
    const store = new InMemoryLeaseStore();
    const app = await createApp({ election: { store, identity: 'a' } });
    apps.push(app);
    const election = electionOf(app);
    expect(election.isLeader()).toBe(true);
    for (const write of [
      () => election.writeState(1, 'tick:PerTick.cronOuter'),
      () => election.election().writeState(1, 'tick:x'),
      () => election.election('e2e').writeState(1, 'tick:'),
    ]) {
      const error = await write().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(
        /key "tick:[^"]*" is reserved: keys starting with "tick:" hold the library's once-per-tick records/,
      );
    }
    expect(await election.readState('tick:x')).toBeUndefined();
    // Other keys, including ones merely containing "tick", are the app's.
    await election.writeState(2, 'ticks');
    await election.writeState(3, 'my:tick:');
    expect((await election.readState('ticks'))?.value).toBe(2);
  });

  it('a store that fails once while a tick is recorded: the tick is retried within the tick and runs once', async () => {
    /** Fails the first write of a `tick:` key with a transient error, after noting the fire time. */
    class FailsOnce extends InMemoryLeaseStore {
      failedFire: number | undefined;
      failedKey: string | undefined;
      override async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
        if (this.failedFire === undefined && options.key?.startsWith('tick:')) {
          this.failedFire = value as number;
          this.failedKey = options.key;
          throw new TransientLeaseStoreError('connection reset (injected)');
        }
        return super.writeState(lease, value, options);
      }
    }
    const store = new FailsOnce();
    const logger = new CaptureLogger();
    const app = await createApp({
      election: { store, identity: 'a' },
      providers: [{ provide: 'jobs', useClass: jobsClass('a') }],
      logger,
    });
    apps.push(app);
    await waitFor(
      'the failure and two more ticks',
      () => store.failedFire !== undefined && runs.length >= 5,
      5_000 + SLACK_MS,
    );
    const failed = store.failedFire as number;
    const failedJob = store.failedKey === 'tick:inner-job' ? 'inner' : 'outer';
    // The job whose record failed ran that tick all the same; every tick at most once.
    const seconds = (job: string) => runs.filter((r) => r.job === job).map((r) => Math.round(r.at / 1000) * 1000);
    expect({ failedJob, ran: seconds(failedJob).includes(failed) }).toEqual({ failedJob, ran: true });
    for (const job of ['outer', 'inner']) expect(new Set(seconds(job)).size).toBe(seconds(job).length);
    expect(logger.matching('warn', /could not record/)).toEqual([]);
  });

  describe('startup checks name the method', () => {
    it('an election other than the configured one', async () => {
      @Injectable()
      class Other {
        @LeaderOnly({ election: 'billing' })
        run(): void {}
      }
      await expect(createApp({ election: { store: new InMemoryLeaseStore() }, providers: [Other] })).rejects.toThrow(
        /@LeaderOnly\(\) on Other.run: this application has no election "billing"; it has "e2e"/,
      );
    });

    it("the shorthand @LeaderOnly('e2e') is the configured election", async () => {
      @Injectable()
      class Same {
        @LeaderOnly('e2e')
        run(): string {
          return 'ran';
        }
      }
      const app = await createApp({ election: { store: new InMemoryLeaseStore() }, providers: [Same] });
      apps.push(app);
      expect(app.get(Same).run()).toBe('ran');
    });

    it("once: 'per-tick' without @Cron", async () => {
      @Injectable()
      class NoCron {
        @LeaderOnly({ once: 'per-tick' })
        run(): void {}
      }
      await expect(createApp({ election: { store: new InMemoryLeaseStore() }, providers: [NoCron] })).rejects.toThrow(
        /NoCron.run: the method has no @Cron\(\) schedule/,
      );
    });

    it("once: 'per-tick' on a store without leader state", async () => {
      const memory = new InMemoryLeaseStore();
      const plain: LeaseStore = {
        name: 'ThirdPartyStore',
        limits: memory.limits,
        acquire: (r) => memory.acquire(r),
        renew: (l, o) => memory.renew(l, o),
        release: (l, o) => memory.release(l, o),
        read: (e, o) => memory.read(e, o),
      };
      @Injectable()
      class Plain {
        @Cron('* * * * * *')
        @LeaderOnly({ once: 'per-tick' })
        run(): void {}
      }
      await expect(createApp({ election: { store: plain }, providers: [Plain] })).rejects.toThrow(
        /Plain.run: ThirdPartyStore does not support leader state/,
      );
    });

    it('bad options fail where the decorator is applied', () => {
      const apply = (options: unknown) => () => {
        class Bad {
          run(): void {}
        }
        const descriptor = Object.getOwnPropertyDescriptor(Bad.prototype, 'run') as PropertyDescriptor;
        LeaderOnly(options as never)(Bad.prototype, 'run', descriptor);
      };
      expect(apply({ once: 'per-day' })).toThrow(/@LeaderOnly\(\) on Bad.run: once must be 'per-tick'/);
      expect(apply({ missed: 'catch-up' })).toThrow(/missed applies to once: 'per-tick' only/);
      expect(apply({ once: 'per-tick', missed: 'all' })).toThrow(/missed must be 'skip' or 'catch-up'/);
      expect(apply({ electon: 'x' })).toThrow(/electon is not a known option/);
      expect(apply('')).toThrow(/election must be a non-empty string/);
    });
  });
});
