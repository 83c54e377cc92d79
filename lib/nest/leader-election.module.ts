import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { LEADER_ELECTION_MODULE_OPTIONS, LEADER_ELECTION_SERVICE } from './leader-election.constants.js';
import { LeaderElectionExplorer } from './leader-election.explorer.js';
import { ConfigurableLeaderElectionModule } from './leader-election.module-definition.js';
import { LeaderElectionService } from './leader-election.service.js';
import { LeaderOnlyGuard } from './leader-only.guard.js';

/** @internal What every leader-election module provides and exports (this one and the testing kit's). */
export const LEADER_ELECTION_PROVIDERS = [
  LeaderElectionService,
  // The guard injects the service by this string token: a guard from the package's other copy (CJS
  // beside ESM in one app) then still finds this copy's service.
  { provide: LEADER_ELECTION_SERVICE, useExisting: LeaderElectionService },
  LeaderElectionExplorer,
  LeaderOnlyGuard,
];
/**
 * @internal The options are exported too: Nest builds the guard that `@LeaderOnly()` adds in the
 * module of each decorated class, and the guard injects them (as @nestjs/throttler's does).
 */
export const LEADER_ELECTION_EXPORTS = [
  LeaderElectionService,
  LEADER_ELECTION_SERVICE,
  LeaderOnlyGuard,
  LEADER_ELECTION_MODULE_OPTIONS,
];

/**
 * Elects one leader among the replicas of an application.
 *
 * ```ts
 * LeaderElectionModule.forRoot({ store: new AzureBlobLeaseStore({ connectionString }), election: 'billing-jobs' })
 * LeaderElectionModule.forRootAsync({ imports: [ConfigModule], inject: [ConfigService], useFactory: (config) => ({ … }) })
 * ```
 * Global unless `isGlobal: false`. Import it once per application; for graceful handover on
 * SIGTERM call `app.enableShutdownHooks()` (the module registers no process signal handlers).
 */
@Module({
  imports: [DiscoveryModule],
  providers: LEADER_ELECTION_PROVIDERS,
  exports: LEADER_ELECTION_EXPORTS,
})
export class LeaderElectionModule extends ConfigurableLeaderElectionModule {}
