// One replica of a Nest app using this library, for the failover / handover / cold-start / SIGSTOP
// figures: LeaderElectionModule over the store named by STORE (see stores.ts, wrapped to count
// calls) and a leader-only job, `@Interval(TICK_MS) @LeaderOnly()`, whose runs are "acting".
//
//   STORE=postgres ELECTION=e IDENTITY=a LEASE_MS=2000 RENEW_DEADLINE_MS=1400 RENEW_MS=400 RETRY_MS=500 \
//     TICK_MS=20 node --import ./test/support/swc-register.mjs bench/apps/replica.ts
//
// stdout `@@b {json}` lines (epoch ms `at`, same machine clock as the runner):
//   ready {leader, firstAcquireAt}   the app is up (its elector has made its first attempt)
//   elected {term} / revoked {term, reason}   from the service's events
//   act                              the first run of the leader-only job in a term, and every run
//                                    within 3 s after a pause (a paused leader acting on a stale belief)
//   believes {value}                 isLeader() as polled every TICK_MS, when it changes
//   believes-true                    each poll answering true within 3 s after a pause
//   resumed {gapMs}                  the event loop was stalled > 1 s (SIGSTOP/SIGCONT)
//   counts {counts}                  on the stdin line `counts`
// SIGTERM → Nest shutdown hooks (drain, release, exit). End of stdin → exit at once (no orphans).
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import { LeaderElectionModule } from '../../lib/nest/leader-election.module.js';
import { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import { CountingStore, emit, makeStore, numberEnv, timingsFromEnv } from './stores.js';

const identity = process.env.IDENTITY ?? `replica-${process.pid}`;
const election = process.env.ELECTION ?? 'bench';
const TICK_MS = numberEnv('TICK_MS', 20);
const RESUME_WINDOW_MS = 3_000;
const out = (event: Record<string, unknown>) => emit(identity, event);

const store = new CountingStore(await makeStore(process.env.STORE ?? ''));

let resumedAt = Number.NEGATIVE_INFINITY;
let actsInTerm = 0;

@Injectable()
class Jobs {
  constructor(private readonly election: LeaderElectionService) {
    election.events$.subscribe((event) => {
      if (event.type === 'elected') {
        actsInTerm = 0;
        out({ type: 'elected', term: event.term });
      } else if (event.type === 'revoked') {
        out({ type: 'revoked', term: event.term, reason: event.reason, acts: actsInTerm });
      }
    });
  }

  @Interval(TICK_MS)
  @LeaderOnly()
  tick(): void {
    actsInTerm += 1;
    if (actsInTerm === 1 || performance.now() - resumedAt < RESUME_WINDOW_MS) {
      out({ type: 'act', term: this.election.term });
    }
  }
}

@Module({
  imports: [
    ScheduleModule.forRoot(),
    LeaderElectionModule.forRoot({
      store,
      election,
      identity,
      ...timingsFromEnv(),
      shutdownTimeoutMs: 5_000,
    }),
  ],
  providers: [Jobs],
})
class AppModule {}

const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error'] });
app.enableShutdownHooks();
const service = app.get(LeaderElectionService);

// The belief probe: what isLeader() answers, polled like a job would, and event-loop stalls.
let believed = service.isLeader();
let last = performance.now();
const probe = setInterval(() => {
  const now = performance.now();
  if (now - last > 1_000) {
    resumedAt = now;
    out({ type: 'resumed', gapMs: Math.round(now - last) });
  }
  last = now;
  const believes = service.isLeader();
  if (believes !== believed) out({ type: 'believes', value: believes });
  else if (believes && now - resumedAt < RESUME_WINDOW_MS) out({ type: 'believes-true' });
  believed = believes;
}, TICK_MS);
probe.unref();

out({ type: 'ready', leader: believed, firstAcquireAt: store.firstAcquireAt });

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  if (chunk.includes('counts')) out({ type: 'counts', counts: store.counts });
});
process.stdin.on('end', () => process.exit(0));
