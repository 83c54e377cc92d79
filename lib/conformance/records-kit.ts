// What the shared-records cases (records.cases.ts, records-lease.cases.ts) are built from: a store
// that must declare the capability, and the two calls with a bounded signal.
import assert from 'node:assert/strict';
import { type RecordCapableStore, supportsRecords } from '../stores/lease-store.capabilities.js';
import type { SharedRecord } from '../stores/lease-store.js';
import { conformanceMessages as messages } from './conformance.messages.js';
import type { ConformanceCase } from './conformance.types.js';
import { callSignal, defineCase, FAST_TIMEOUT_MS, type Scope, type Target } from './conformance-kit.js';

export async function recordStore(s: Scope): Promise<RecordCapableStore> {
  const store = await s.newStore();
  assert.ok(supportsRecords(store), `${store.name} does not declare readRecord and writeRecord`);
  return store;
}

export function recordStores(s: Scope, count: number): Promise<RecordCapableStore[]> {
  return Promise.all(Array.from({ length: count }, () => recordStore(s)));
}

export const readRecord = (store: RecordCapableStore, election: string, key: string) =>
  store.readRecord(election, key, { signal: callSignal() });

export const writeRecord = (
  store: RecordCapableStore,
  election: string,
  key: string,
  value: unknown,
  ifVersion: string | null,
) => store.writeRecord(election, key, value, { ifVersion, signal: callSignal() });

/** The version of a record that must exist. */
export async function versionOf(store: RecordCapableStore, election: string, key: string): Promise<string> {
  const record: SharedRecord | undefined = await readRecord(store, election, key);
  assert.ok(record, `record "${key}" of "${election}" is missing`);
  return record.version;
}

/** Defines `shared records: <name>` cases, skipped unless the options declare `records`. */
export function recordDefine(t: Target, skipReason?: string) {
  const reason = t.records ? skipReason : messages.noCapability('shared records (readRecord/writeRecord)');
  const more = reason === undefined ? {} : { skipReason: reason };
  return (name: string, body: (s: Scope) => Promise<void>, timeoutMs = FAST_TIMEOUT_MS): ConformanceCase =>
    defineCase(t, `shared records: ${name}`, timeoutMs, body, more);
}
