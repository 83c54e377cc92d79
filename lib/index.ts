/**
 * The root entry: `LeaderElectionModule`, `LeaderElectionService`, `@LeaderOnly()` and the
 * leadership hooks, the guard, the `Elector` for use without Nest, the Azure Blob and in-memory stores,
 * and the errors an app catches.
 * @module @leaderlease/nestjs
 */
// Public API: what an app uses. Drivers other than Azure live behind their own subpaths
// (@leaderlease/nestjs/postgres, /mysql, /redis, /etcd) and the health indicator behind
// /terminus, so importing this file loads none of those optional peers. The Azure SDK is a dependency
// but is imported only when an AzureBlobLeaseStore is built (lib/stores/azure/azure-client.ts).
// What a store author needs (the LeaseStore contract, its types, errors and capability guards) is
// `@leaderlease/nestjs/store` (lib/store.ts); test/unit/public-api.spec.ts keeps this list short.

export {
  Elector,
  type ElectorLogger,
  type ElectorOptions,
  type ElectorState,
  type ElectorStatus,
  type HandoverHooks,
  type HandoverRequestOptions,
  type LeadershipEvent,
} from './election/elector.js';
export { DEFAULT_TIMINGS, type ElectorTimings } from './election/elector-options.js';
export type {
  ElectionHandle,
  LeaderElectionState,
  LeaderElectionStatus,
  LeadershipTerm,
} from './leadership/election.handle.js';
// Job control (issue 28): what `jobs()` and `jobHistory()` answer, their options, the unknown-name error.
export type { JobCommandOptions, JobInfo, JobRun } from './leadership/jobs/job.types.js';
export { UnknownJobError } from './leadership/jobs/unknown-job.error.js';
export { currentLeadership, type LeadershipContext } from './leadership/leadership-context.js';
export { LeaderOnly, type LeaderOnlyOptions } from './nest/decorators/leader-only.decorator.js';
export {
  type ElectedHookEvent,
  type LeaderChangedHookEvent,
  OnElected,
  type OnElectedOptions,
  OnLeaderChanged,
  OnRevoked,
  type RevokedHookEvent,
} from './nest/decorators/leadership-hooks.decorator.js';
export type { HandoverRequestInput } from './nest/interfaces/handover-request-input.interface.js';
export type {
  LeaderElectionModuleOptions,
  LeaderOnlyGuardOptions,
} from './nest/interfaces/leader-election-options.interface.js';
export { LEADER_ELECTION_MODULE_OPTIONS } from './nest/leader-election.constants.js';
// Nest integration
export { LeaderElectionModule } from './nest/leader-election.module.js';
export type { LeaderElectionOptionsFactory } from './nest/leader-election.module-definition.js';
export { LeaderElectionService } from './nest/leader-election.service.js';
export { InjectLeaderElectionOptions } from './nest/leader-election-options.decorator.js';
export { NotLeaderException, type NotLeaderResponseBody } from './nest/leader-only.exception.js';
export { LeaderOnlyGuard } from './nest/leader-only.guard.js';
export type { Clock } from './shared/clock.js';
// Leadership events on node:diagnostics_channel, published by the elector (with or without Nest).
export { LEADER_ELECTION_CHANNELS, type LeaderElectionChannelMessages } from './shared/diagnostics-channels.js';
// The errors an app catches: a fenced write refused (writeState), nobody to hand over from.
export { LeaseLostError, NoLeaderError } from './shared/errors.js';
export { AzureBlobLeaseStore, type AzureBlobLeaseStoreOptions } from './stores/azure/azure-blob.store.js';
export { InMemoryLeaseStore } from './stores/memory/memory.store.js';
