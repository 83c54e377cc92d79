import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { LeaderElectionService, OnElected, OnLeaderChanged, OnRevoked } from 'nestjs-leader-election';
import { logEvent } from './log-event.js';

/** Reports every change of leadership this instance sees, and its own shutdown. */
@Injectable()
export class LeadershipListener implements OnApplicationShutdown {
  private readonly logger = new Logger(LeadershipListener.name);

  constructor(private readonly election: LeaderElectionService) {}

  @OnElected()
  elected({ term }: { term: number }): void {
    logEvent(this.logger, 'elected', { term }, `elected leader of "${this.election.election}", term ${term}`);
  }

  @OnRevoked()
  revoked({ term, reason }: { term: number; reason: string }): void {
    logEvent(this.logger, 'revoked', { term, reason }, `no longer the leader (term ${term}): ${reason}`);
  }

  @OnLeaderChanged()
  leaderChanged({ leaderId }: { leaderId: string | undefined }): void {
    // Our own election is reported by elected(); this is about following someone else.
    if (leaderId === this.election.identity) return;
    logEvent(
      this.logger,
      'leader-changed',
      { leaderId: leaderId ?? null },
      leaderId ? `following leader ${leaderId}` : 'no known leader',
    );
  }

  /** Runs after LeaderElectionModule has drained leader-only work and released the lease. */
  onApplicationShutdown(signal?: string): void {
    logEvent(
      this.logger,
      'stopped',
      { signal: signal ?? null },
      `stopped${signal ? ` on ${signal}` : ''}; lease released if it was ours`,
    );
  }
}
