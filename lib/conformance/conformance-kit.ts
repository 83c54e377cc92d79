// What every conformance case is built from: a scope that opens the stores of one case and closes
// them when it ends, the calls with a bounded signal, and assertions on node:assert/strict with the
// semantics the cases need (equal ignoring absent fields, partial match, a rejection of a kind).
// Timers are real: the cases judge a real server's expiry.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { LeaseLostError, type LeaseStoreErrorKind, TransientLeaseStoreError } from '../shared/errors.js';
import type { AcquireResult, Lease, LeaseStore } from '../stores/lease-store.js';
import { conformanceMessages as messages } from './conformance.messages.js';
import type { ConformanceCase, LeaseStoreConformanceOptions } from './conformance.types.js';

/** Bound of a single store call: generous, a test machine is often small and busy. */
export const CALL_TIMEOUT_MS = 10_000;
/** An already-aborted call must settle at least this fast. */
export const PROMPT_MS = 2_000;
/** The runner's timeout of a case that waits on no expiry. */
export const FAST_TIMEOUT_MS = 60_000;
/** Call latency and timer lag on a loaded 2-core machine, on top of an expiry's own bound. */
export const EXPIRY_SLACK_MS = 1_500;
export const DEFAULT_LEASE_MS = 1_000;

/** The options with their defaults applied, and the timings every case derives from them. */
export interface Target extends LeaseStoreConformanceOptions {
  readonly durationMs: number;
  readonly granularityMs: number;
  /** Long enough for any store's clock to agree a lease has expired. */
  readonly expiryWaitMs: number;
  /** The runner's timeout of a case that waits out an expiry or two. */
  readonly slowTimeoutMs: number;
}

export function targetOf(options: LeaseStoreConformanceOptions): Target {
  const durationMs = options.leaseDurationMs ?? DEFAULT_LEASE_MS;
  const granularityMs = options.expiryGranularityMs ?? 0;
  if (!Number.isSafeInteger(durationMs) || durationMs < 1) {
    throw new RangeError(messages.invalidOption('leaseDurationMs', durationMs, 'an integer ≥ 1'));
  }
  if (!Number.isSafeInteger(granularityMs) || granularityMs < 0 || granularityMs > 60_000) {
    throw new RangeError(messages.invalidOption('expiryGranularityMs', granularityMs, 'an integer from 0 to 60000'));
  }
  if (typeof options.createStore !== 'function') {
    throw new TypeError(messages.invalidOption('createStore', options.createStore, 'a function'));
  }
  return {
    ...options,
    durationMs,
    granularityMs,
    expiryWaitMs: durationMs + Math.max(1_000, durationMs / 5),
    slowTimeoutMs: 3 * durationMs + 60_000,
  };
}

/** The stores one case opened; each is closed when the case ends (unless `closeStores` is false). */
export class Scope {
  private readonly opened = new Set<LeaseStore>();

  constructor(readonly t: Target) {}

  get durationMs(): number {
    return this.t.durationMs;
  }

  /** Keeps `store` to close it at the end of the case. */
  adopt<S extends LeaseStore>(store: S): S {
    this.opened.add(store);
    return store;
  }

  async newStore(): Promise<LeaseStore> {
    return this.adopt(await this.t.createStore());
  }

  async newStores(count: number): Promise<LeaseStore[]> {
    return Promise.all(Array.from({ length: count }, () => this.newStore()));
  }

  acquire(store: LeaseStore, election: string, identity: string, leaseDurationMs = this.durationMs) {
    return store.acquire({ election, identity, leaseDurationMs, signal: callSignal() });
  }

  /** Acquires a lease that must be free, and checks the lease's shape. */
  async acquireOk(store: LeaseStore, election: string, identity: string, meta?: object): Promise<Lease> {
    const result = await store.acquire({
      election,
      identity,
      leaseDurationMs: this.durationMs,
      signal: callSignal(),
      meta,
    });
    const lease = acquired(result, identity, election);
    matches(lease, { election, holder: identity });
    assert.equal(typeof lease.leaseId, 'string');
    assert.ok(Number.isSafeInteger(lease.term) && lease.term > 0, `term ${lease.term} is not a positive integer`);
    return lease;
  }

  renew(store: LeaseStore, lease: Lease): Promise<void> {
    return store.renew(lease, { leaseDurationMs: this.durationMs, signal: callSignal() });
  }

  release(store: LeaseStore, lease: Lease): Promise<void> {
    return store.release(lease, { signal: callSignal() });
  }

  read(store: LeaseStore, election: string) {
    return store.read(election, { signal: callSignal() });
  }

