// One replica of a Nest app running several elections, for the spread and handover figures (10–12):
// LeaderElectionModule with `elections` (spread on, its default with several), over the store named by
// STORE with the handover capability (stores.ts, calls counted).
//
//   STORE=postgres ELECTIONS=a,b,c IDENTITY=r0 LEASE_MS=2000 RENEW_DEADLINE_MS=1400 RENEW_MS=400 RETRY_MS=500 \
//     node --import ./test/support/swc-register.mjs bench/apps/fleet-replica.ts
//
// stdout `@@b {json}` lines (epoch ms `at`, same machine clock as the runner):
//   ready                                   every election made its first acquire attempt
//   elected {election, term} / revoked {election, term, reason}
//   handover-sent {election, to} / handover-recorded {election, to} / handover-failed {election, error}
//   counts {counts}
// stdin lines: `handover <election> <to>` (a directed request, from this replica), `counts`.
// SIGTERM → Nest shutdown hooks. End of stdin → exit at once (no orphans).
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LeaderElectionModule } from '../../lib/nest/leader-election.module.js';
import { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import { CountingStore, emit, makeStore, timingsFromEnv } from './stores.js';

const identity = process.env.IDENTITY ?? `replica-${process.pid}`;
const elections = (process.env.ELECTIONS ?? 'bench').split(',').filter(Boolean);
const out = (event: Record<string, unknown>) => emit(identity, event);

const store = new CountingStore(await makeStore(process.env.STORE ?? ''), { handover: true });

/** Subscribes before the elections start (DI runs before module init), so no first `elected` is missed. */
@Injectable()
class Watcher {
  constructor(service: LeaderElectionService) {
    for (const election of elections) {
      service.election(election).events$.subscribe((event) => {
        if (event.type === 'elected') out({ type: 'elected', election, term: event.term });
        else if (event.type === 'revoked') out({ type: 'revoked', election, term: event.term, reason: event.reason });
      });
    }
  }
}

@Module({
  imports: [
    LeaderElectionModule.forRoot({
      store,
      elections,
      identity,
      ...timingsFromEnv(),
      shutdownTimeoutMs: 5_000,
    }),
  ],
  providers: [Watcher],
})
class AppModule {}

const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error'] });
app.enableShutdownHooks();
const service = app.get(LeaderElectionService);
out({ type: 'ready' });

async function handover(election: string, to: string): Promise<void> {
  out({ type: 'handover-sent', election, to });
  try {
    await service.requestHandover({ election, to, reason: 'bench' });
    out({ type: 'handover-recorded', election, to });
  } catch (error) {
    out({ type: 'handover-failed', election, error: error instanceof Error ? error.message : String(error) });
  }
}

let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  buffer += chunk;
  for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
    const [verb, election, to] = buffer.slice(0, newline).trim().split(' ');
    buffer = buffer.slice(newline + 1);
    if (verb === 'handover' && election && to) void handover(election, to);
    else if (verb === 'counts') out({ type: 'counts', counts: store.counts });
  }
});
process.stdin.on('end', () => process.exit(0));
