import { FatalLeaseStoreError } from '../shared/errors.js';
import { MAX_SHARED_RECORD_BYTES, type RecordWriteOptions, type SharedRecord } from './lease-store.calls.js';
import type { LeaseStore } from './lease-store.js';
import { parseEnvelope } from './state-support.js';
import { storeMessages as messages } from './store.messages.js';

/**
 * Shared records (`readRecord`/`writeRecord`), shared by every store that offers them: the key and
 * size rules, the condition's check and the JSON envelope `{ value, version }` for stores that keep a
 * record as one string. How a store makes the compare-and-set atomic is its own protocol.
 */

/** Safe as a Redis hash field, an etcd key segment, a blob name segment and a SQL JSON path member. */
const RECORD_KEY = /^[A-Za-z0-9._:-]{1,200}$/;

/** The validated key of a record call; throws TypeError naming the rule. */
export function recordKey(key: unknown): string {
  if (typeof key !== 'string' || !RECORD_KEY.test(key)) throw new TypeError(messages.records.invalidKey(key));
  return key;
}

export interface RecordWrite {
  key: string;
  /** The value's JSON (what the size limit counts). */
  json: string;
  /** The condition: a version string, or null for "only if absent". */
  ifVersion: string | null;
}

/**
 * Checks a write before anything is sent: the key, the condition, that the value is JSON and its
 * size (UTF-8 bytes of the value's JSON, at most {@link MAX_SHARED_RECORD_BYTES}). Throws TypeError
 * or RangeError.
 */
export function prepareRecordWrite(
  store: Pick<LeaseStore, 'name'>,
  key: string,
  value: unknown,
  options: Pick<RecordWriteOptions, 'ifVersion'>,
): RecordWrite {
  const checkedKey = recordKey(key);
  const ifVersion = options?.ifVersion;
  if (ifVersion !== null && (typeof ifVersion !== 'string' || ifVersion.length === 0)) {
    throw new TypeError(messages.records.invalidVersion(ifVersion));
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(
      messages.records.notSerialisable(store.name, error instanceof Error ? error.message : 'throws'),
    );
  }
  if (json === undefined) throw new TypeError(messages.records.notSerialisable(store.name, typeof value));
  // Cheap bound first: a UTF-16 unit is at most 3 UTF-8 bytes, so short strings need no count.
  const bytes = json.length * 3 <= MAX_SHARED_RECORD_BYTES ? json.length : Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_SHARED_RECORD_BYTES) {
    throw new RangeError(messages.records.tooLarge(store.name, bytes, MAX_SHARED_RECORD_BYTES));
  }
  return { key: checkedKey, json, ifVersion };
}

/** The stored envelope `{"value":…,"version":"…"}` as one JSON string. */
export function encodeRecord(json: string, version: string): string {
  return `{"value":${json},"version":${JSON.stringify(version)}}`;
}

/** Reads a stored envelope (a JSON string or a parsed object); anything else is reported as corrupt. */
export function decodeRecord(store: string, election: string, key: string, stored: unknown): SharedRecord {
  const entry = parseEnvelope(stored);
  const { version } = (entry ?? {}) as Partial<SharedRecord>;
  if (typeof entry !== 'object' || entry === null || !('value' in entry) || typeof version !== 'string') {
    throw new FatalLeaseStoreError(messages.records.corrupt(store, election, key));
  }
  return { value: (entry as SharedRecord).value, version };
}
