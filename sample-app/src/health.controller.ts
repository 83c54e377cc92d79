import { LeaderElectionHealthIndicator } from '@leaderlease/nestjs/terminus';
import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly leaderElection: LeaderElectionHealthIndicator,
  ) {}

  /**
   * Up on the leader and on followers (a follower is a healthy replica); down when the lease store
   * refuses us or has failed past the renew deadline. A readiness probe: keep liveness independent
   * of the store, or a store outage restarts every replica (docs/guides/deploying.md).
   */
  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.leaderElection.isHealthy('leaderElection')]);
  }
}
