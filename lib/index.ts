// Public API. Drivers other than Azure live behind their own subpaths
// (nestjs-leader-election/postgres, /mysql, /redis, /etcd) and the health indicator behind
// /terminus, so importing this file loads none of those optional peers. The Azure SDK is a dependency
// but is imported only when an AzureBlobLeaseStore is built (lib/stores/azure/azure-client.ts).

export {
  Elector,
  type ElectorHealth,
  type ElectorLogger,
  type ElectorOptions,
  type ElectorState,
  type ElectorStatus,
  type HandoverHooks,
  type HandoverRequestOptions,
  type LeadershipEvent,
  type StopOptions,
} from './election/elector.js';
export { DEFAULT_TIMINGS, type ElectorTimings } from './election/elector-options.js';
export { LeaderOnly, type LeaderOnlyOptions } from './nest/decorators/leader-only.decorator.js';
export {
  type ElectedHookEvent,
  type LeaderChangedHookEvent,
  OnElected,
  OnLeaderChanged,
  OnRevoked,
  type RevokedHookEvent,
} from './nest/decorators/leadership-hooks.decorator.js';
export type {
  LeaderElectionModuleOptions,
  LeaderElectionNames,
  LeaderElectionSharedOptions,
  LeaderOnlyGuardOptions,
} from './nest/interfaces/leader-election-options.interface.js';
export { LEADER_ELECTION_MODULE_OPTIONS } from './nest/leader-election.constants.js';
// Nest integration
export { LeaderElectionModule } from './nest/leader-election.module.js';
export type { LeaderElectionOptionsFactory } from './nest/leader-election.module-definition.js';
export {
  ElectionHandle,
  type HandoverRequestInput,
  LeaderElectionService,
  type LeaderElectionState,
  type LeaderElectionStatus,
  type LeadershipTerm,
} from './nest/leader-election.service.js';
export { InjectLeaderElectionOptions } from './nest/leader-election-options.decorator.js';
export { NotLeaderException, type NotLeaderResponseBody } from './nest/leader-only.exception.js';
export { LeaderOnlyGuard } from './nest/leader-only.guard.js';
// Public `Clock`: `wallNow` optional (0.1.0 clocks have none); the elector fills it with Date.now().
export type { ClockSource as Clock } from './shared/clock.js';
export { AzureBlobLeaseStore, type AzureBlobLeaseStoreOptions } from './stores/azure/azure-blob.store.js';
export {
  type AcquireRequest,
  type AcquireResult,
  type CallOptions,
  FatalLeaseStoreError,
  type HandoverRequest,
  type LeaderStateEntry,
  type Lease,
  type LeaseInfo,
  LeaseLostError,
  type LeaseMeta,
  type LeaseStore,
  LeaseStoreError,
  type LeaseStoreErrorKind,
  type LeaseStoreLimits,
  type LeaseWatch,
  MAX_HANDOVER_REQUEST_BYTES,
  MAX_LEASE_META_BYTES,
  NoLeaderError,
  type ReleaseOptions,
  type RenewOptions,
  SPREAD_REASON,
  type StateCallOptions,
  spreadRequestYields,
  TransientLeaseStoreError,
} from './stores/lease-store.js';
export { InMemoryLeaseStore } from './stores/memory/memory.store.js';
