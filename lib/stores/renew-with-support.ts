import { decodeHandoverRequest } from './handover-support.js';
import type { Lease, LeaseStore, RenewWithOptions, RenewWithReply, SharedRecord } from './lease-store.js';
import { decodeRecord, recordKey } from './record-support.js';
import { type PreparedStateWrite, prepareStateWrite } from './state-support.js';
import { storeMessages as messages } from './store.messages.js';

/**
 * The folded renewal (`renewWith`), shared by every store that offers it: what a call asks checked
 * before anything is sent (state writes prepared as `writeState` would, record keys, no key twice),
 * and the reply built with exactly what was asked. How a store folds it into one round trip is its
 * own protocol.
 */

/** A `renewWith` call's extras, checked: the state writes prepared, the record keys validated. */
export interface PreparedRenewal {
  writes: PreparedStateWrite[];
  readHandover: boolean;
  recordKeys: string[];
}

/** What the store offers, for the checks: a missing capability's option is a TypeError, not ignored. */
interface Offers {
  state: boolean;
  handover: boolean;
  records: boolean;
}

/** Throws TypeError or RangeError (as writeState, readRecord would) before anything is sent. */
export function prepareRenewal(
  store: Pick<LeaseStore, 'name' | 'limits'>,
  offers: Offers,
  lease: Lease,
  options: RenewWithOptions,
): PreparedRenewal {
  const writes = (options.writeState ?? []).map((write) =>
    prepareStateWrite(store, lease, write.value, { key: write.key, signal: options.signal }),
  );
  const recordKeys = (options.readRecords ?? []).map((key) => recordKey(key));
  const readHandover = options.readHandover === true;
  if (writes.length > 0 && !offers.state) notOffered(store, 'writeState', 'leader-state');
  if (readHandover && !offers.handover) notOffered(store, 'readHandover', 'handover');
  if (recordKeys.length > 0 && !offers.records) notOffered(store, 'readRecords', 'shared-records');
  distinct(
    'writeState',
    writes.map((write) => write.key),
  );
  distinct('readRecords', recordKeys);
  return { writes, readHandover, recordKeys };
}

/** The reply: `handover` only when asked, `records` (every asked key, null when absent) only when asked. */
export function renewalReply(
  asked: PreparedRenewal,
  handover: () => RenewWithReply['handover'],
  record: (key: string) => SharedRecord | null | undefined,
): RenewWithReply {
  const reply: RenewWithReply = {};
  if (asked.readHandover) reply.handover = handover() ?? null;
  if (asked.recordKeys.length > 0) {
    reply.records = Object.fromEntries(asked.recordKeys.map((key) => [key, record(key) ?? null]));
  }
  return reply;
}

/**
 * {@link renewalReply} for a store that keeps the library's envelopes (SQL, Redis): the pending
 * request as `readHandover` decodes it, each record's `{ value, version }` as `readRecord` does
 * (null or undefined: absent).
 */
export function renewalReplyOf(
  store: Pick<LeaseStore, 'name'>,
  election: string,
  asked: PreparedRenewal,
  handover: unknown,
  record: (key: string) => unknown,
): RenewWithReply {
  return renewalReply(
    asked,
    () => decodeHandoverRequest(handover),
    (key) => {
      const raw = record(key);
      return raw == null ? null : decodeRecord(store.name, election, key, raw);
    },
  );
}

function notOffered(store: Pick<LeaseStore, 'name'>, option: string, capability: string): never {
  throw new TypeError(messages.renewWith.notOffered(store.name, option, capability));
}

function distinct(what: string, keys: string[]): void {
  const seen = new Set<string>();
  for (const key of keys) {
    if (seen.has(key)) throw new TypeError(messages.renewWith.duplicateKey(what, key));
    seen.add(key);
  }
}
