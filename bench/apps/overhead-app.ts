// The apps behind figures 1 and 2: a provider method and two HTTP routes, each once plain and once
// under @LeaderOnly(), in real Nest applications whose LeaderElectionModule uses the in-memory store
// (no network: the figures isolate what the decorator and the guard add to a call).
import 'reflect-metadata';
import { Controller, Get, Injectable, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import { LeaderElectionModule } from '../../lib/nest/leader-election.module.js';
import { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';

@Injectable()
export class Target {
  total = 0;

  plain(x: number): number {
    this.total += x;
    return this.total;
  }

  @LeaderOnly()
  guarded(x: number): number {
    this.total += x;
    return this.total;
  }
}

@Controller()
export class Routes {
  @Get('plain')
  plain(): { ok: boolean } {
    return { ok: true };
  }

  @Get('guarded')
  @LeaderOnly()
  guarded(): { ok: boolean } {
    return { ok: true };
  }
}

function appModule(store: LeaseStore, identity: string, withRoutes: boolean): Type<unknown> {
  @Module({
    imports: [
      LeaderElectionModule.forRoot({
        store,
        election: 'overhead',
        identity,
        // Long enough that no renewal falls inside a measurement.
        leaseDurationMs: 600_000,
        renewIntervalMs: 60_000,
        closeStoreOnShutdown: false,
      }),
    ],
    controllers: withRoutes ? [Routes] : [],
    providers: [Target],
  })
  class OverheadModule {}
  return OverheadModule;
}

export interface ContextApps {
  /** The Target of the app that leads, and of the one that follows (same class, same store). */
  leader: Target;
  follower: Target;
  close(): Promise<void>;
}

/** Two application contexts on one in-memory lease: the first leads, the second follows. */
export async function contextApps(): Promise<ContextApps> {
  const store = new InMemoryLeaseStore();
  const leaderApp = await NestFactory.createApplicationContext(appModule(store, 'leader', false), {
    logger: ['error'],
  });
  const followerApp = await NestFactory.createApplicationContext(appModule(store, 'follower', false), {
    logger: ['error'],
  });
  if (!leaderApp.get(LeaderElectionService).isLeader()) throw new Error('the first app did not lead');
  if (followerApp.get(LeaderElectionService).isLeader()) throw new Error('the second app leads too');
  return {
    leader: leaderApp.get(Target),
    follower: followerApp.get(Target),
    close: async () => {
      await followerApp.close();
      await leaderApp.close();
    },
  };
}

/** An HTTP app (Express) with both routes; it leads its own in-memory lease unless `follower`. */
export async function httpApp(follower = false): Promise<{ port: number; close(): Promise<void> }> {
  const store = new InMemoryLeaseStore();
  let other: Awaited<ReturnType<typeof NestFactory.createApplicationContext>> | undefined;
  if (follower) {
    other = await NestFactory.createApplicationContext(appModule(store, 'holder', false), { logger: ['error'] });
  }
  const app = await NestFactory.create(appModule(store, 'http', true), { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return {
    port: address.port,
    close: async () => {
      await app.close();
      await other?.close();
    },
  };
}
