import { LeaderElectionModule } from '@leaderlease/nestjs';
import { LeaderElectionHealthIndicator } from '@leaderlease/nestjs/terminus';
import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { BillingService } from './billing.service.js';
import { CleanupService } from './cleanup.service.js';
import { leaderElectionOptions } from './config.js';
import { HealthController } from './health.controller.js';
import { JobControlController } from './job-control.controller.js';
import { JobsController } from './jobs.controller.js';
import { JobsService } from './jobs.service.js';
import { LeaderController } from './leader.controller.js';
import { LeadershipFeed } from './leadership.feed.js';
import { LeadershipListener } from './leadership.listener.js';
import { MetricsController } from './metrics.controller.js';
import { StatusPageController } from './status-page.controller.js';
import { QueueWorker } from './worker.js';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    TerminusModule,
    // Async: the store may need @azure/identity, loaded on demand (see config.ts).
    LeaderElectionModule.forRootAsync({ useFactory: () => leaderElectionOptions() }),
  ],
  controllers: [
    JobsController,
    JobControlController,
    LeaderController,
    HealthController,
    MetricsController,
    StatusPageController,
  ],
  providers: [
    LeadershipListener,
    LeadershipFeed,
    JobsService,
    BillingService,
    CleanupService,
    QueueWorker,
    LeaderElectionHealthIndicator,
  ],
})
export class AppModule {}
