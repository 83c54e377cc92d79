/**
 * For people who write a lease store: the `LeaseStore` contract (its documentation is the
 * specification), the types of its calls, the typed errors a store throws, the capability guards, and
 * the conformance suite that proves a store keeps the contract (`leaseStoreConformance`).
 * @module @leaderlease/nestjs/store
 */
// Entry `@leaderlease/nestjs/store`: for people who write a lease store. The `LeaseStore` contract
// (its documentation is the specification), the types of its calls, the typed errors a store throws,
// the capability guards the elector asks a store through, and the limits a store must accept. An app
// needs none of it: the root entry has the stores we ship and the errors an app catches.
//
// A store must also give back the lease id of an acquire without a clear answer (see
// `LeaseStore.acquire`); the built-in stores' helper for that is internal, so a third-party store
// follows the contract itself. Prove it with the conformance suite, `leaseStoreConformance`: the
// cases our own stores pass, for any test runner (docs/guides/writing-a-store.md).
export type {
  BlackHoledStore,
  ConformanceCase,
  LeaseStoreConformanceOptions,
  ReplyLosingStore,
  ReplyLoss,
} from './conformance/conformance.types.js';
export { leaseStoreConformance } from './conformance/lease-store-conformance.js';
export {
  FatalLeaseStoreError,
  LeaseLostError,
  LeaseStoreError,
  type LeaseStoreErrorKind,
  TransientLeaseStoreError,
  toLeaseStoreError,
} from './shared/errors.js';
export {
  type FoldingStore,
  type HandoverCapableStore,
  type RecordCapableStore,
  type StateCapableStore,
  supportsHandover,
  supportsRecords,
  supportsRenewWith,
  supportsState,
} from './stores/lease-store.capabilities.js';
export {
  type AcquireRequest,
  type AcquireResult,
  type CallOptions,
  type HandoverRequest,
  type LeaderStateEntry,
  type Lease,
  type LeaseInfo,
  type LeaseMeta,
  type LeaseStore,
  type LeaseStoreLimits,
  type LeaseWatch,
  MAX_HANDOVER_REQUEST_BYTES,
  MAX_LEASE_META_BYTES,
  MAX_SHARED_RECORD_BYTES,
  type RecordWriteOptions,
  type ReleaseOptions,
  type RenewOptions,
  type RenewWithOptions,
  type RenewWithReply,
  type SharedRecord,
  type StateCallOptions,
  type StateWrite,
} from './stores/lease-store.js';
export {
  isReplicaRequest,
  PRIORITY_REASON,
  REPLICA_REASONS,
  SPREAD_REASON,
  spreadRequestYields,
} from './stores/lease-store.spread-rule.js';
