/**
 * The health indicator for `@nestjs/terminus` (an optional peer).
 * @module @leaderlease/nestjs/terminus
 */
// Entry `@leaderlease/nestjs/terminus`: everything that needs @nestjs/terminus (an optional peer).
export { LeaderElectionHealthIndicator } from './nest/health/leader-election.health.js';
