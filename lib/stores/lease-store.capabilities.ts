import { FatalLeaseStoreError } from '../shared/errors.js';
import type { LeaseStore } from './lease-store.js';
import { storeMessages as messages } from './store.messages.js';

// The optional parts of the contract: the elector asks a store what it offers through these guards.

/** A store that declares the handover capability (the three request methods). */
export type HandoverCapableStore = LeaseStore &
  Required<Pick<LeaseStore, 'requestHandover' | 'readHandover' | 'clearHandover'>>;

/** True when `store` implements handover requests (`requestHandover`, `readHandover`, `clearHandover`). */
export function supportsHandover(store: LeaseStore): store is HandoverCapableStore {
  return (
    typeof store.requestHandover === 'function' &&
    typeof store.readHandover === 'function' &&
    typeof store.clearHandover === 'function'
  );
}

/** A store that declares the leader-state capability (both methods). */
export type StateCapableStore = LeaseStore & Required<Pick<LeaseStore, 'writeState' | 'readState'>>;

/** True when `store` implements leader state (`writeState` and `readState`). */
export function supportsState(store: LeaseStore): store is StateCapableStore {
  return typeof store.writeState === 'function' && typeof store.readState === 'function';
}

/** A store that declares the shared-records capability (both methods). */
export type RecordCapableStore = LeaseStore & Required<Pick<LeaseStore, 'readRecord' | 'writeRecord'>>;

/** True when `store` implements shared records (`readRecord` and `writeRecord`). */
export function supportsRecords(store: LeaseStore): store is RecordCapableStore {
  return typeof store.readRecord === 'function' && typeof store.writeRecord === 'function';
}

/** A store that folds what a renewal carries and learns into the renewal (`renewWith`). */
export type FoldingStore = LeaseStore & Required<Pick<LeaseStore, 'renewWith'>>;

/** True when `store` implements the folded renewal (`renewWith`). */
export function supportsRenewWith(store: LeaseStore): store is FoldingStore {
  return typeof store.renewWith === 'function';
}

/** What the elector rejects with when its store lacks the capability. */
export function stateUnsupportedError(store: Pick<LeaseStore, 'name'>): FatalLeaseStoreError {
  return new FatalLeaseStoreError(messages.state.unsupported(store.name));
}
