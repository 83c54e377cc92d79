import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { LEADER_ELECTION_SERVICE } from './leader-election.constants.js';
import { LeaderElectionExplorer } from './leader-election.explorer.js';
import { ConfigurableLeaderElectionModule } from './leader-election.module-definition.js';
import { LeaderElectionService } from './leader-election.service.js';
import { LeaderOnlyGuard } from './leader-only.guard.js';

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
  providers: [
    LeaderElectionService,
    { provide: LEADER_ELECTION_SERVICE, useExisting: LeaderElectionService },
    LeaderElectionExplorer,
    LeaderOnlyGuard,
  ],
  exports: [LeaderElectionService, LEADER_ELECTION_SERVICE, LeaderOnlyGuard],
})
export class LeaderElectionModule extends ConfigurableLeaderElectionModule {}
