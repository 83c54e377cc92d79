import { Injectable } from '@nestjs/common';
import { type HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { LeaderElectionService } from '../leader-election.service.js';

/**
 * Terminus health indicator for the leader election (subpath `@leaderlease/nestjs/terminus`,
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
   * as data (every election's, when the app runs several). Down when an elector cannot do its job:
   * the store refuses us (auth/config), has been failing for longer than the renew deadline, the
   * election is not running, leader work is stuck (`stuckAfterMs`), or the replica holds the lease
   * without acting as leader beyond what a step-down takes (a handover or shutdown drain:
   * shutdownTimeoutMs + renewIntervalMs; a resignation: renewIntervalMs; anything else at once) — a lease nobody works under is
   * failover that never happens. The reason names the election when there are several.
   */
  isHealthy<const Key extends string>(key: Key): HealthIndicatorResult<Key> {
    const indicator = this.indicators.check(key);
    const data = this.data();
    const health = this.election.health();
    return health.healthy ? indicator.up(data) : indicator.down({ ...data, reason: health.reason });
  }

  /**
   * Opt-in: up only on the leader of `election` (default: the default election), down on
   * followers. For routing traffic to the leader (a readiness probe of a leader-only Service),
   * never for liveness — followers would be restarted.
   */
  isLeader<const Key extends string>(key: Key, election?: string): HealthIndicatorResult<Key> {
    const indicator = this.indicators.check(key);
    const handle = this.election.election(election);
    const data: Record<string, unknown> = { ...handle.status() };
    return handle.isLeader() ? indicator.up(data) : indicator.down(data);
  }

  /** The default election's status; with several elections, every one's under `elections`. */
  private data(): Record<string, unknown> {
    const data: Record<string, unknown> = { ...this.election.status() };
    if (this.election.elections.length > 1) {
      data.elections = Object.fromEntries(this.election.statuses().map((status) => [status.election, status]));
    }
    return data;
  }
}