  async close(): Promise<void> {
    if (this.t.closeStores === false) return;
    await Promise.allSettled([...this.opened].map((store) => store.close?.()));
  }
}

/** A case whose body gets a fresh {@link Scope}, closed whatever the outcome. */
export function defineCase(
  t: Target,
  name: string,
  timeoutMs: number,
  body: (scope: Scope) => Promise<void>,
  more: { concurrent?: boolean; skipReason?: string } = {},
): ConformanceCase {
  const run = async (): Promise<void> => {
    const scope = new Scope(t);
    try {
      await body(scope);
    } finally {
      await scope.close();
    }
  };
  const skip = more.skipReason === undefined ? {} : { skip: true, skipReason: more.skipReason };
  return { name, run, timeoutMs, concurrent: more.concurrent ?? true, ...skip };
}

/** The lease of an acquire that must have won. */
export function acquired(result: AcquireResult, identity: string, election: string): Lease {
  if (!result.acquired) assert.fail(`expected ${identity} to acquire "${election}", got ${JSON.stringify(result)}`);
  return result.lease;
}

/** `atLeastMs`, or the nearest duration the store accepts above it. */
export function leaseFor(store: LeaseStore, atLeastMs: number): number {
  const { minLeaseDurationMs, maxLeaseDurationMs, leaseDurationStepMs = 1 } = store.limits;
  const wanted = Math.max(minLeaseDurationMs, atLeastMs);
  return Math.min(maxLeaseDurationMs, Math.ceil(wanted / leaseDurationStepMs) * leaseDurationStepMs);
}

/** A fresh election name: cases never share one, so they may run concurrently. */
export function electionName(tag: string): string {
  return `conformance-${tag}-${randomBytes(4).toString('hex')}`;
}

export function callSignal(ms = CALL_TIMEOUT_MS): AbortSignal {
  return AbortSignal.timeout(ms);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Deep equality where an absent field and one set to `undefined` are the same (Jest's `toEqual`). */
export function same(actual: unknown, expected: unknown, message?: string): void {
  assert.deepStrictEqual(defined(actual), defined(expected), message);
}

/** Every field of `expected` (recursively for plain objects) is in `actual` with that value. */
export function matches(actual: unknown, expected: object, message?: string): void {
  const fail = () => assert.fail(message ?? `${JSON.stringify(actual)} does not match ${JSON.stringify(expected)}`);
  if (typeof actual !== 'object' || actual === null) fail();
  for (const [key, value] of Object.entries(expected)) {
    const got = (actual as Record<string, unknown>)[key];
    if (isPlainObject(value)) matches(got, value, message);
    else if (!isDeepStrictEqual(defined(got), defined(value))) fail();
  }
}

/** The rejection of `promise`, which must be a `LeaseStoreError` of `kind`. */
export async function rejectsWithKind(promise: Promise<unknown>, kind: LeaseStoreErrorKind): Promise<unknown> {
  const error = await rejection(promise, `a rejection of kind "${kind}"`);
  matches(error, { kind }, `expected a rejection of kind "${kind}", got ${String(error)}`);
  if (kind === 'lost') assert.ok(error instanceof LeaseLostError, `${String(error)} is not a LeaseLostError`);
  if (kind === 'transient') {
    assert.ok(error instanceof TransientLeaseStoreError, `${String(error)} is not a TransientLeaseStoreError`);
  }
  return error;
}

/** The rejection of `promise`, which must be an instance of `type`. */
export async function rejectsWith(promise: Promise<unknown>, type: new (...args: never[]) => Error): Promise<unknown> {
  const error = await rejection(promise, `a ${type.name}`);
  assert.ok(error instanceof type, `expected a ${type.name}, got ${String(error)}`);
  return error;
}

/** An already-aborted call rejects as transient, promptly. */
export async function rejectsPromptly(promise: Promise<unknown>): Promise<void> {
  const startedAt = performance.now();
  await rejectsWithKind(promise, 'transient');
  const tookMs = performance.now() - startedAt;
  assert.ok(tookMs < PROMPT_MS, `an aborted call took ${Math.round(tookMs)} ms to reject (bound ${PROMPT_MS} ms)`);
}

async function rejection(promise: Promise<unknown>, wanted: string): Promise<unknown> {
  return promise.then(
    () => assert.fail(`expected ${wanted}, but the call succeeded`),
    (reason: unknown) => reason,
  );
}

function isDeepStrictEqual(a: unknown, b: unknown): boolean {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}

function isPlainObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/** A copy without `undefined` fields, so `{ a: 1, b: undefined }` equals `{ a: 1 }`. */
function defined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(defined);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).flatMap(([key, field]) => (field === undefined ? [] : [[key, defined(field)]])),
  );
}
