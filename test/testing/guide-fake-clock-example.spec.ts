// The FakeClock example of docs/guides/testing.md ("Drive a failover with a FakeClock"): two app
// contexts of the real module sharing one FakeClock and one in-memory lease, verbatim but for the
// import paths and the reflect-metadata import. The last test holds the guide to everything above
// the end marker.
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { InMemoryLeaseStore, LeaderElectionModule, LeaderElectionService, LeaderOnly } from '../../lib/index.js';
import { FakeClock } from '../../lib/testing.js';

@Injectable()
class BillingJobs {
  runs = 0;

  // In the app, @Cron(...) sits on it too: a FakeClock does not fire crons, so the test calls it.
  @LeaderOnly()
  closeBooks(): void {
    this.runs += 1;
  }
}

/** The store as one replica reaches it: after `unplug()` every call fails, as when its network goes down. */
function cable(store: InMemoryLeaseStore): { store: InMemoryLeaseStore; unplug: () => void } {
  let unplugged = false;
  const view = new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function' || key === 'watch') return value;
      return (...args: unknown[]) =>
        unplugged ? Promise.reject(new Error('connect ECONNREFUSED')) : Reflect.apply(value, target, args);
    },
  });
  return { store: view, unplug: () => (unplugged = true) };
}

async function replica(store: InMemoryLeaseStore, clock: FakeClock, identity: string): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      LeaderElectionModule.forRoot({
        store,
        clock, // every timer of the module runs on it: time moves only with clock.advance()
        election: 'billing',
        identity,
        closeStoreOnShutdown: false,
      }),
    ],
    providers: [BillingJobs],
  }).compile();
  return moduleRef.init();
}

it('fails over to the other replica when the leader loses its store, on clock.advance alone', async () => {
  const clock = new FakeClock();
  const store = new InMemoryLeaseStore({ clock }); // leases expire on the same clock
  const cableOfA = cable(store);
  const a = await replica(cableOfA.store, clock, 'replica-a');
  const b = await replica(store, clock, 'replica-b');
  expect(a.get(LeaderElectionService).isLeader()).toBe(true);
  expect(b.get(LeaderElectionService).leaderId).toBe('replica-a');

  const unpluggedAt = Date.now();
  cableOfA.unplug(); // replica-a can no longer renew its 15 s lease (the default timings)
  await clock.advance(10_000); // its renew deadline: it stops acting as leader
  expect(a.get(LeaderElectionService).isLeader()).toBe(false);
  expect(b.get(LeaderElectionService).isLeader()).toBe(false); // the lease has not expired yet

  await clock.advance(7_500); // the lease expires at 15 s; replica-b takes it at its next poll
  expect(b.get(LeaderElectionService).isLeader()).toBe(true);
  expect(Date.now() - unpluggedAt).toBeLessThan(5_000); // 17.5 s of lease time, no real waiting
  b.get(BillingJobs).closeBooks();
  a.get(BillingJobs).closeBooks(); // skipped: replica-a is a follower now
  expect([a.get(BillingJobs).runs, b.get(BillingJobs).runs]).toEqual([0, 1]);

  await Promise.all([a.close(), b.close()]);
});

// --- end of the guide's example ---

import { readFileSync } from 'node:fs';

it('docs/guides/testing.md prints this example verbatim (but for what the header names)', () => {
  const source = readFileSync(new URL(import.meta.url), 'utf8');
  const example = source
    .slice(0, source.indexOf("\n// --- end of the guide's example ---"))
    .replace(/^(\/\/.*\n)+/, '')
    .replace("import 'reflect-metadata';\n", '')
    .replaceAll("'../../lib/index.js'", "'@leaderlease/nestjs'")
    .replaceAll("'../../lib/testing.js'", "'@leaderlease/nestjs/testing'");
  const guide = readFileSync(new URL('../../docs/guides/testing.md', import.meta.url), 'utf8');
  const block = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((match) => match[1])
    .find((text) => text.startsWith('// failover.e2e-spec.ts\n'));
  expect(block).toBe(`// failover.e2e-spec.ts\n${example.trimEnd()}\n`);
});
