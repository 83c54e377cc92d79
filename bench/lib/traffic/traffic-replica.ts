// One replica of the store-traffic figure: a Nest application context with LeaderElectionModule over
// the given (logged) store, a leader-only cron job firing every second (`@LeaderOnly()`, or
// `once: 'per-tick'`), and, when asked, the app's own leader-state write every `stateEveryMs`.
import 'reflect-metadata';
import { type DynamicModule, type INestApplicationContext, Inject, Injectable } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { LeaderOnly } from '../../../lib/nest/decorators/leader-only.decorator.js';
import { LeaderElectionModule } from '../../../lib/nest/leader-election.module.js';
import { LeaderElectionService } from '../../../lib/nest/leader-election.service.js';
import type { LeaseStore } from '../../../lib/stores/lease-store.js';

/** What a replica's app did, counted as it happens. */
export interface ReplicaTally {
  /** When the leader-only job ran (performance.now()): on the leader, its ticks. */
  ticks: number[];
  stateWrites: number;
  stateFailures: number;
  elected: number;
  revoked: number;
}

export interface ReplicaOptions {
  store: LeaseStore;
  election: string;
  identity: string;
  timings: { leaseDurationMs: number; renewDeadlineMs: number; renewIntervalMs: number; retryIntervalMs: number };
  activeFollowers?: number;
  standbyPollMs?: number;
  oncePerTick: boolean;
  /** The app writes leader state (key `checkpoint`) this often while it leads; unset: never. */
  stateEveryMs?: number;
}

export interface Replica {
  readonly identity: string;
  readonly tally: ReplicaTally;
  readonly service: LeaderElectionService;
  close(): Promise<void>;
}

const TALLY = Symbol('replica tally');
/** Every second: the "once-per-tick job that fires every second". */
const EVERY_SECOND = '* * * * * *';

@Injectable()
class LeaderOnlyJob {
  constructor(@Inject(TALLY) private readonly tally: ReplicaTally) {}

  @Cron(EVERY_SECOND)
  @LeaderOnly()
  run(): void {
    this.tally.ticks.push(performance.now());
  }
}

@Injectable()
class OncePerTickJob {
  constructor(@Inject(TALLY) private readonly tally: ReplicaTally) {}

  @Cron(EVERY_SECOND)
  @LeaderOnly({ once: 'per-tick' })
  run(): void {
    this.tally.ticks.push(performance.now());
  }
}

export async function startReplica(options: ReplicaOptions): Promise<Replica> {
  const tally: ReplicaTally = { ticks: [], stateWrites: 0, stateFailures: 0, elected: 0, revoked: 0 };
  const root: DynamicModule = {
    // A class of its own per replica: Nest keys modules by class.
    module: class ReplicaModule {},
    imports: [
      ScheduleModule.forRoot(),
      LeaderElectionModule.forRoot({
        store: options.store,
        election: options.election,
        identity: options.identity,
        ...options.timings,
        ...(options.activeFollowers ? { activeFollowers: options.activeFollowers } : {}),
        ...(options.standbyPollMs ? { standbyPollMs: options.standbyPollMs } : {}),
        shutdownTimeoutMs: 1_000,
      }),
    ],
    providers: [{ provide: TALLY, useValue: tally }, options.oncePerTick ? OncePerTickJob : LeaderOnlyJob],
  };
  const app: INestApplicationContext = await NestFactory.createApplicationContext(root, { logger: ['error'] });
  const service = app.get(LeaderElectionService);
  const events = service.events$.subscribe((event) => {
    if (event.type === 'elected') tally.elected += 1;
    else if (event.type === 'revoked') tally.revoked += 1;
  });
  const state = options.stateEveryMs
    ? setInterval(() => {
        if (!service.isLeader()) return;
        service.writeState({ at: Date.now() }, 'checkpoint').then(
          () => {
            tally.stateWrites += 1;
          },
          () => {
            tally.stateFailures += 1;
          },
        );
      }, options.stateEveryMs)
    : undefined;
  return {
    identity: options.identity,
    tally,
    service,
    async close() {
      clearInterval(state);
      events.unsubscribe();
      await app.close();
    },
  };
}
