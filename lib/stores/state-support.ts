import { FatalLeaseStoreError, LeaseLostError } from '../shared/errors.js';
import type { LeaderStateEntry, Lease, LeaseStore, LeaseStoreLimits, StateCallOptions } from './lease-store.js';
import { storeMessages as messages } from './store.messages.js';
import type { Step } from './store-support.js';

/**
 * Leader state, shared by every store that offers it: key and size rules, the JSON envelope
 * `{ value, term }`, the errors, and the SQL stores' in-place migration of the state column.
 */

/** The key of the user's own value; the library's records (`tick:<job>`) use other keys. */
const DEFAULT_STATE_KEY = 'state';
/** The size every built-in store accepts (and the least a store may declare): 64 KiB of JSON. */
export const DEFAULT_MAX_STATE_BYTES = 65_536;
/** Safe as a Redis hash field, an etcd key segment, a JSON object key and a SQL JSON path member. */
const STATE_KEY = /^[A-Za-z0-9._:-]{1,200}$/;

/** The store refused the write: the lease is not the current one (the state is unchanged). */
export function stateLostError(lease: Lease): LeaseLostError {
  return new LeaseLostError(messages.state.lost(lease.election, lease.term));
}

/** The validated key of a state call: `options.key`, default {@link DEFAULT_STATE_KEY}. */
export function stateKey(options: Pick<StateCallOptions, 'key'> | undefined): string {
  const key = options?.key ?? DEFAULT_STATE_KEY;
  if (typeof key !== 'string' || !STATE_KEY.test(key)) throw new TypeError(messages.state.invalidKey(key));
  return key;
}

/** The limit a store enforces: its declared `maxStateBytes`, never below the 64 KiB every store promises. */
export function maxStateBytes(limits: LeaseStoreLimits): number {
  return Math.max(DEFAULT_MAX_STATE_BYTES, limits.maxStateBytes ?? DEFAULT_MAX_STATE_BYTES);
}

export interface PreparedStateWrite {
  key: string;
  /** The value's JSON (what the size limit counts). */
  json: string;
  /** The stored entry `{"value":…,"term":…}` as JSON, for stores that keep it as one string. */
  entry: string;
}

/**
 * Checks a write before anything is sent: the key, that the value is JSON, and its size against
 * the store's limit (UTF-8 bytes of the value's JSON). Throws TypeError or RangeError.
 */
export function prepareStateWrite(
  store: Pick<LeaseStore, 'name' | 'limits'>,
  lease: Lease,
  value: unknown,
  options: StateCallOptions,
): PreparedStateWrite {
  const key = stateKey(options);
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(messages.state.notSerialisable(store.name, error instanceof Error ? error.message : 'throws'));
  }
  if (json === undefined) throw new TypeError(messages.state.notSerialisable(store.name, typeof value));
  const limit = maxStateBytes(store.limits);
  // Cheap bound first: a UTF-16 unit is at most 3 UTF-8 bytes, so short strings need no count.
  const bytes = json.length * 3 <= limit ? json.length : Buffer.byteLength(json, 'utf8');
  if (bytes > limit) throw new RangeError(messages.state.tooLarge(store.name, bytes, limit));
  return { key, json, entry: `{"value":${json},"term":${lease.term}}` };
}

/** A stored envelope as an object: a JSON string parsed (undefined when it is not JSON), anything else as is. */
export function parseEnvelope(stored: unknown): unknown {
  if (typeof stored !== 'string') return stored;
  try {
    return JSON.parse(stored);
  } catch {
    return undefined;
  }
}

/** Reads a stored `{ value, term }` entry; anything else is reported as corrupt, never guessed at. */
export function decodeStateEntry(store: string, election: string, key: string, stored: unknown): LeaderStateEntry {
  const entry = parseEnvelope(stored);
  const { value, term } = (entry ?? {}) as Partial<LeaderStateEntry>;
  if (typeof entry !== 'object' || entry === null || !('value' in entry) || !Number.isSafeInteger(Number(term))) {
    throw new FatalLeaseStoreError(messages.state.corrupt(store, election, key));
  }
  return { value, term: Number(term) };
}

/** `run` at most once at a time and once for good: a failure lets the next caller try again. */
export function onceUntilDone(run: () => Promise<unknown>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= run().then(
      () => undefined,
      (error: unknown) => {
        done = undefined;
        throw error;
      },
    );
    return done;
  };
}

/**
 * A SQL store's state statement on a table made by a version without the state column: with
 * createTable on, add the column in place (once; `migrate` must be idempotent and race-safe) and
 * run the statement again; with createTable off, a fatal error naming the migration to run.
 */
export async function withStateColumn<T>(
  step: Step,
  column: { missing(error: unknown): boolean; migrate(): Promise<void>; createTable: boolean; missingError(): Error },
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!column.missing(error)) throw error;
    if (!column.createTable) throw Object.assign(column.missingError(), { cause: error });
    await column.migrate();
    step();
    return work();
  }
}
