// Compiled by `nest build` with the rest of src/ and never run: each marked line must be a type
// error. Should the package's declarations of an entry go missing (everything becomes `any`), the
// markers are unused and the build fails with TS2578. Every entry is here: a broken `exports`,
// `typesVersions` (node10) or .d.ts of any one fails this app's build.
import { LeaderElectionModule, LeaderOnly } from '@leaderlease/nestjs';
import { EtcdLeaseStore } from '@leaderlease/nestjs/etcd';
import { MySqlLeaseStore } from '@leaderlease/nestjs/mysql';
import { PostgresLeaseStore } from '@leaderlease/nestjs/postgres';
import { RedisLeaseStore } from '@leaderlease/nestjs/redis';
import { type LeaseStoreLimits, supportsState } from '@leaderlease/nestjs/store';
import type { LeaderElectionHealthIndicator } from '@leaderlease/nestjs/terminus';
import { FakeClock, LeaderElectionTestingModule, type TestingLeadership } from '@leaderlease/nestjs/testing';

export function typesCheck(health: LeaderElectionHealthIndicator, leadership: TestingLeadership) {
  // @ts-expect-error once is 'per-tick' or nothing
  LeaderOnly({ once: 'per-day' });
  // @ts-expect-error the election name is required
  LeaderElectionModule.forRoot({ store: new PostgresLeaseStore({}) });
  // @ts-expect-error table is a string
  new MySqlLeaseStore({ table: 42 });
  // @ts-expect-error keyPrefix is a string
  new RedisLeaseStore({ keyPrefix: 42 });
  // @ts-expect-error callTimeoutMs is a number
  new EtcdLeaseStore({ callTimeoutMs: '5s' });
  // @ts-expect-error a store's limits give the reason of their range
  const limits: LeaseStoreLimits = { minLeaseDurationMs: 1_000, maxLeaseDurationMs: 60_000 };
  // @ts-expect-error the capability guards take a store
  supportsState(limits);
  // @ts-expect-error the indicator's key is a string
  health.isHealthy(42);
  // @ts-expect-error leader is a boolean
  LeaderElectionTestingModule.forRoot({ leader: 'yes' });
  // @ts-expect-error a term is a number
  void leadership.elect('2');
  // @ts-expect-error the start time is a number
  new FakeClock('now');
  // @ts-expect-error table is a string
  return new PostgresLeaseStore({ table: 42 });
}
