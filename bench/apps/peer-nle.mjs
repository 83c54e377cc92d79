// @ts-check
// One replica of the peer library `nest-leader-election` (npm, TypeORM + PostgreSQL), for the
// side-by-side figures. Plain JS (no decorators needed): a Nest application context with
// TypeOrmModule + LeaderElectorModule, and a "job" that acts every TICK_MS while amILeader().
//
//   PG_URL=… SCHEMA=s LOCK_ID=n IDENTITY=a LEASE_MS=15000 POLL_MS=2000 JITTER_MS=600 TICK_MS=20 \
//     node bench/apps/peer-nle.mjs
//
// stdout: the peer's own chatter (it console.logs every acquire), plus our `@@b {json}` lines:
// ready, elected (amILeader turned true), act (a leader-only tick), revoked (turned false),
// resumed (an event-loop gap longer than 1 s ended: the process was paused).
// SIGTERM → Nest shutdown hooks (the peer deletes its row). End of stdin → exit (no orphans).
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LeaderElectorModule, LeaderElectorService } from 'nest-leader-election';
import { emitter, env } from './peer-protocol.mjs';

const identity = env('IDENTITY');
const TICK_MS = Number(env('TICK_MS', '20'));
const emit = emitter(identity);

const url = new URL(env('PG_URL'));
class AppModule {}
Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      host: url.hostname,
      port: Number(url.port || 5432),
      username: decodeURIComponent(url.username || 'postgres'),
      password: decodeURIComponent(url.password || ''),
      database: url.pathname.slice(1) || 'postgres',
      autoLoadEntities: true,
      synchronize: false,
      logging: false,
    }),
    LeaderElectorModule.forRoot({
      schema: env('SCHEMA', 'public'),
      lockId: Number(env('LOCK_ID', '1')),
      instanceId: identity,
      leaseDuration: Number(env('LEASE_MS', '15000')),
      renewalInterval: Number(env('POLL_MS', '2000')),
      jitterRange: Number(env('JITTER_MS', '600')),
    }),
  ],
})(AppModule);

const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error'] });
app.enableShutdownHooks();
const elector = app.get(LeaderElectorService);

let leading = false;
let last = performance.now();
// Only the acts that matter are printed: the first of each term, and every act within 3 s of a
// resume (a paused leader acting on a stale belief). The rest are counted.
let actsSinceElected = 0;
let resumedAt = -Infinity;
setInterval(() => {
  const now = performance.now();
  if (now - last > 1_000) {
    resumedAt = now;
    emit({ type: 'resumed', gapMs: Math.round(now - last) });
  }
  last = now;
  const believes = elector.amILeader();
  if (believes !== leading) emit({ type: 'believes', value: believes });
  else if (believes && now - resumedAt < 3_000) emit({ type: 'believes-true' });
  if (believes && !leading) {
    actsSinceElected = 0;
    emit({ type: 'elected' });
  }
  if (!believes && leading) emit({ type: 'revoked', acts: actsSinceElected });
  leading = believes;
  if (believes) {
    actsSinceElected += 1;
    if (actsSinceElected === 1 || now - resumedAt < 3_000) emit({ type: 'act' });
  }
}, TICK_MS);
emit({ type: 'ready', leader: elector.amILeader() });

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
