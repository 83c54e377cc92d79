import { type ElectionHandle, LeaderElectionService, type LeadershipEvent } from '@leaderlease/nestjs';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { logEvent } from './log-event.js';

/**
 * Reports every change of leadership this instance sees, in every election, and its own shutdown.
 * Subscribes to each election's `events$` rather than using `@OnElected('name')` hooks, so that
 * whatever ELECTIONS names is reported too.
 */
@Injectable()
export class LeadershipListener implements OnApplicationShutdown {
  private readonly logger = new Logger(LeadershipListener.name);

  constructor(service: LeaderElectionService) {
    // In the constructor: the first acquire happens during module init, and must be reported. No
    // unsubscribe: `events$` completes when its election stops, after the last `revoked`.
    for (const name of service.elections) {
      const election = service.election(name);
      election.events$.subscribe((event) => this.report(election, event));
    }
  }

  private report(handle: ElectionHandle, event: LeadershipEvent): void {
    const { election, identity } = handle;
    const { term, reason } = event;
    switch (event.type) {
      case 'elected':
        logEvent(this.logger, 'elected', { election, term }, `elected leader of "${election}", term ${term}`);
        break;
      case 'revoked':
        logEvent(
          this.logger,
          'revoked',
          { election, term, reason },
          `no longer the leader of "${election}" (term ${term}): ${reason}`,
        );
        break;
      case 'leader-changed': {
        const { leaderId } = event;
        // Our own election is reported as `elected`; this is about following someone else.
        if (leaderId === identity) return;
        logEvent(
          this.logger,
          'leader-changed',
          { election, leaderId: leaderId ?? null, leaderAdvertise: handle.leaderAdvertise ?? null },
          leaderId ? `"${election}": following leader ${leaderId}` : `"${election}": no known leader`,
        );
        break;
      }
    }
  }

  /** Runs after LeaderElectionModule has drained leader-only work and released the leases. */
  onApplicationShutdown(signal?: string): void {
    logEvent(
      this.logger,
      'stopped',
      { signal: signal ?? null },
      `stopped${signal ? ` on ${signal}` : ''}; leases released if they were ours`,
    );
  }
}
