import { type Clock, systemClock } from '../shared/clock.js';
import { LeaseStoreError } from '../shared/errors.js';
import type { LeaseStore } from '../stores/lease-store.js';
import type { StoreCallOutcome, StoreCallRecorder } from './election.metrics.js';
import { STORE_OPERATIONS, type StoreOperation } from './metric-names.js';

/** Where the timings go; `recorder` stays unset (nothing measured) until metrics are known to record. */
export interface StoreCallSink {
  recorder?: StoreCallRecorder;
  /** Times the calls (the module's clock, a test's `FakeClock`); default: the system clock. */
  clock?: Pick<Clock, 'now'>;
}

/** The timed members and the operation each counts as: a folded renewal (`renewWith`) is a renewal. */
const TIMED: ReadonlyMap<PropertyKey, StoreOperation> = new Map<PropertyKey, StoreOperation>([
  ...STORE_OPERATIONS.map((operation) => [operation, operation] as const),
  ['renewWith', 'renew'],
]);

/**
 * `store` as the elector sees it, with `acquire`, `renew` (and `renewWith`, as `renew`), `release`
 * and `read` timed into `sink.recorder`. A Proxy rather than a class, so every other member — `watch`, `close`,
 * capabilities a newer store declares, plain fields — is the store's own, untouched: `'watch' in
 * store` answers the same, and a call reaches the store with the store as `this`. Results and
 * errors pass through unchanged; the wrapper only looks.
 */
export function instrumentLeaseStore<S extends LeaseStore>(store: S, sink: StoreCallSink): S {
  // Missing or not an object (the testing kit has no store): the elector's validation says so.
  if (store === null || (typeof store !== 'object' && typeof store !== 'function')) return store;
  const wrappers = new Map<PropertyKey, { method: unknown; wrapper: (...args: unknown[]) => unknown }>();
  return new Proxy(store, {
    get(target, property) {
      // The store as receiver: getters reading #private fields would throw with the Proxy as `this`.
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      // Cached per member (a method is fetched on every call), for as long as the store keeps it.
      const cached = wrappers.get(property);
      if (cached?.method === value) return cached.wrapper;
      let wrapper: (...args: unknown[]) => unknown;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      const operation = TIMED.get(property);
      if (operation === undefined) {
        // Bound to the store: members using #private fields would throw with the Proxy as `this`.
        wrapper = (...args: unknown[]) => method.apply(target, args);
      } else {
        wrapper = (...args: unknown[]) => {
          const recorder = sink.recorder;
          if (!recorder) return method.apply(target, args);
          const clock = sink.clock ?? systemClock;
          const startedAt = clock.now();
          const seconds = () => (clock.now() - startedAt) / 1000;
          return method.apply(target, args).then(
            (result) => {
              recorder.storeCall(operation, outcomeOf(operation, result), seconds(), holderExpiresInMs(result));
              return result;
            },
            (error: unknown) => {
              recorder.storeCall(operation, failureOf(error), seconds());
              throw error;
            },
          );
        };
      }
      wrappers.set(property, { method: value, wrapper });
      return wrapper;
    },
  });
}

function outcomeOf(operation: StoreOperation, result: unknown): StoreCallOutcome {
  return operation === 'acquire' && (result as { acquired?: boolean } | undefined)?.acquired === false ? 'held' : 'ok';
}

/** An acquire that found a holder: the store's hint of how long that holder's lease still runs. */
function holderExpiresInMs(result: unknown): number | undefined {
  const refused = result as { acquired?: boolean; holder?: string; expiresInMs?: unknown } | undefined;
  if (refused?.acquired !== false || refused.holder === undefined) return undefined;
  const { expiresInMs } = refused;
  return typeof expiresInMs === 'number' && Number.isFinite(expiresInMs) && expiresInMs >= 0 ? expiresInMs : undefined;
}

/** The elector files any untyped error as transient; so do the metrics. */
function failureOf(error: unknown): StoreCallOutcome {
  return error instanceof LeaseStoreError ? error.kind : 'transient';
}
