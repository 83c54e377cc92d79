import { Injectable } from '@nestjs/common';
import { type HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { LeaderElectionService } from '../leader-election.service.js';

/**
 * Terminus health indicator for the leader election (subpath `nestjs-leader-election/terminus`,
 * so the main entry never needs @nestjs/terminus). Add it to the providers of the module that
 * imports `TerminusModule`:
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.leaderElection.isHealthy('leaderElection')]); }
 * ```
 */
@Injectable()
export class LeaderElectionHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly election: LeaderElectionService,
  ) {}

  /**
   * Up on the leader and on followers alike (a follower is a healthy replica), with the status
   * as data. Down when the elector cannot do its job: the store refuses us (auth/config), has been
   * failing for longer than the renew deadline, or the election is not running.
   */
  isHealthy<const Key extends string>(key: Key): HealthIndicatorResult<Key> {
    const indicator = this.indicators.check(key);
    const data: Record<string, unknown> = { ...this.election.status() };
    const health = this.election.health();
    return health.healthy ? indicator.up(data) : indicator.down({ ...data, reason: health.reason });
  }

  /**
   * Opt-in: up only on the leader, down on followers. For routing traffic to the leader (a
   * readiness probe of a leader-only Service), never for liveness — followers would be restarted.
   */
  isLeader<const Key extends string>(key: Key): HealthIndicatorResult<Key> {
    const indicator = this.indicators.check(key);
    const data: Record<string, unknown> = { ...this.election.status() };
    return this.election.isLeader() ? indicator.up(data) : indicator.down(data);
  }
}
