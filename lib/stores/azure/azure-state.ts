import type { BlockBlobClient } from '@azure/storage-blob';
import { FatalLeaseStoreError, type LeaseStoreError } from '../../shared/errors.js';
import type { Lease } from '../lease-store.js';
import { type PreparedStateWrite, stateLostError } from '../state-support.js';
import { storeMessages as messages } from '../store.messages.js';
import type { Step } from '../store-support.js';
import { codeOf, isLeaseConflict, isMissing, statusOf } from './azure-errors.js';
import { downloadText } from './azure-json-blobs.js';

// Leader state of AzureBlobLeaseStore: the leased blob's content, a JSON object
// `{ [key]: { value, term } }`. Why the blob itself and not a second blob: Put Blob on a leased
// blob succeeds only with the active lease id, so the service — by its own clock — refuses the
// write of anyone whose lease expired or was taken, the fence the contract asks for. A second blob
// could only be guarded by an etag, which a paused ex-leader could still match.
//
// Put Blob replaces the blob's metadata, where the fencing term and the holder live: every write
// re-sends the metadata it read, and `ifMatch` on that read's etag guarantees nothing (a term, an
// other key) changed in between. A lost `ifMatch` race — two keys written at once by the same
// leader — reads again and retries; a lease condition failure is LeaseLostError.

type StateMap = Record<string, unknown>;

interface StateBlob {
  map: StateMap;
  etag?: string;
  metadata?: Record<string, string>;
}

export type Classify = (error: unknown) => LeaseStoreError;

/**
 * Writes `write` into the blob's state map under `lease` (one conditional Put Blob per attempt).
 * Rejects with LeaseLostError when the service says the lease is not ours.
 */
export async function writeStateBlob(
  blob: BlockBlobClient,
  lease: Lease,
  write: PreparedStateWrite,
  signal: AbortSignal,
  step: Step,
  classify: Classify,
): Promise<void> {
  const conditions = { leaseId: lease.leaseId };
  for (;;) {
    step();
    let current: StateBlob | undefined;
    try {
      current = await download(blob, signal, conditions);
    } catch (error) {
      throw leaseFailure(error, lease) ?? classify(error);
    }
    // A held lease needs its blob: gone means the lease is gone with it.
    if (!current) throw stateLostError(lease);
    const map = { ...current.map, [write.key]: { value: JSON.parse(write.json), term: lease.term } };
    const body = JSON.stringify(map);
    step();
    try {
      await blob.upload(body, Buffer.byteLength(body), {
        abortSignal: signal,
        conditions: { ...conditions, ifMatch: current.etag },
        metadata: current.metadata,
        blobHTTPHeaders: { blobContentType: 'application/json' },
      });
      return;
    } catch (error) {
      // Changed since we read it, under our own lease: another write of ours. Read it again.
      if (codeOf(error) === 'ConditionNotMet') continue;
      throw leaseFailure(error, lease) ?? classify(error);
    }
  }
}

/** The state map of `election`'s blob; undefined when the blob does not exist. */
export async function readStateBlob(
  blob: BlockBlobClient,
  signal: AbortSignal,
  classify: Classify,
): Promise<StateMap | undefined> {
  try {
    return (await download(blob, signal))?.map;
  } catch (error) {
    throw classify(error);
  }
}

async function download(
  blob: BlockBlobClient,
  abortSignal: AbortSignal,
  conditions?: { leaseId: string },
): Promise<StateBlob | undefined> {
  const current = await downloadText(blob, abortSignal, conditions);
  return current && { map: parseMap(current.text, blob.name), etag: current.etag, metadata: current.metadata };
}

/** Empty content is a blob made by createBlob or by a version before leader state: no state yet. */
function parseMap(text: string, blobName: string): StateMap {
  if (text === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new FatalLeaseStoreError(messages.state.corrupt('AzureBlobLeaseStore', blobName, '*'));
  }
  return parsed as StateMap;
}

/** A lease condition the service refused (412 lease codes, lease conflicts, blob gone): lost. */
function leaseFailure(error: unknown, lease: Lease): LeaseStoreError | undefined {
  if (isLeaseConflict(error) || isMissing(error) || (statusOf(error) === 412 && codeOf(error) !== 'ConditionNotMet')) {
    return stateLostError(lease);
  }
  return undefined;
}
