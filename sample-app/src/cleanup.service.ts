import { LeaderElectionService, LeaderOnly } from '@leaderlease/nestjs';
import { Injectable, Logger } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { jobElections } from './config.js';
import { logEvent } from './log-event.js';

/** The third election's job: a sweep that must not run on two replicas at once. */
@Injectable()
export class CleanupService {
  private readonly logger = new Logger(CleanupService.name);

  constructor(private readonly service: LeaderElectionService) {}

  @Cron('*/15 * * * * *', { name: 'cleanup' })
  @LeaderOnly(jobElections.cleanup)
  sweep(): void {
    const election = this.service.election(jobElections.cleanup);
    logEvent(
      this.logger,
      'job',
      { job: 'cleanup', election: election.election, term: election.term ?? null },
      `${election.election}: expired sessions swept with fencing term ${election.term}`,
    );
  }
}
