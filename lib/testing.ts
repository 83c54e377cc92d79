/**
 * Unit-test an app's leader-only code without a store: `LeaderElectionTestingModule`,
 * `TestingLeadership` to move leadership, `FakeClock` to drive a raw `Elector`.
 * @module @leaderlease/nestjs/testing
 */
// Entry `@leaderlease/nestjs/testing`: unit-test an app's leader-only code without a store.
// LeaderElectionTestingModule replaces LeaderElectionModule; TestingLeadership moves leadership;
// FakeClock drives a raw Elector (`new Elector({ store, election, clock })`) deterministically.
export { FakeClock } from './shared/fake-clock.js';
export {
  LeaderElectionTestingModule,
  type LeaderElectionTestingOptions,
} from './testing/leader-election-testing.module.js';
export { TestingLeadership } from './testing/testing-leadership.js';
