// Entry `nestjs-leader-election/terminus`: everything that needs @nestjs/terminus (an optional peer).
export { LeaderElectionHealthIndicator } from './health/leader-election.health.js';
