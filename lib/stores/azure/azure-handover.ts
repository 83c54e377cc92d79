import type { BlockBlobClient, ContainerClient } from '@azure/storage-blob';
import { decodeHandoverRequest, encodeHandoverRequest } from '../handover-support.js';
import type { CallOptions, HandoverRequest } from '../lease-store.js';
import { isReplicaRequest, spreadRequestYields } from '../lease-store.spread-rule.js';
import type { StoreCallKit } from '../store-support.js';
import type { AzureBlobs } from './azure-blobs.js';
import { type AzureOperation, codeOf, isAlreadyThere, isMissing, statusOf } from './azure-errors.js';
import { downloadText, onBlob, putJson } from './azure-json-blobs.js';

// Handover requests of AzureBlobLeaseStore live in a side blob beside the lease blob,
// `<prefix><election>~handover`, never leased: a follower cannot write the leased blob (its
// metadata or content) and a request must reach the leader from anyone. `~` is outside the
// election alphabet ([A-Za-z0-9._-]), so no election's lease blob can be named like a side blob.
// Previous versions never look at it; it costs the leader one GET per renewal (404 while none).

const SIDE_BLOB_SUFFIX = '~handover';

/** The store's handover calls on the side blob, each bounded by its signal and its failures classified. */
export class AzureHandoverRequests {
  constructor(
    private readonly store: string,
    private readonly blobs: AzureBlobs,
    private readonly calls: Pick<StoreCallKit, 'run'>,
  ) {}

  /** Async, so a malformed request rejects like any other failure (never throws at the call). */
  async request(request: HandoverRequest, options: CallOptions): Promise<boolean> {
    const json = encodeHandoverRequest(this.store, request);
    return this.onSideBlob(request.election, 'request handover', options.signal, async (blob, signal) => {
      const container = await this.blobs.client;
      if (isReplicaRequest(request.reason)) return putSpreadRequest(container, blob, request, json, signal);
      await putJson(container, blob, json, signal);
      return true;
    });
  }

  read(election: string, options: CallOptions): Promise<HandoverRequest | undefined> {
    return this.onSideBlob(
      election,
      'read handover',
      options.signal,
      async (blob, signal) => (await getRequest(blob, signal))?.request,
    );
  }

  clear(election: string, id: string, options: CallOptions): Promise<void> {
    return this.onSideBlob(election, 'clear handover', options.signal, (blob, signal) =>
      deleteRequest(blob, id, signal),
    );
  }

  private onSideBlob<T>(
    election: string,
    operation: AzureOperation,
    signal: AbortSignal,
    work: (blob: BlockBlobClient, signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    return onBlob(this.calls, this.blobs, { election, suffix: SIDE_BLOB_SUFFIX, operation }, signal, work);
  }
}

/**
 * A replica's own request (spread, priority) under the slot rule ({@link spreadRequestYields}):
 * read the pending request, then put only over the version read (ifMatch its ETag; ifNoneMatch *
 * while there is none). A write landing in between fails the condition, and the rule is judged
 * again on what it wrote.
 * → true written, false refused.
 */
export async function putSpreadRequest(
  container: ContainerClient,
  blob: BlockBlobClient,
  request: HandoverRequest,
  json: string,
  abortSignal: AbortSignal,
): Promise<boolean> {
  for (;;) {
    const current = await getRequest(blob, abortSignal);
    if (spreadRequestYields(current?.request, request)) return false;
    const conditions = current?.etag === undefined ? { ifNoneMatch: '*' } : { ifMatch: current.etag };
    try {
      await putJson(container, blob, json, abortSignal, conditions);
      return true;
    } catch (error) {
      if (!isAlreadyThere(error)) throw error;
    }
  }
}

/** The pending request and the ETag of the version it was read from; undefined when there is none. */
async function getRequest(
  blob: BlockBlobClient,
  abortSignal: AbortSignal,
): Promise<{ request?: HandoverRequest; etag?: string } | undefined> {
  const current = await downloadText(blob, abortSignal);
  return current && { request: decodeHandoverRequest(current.text), etag: current.etag };
}

/**
 * Removes the request whose id is `id`: a read, then a delete conditional on the ETag of the version
 * read, so a newer request recorded in between (412) is kept. Gone already: nothing to do.
 */
async function deleteRequest(blob: BlockBlobClient, id: string, abortSignal: AbortSignal): Promise<void> {
  const current = await getRequest(blob, abortSignal);
  if (current?.request?.id !== id || current.etag === undefined) return;
  try {
    await blob.delete({ abortSignal, conditions: { ifMatch: current.etag } });
  } catch (error) {
    if (isMissing(error) || (statusOf(error) === 412 && codeOf(error) === 'ConditionNotMet')) return;
    throw error;
  }
}

/** Election names in the container under `prefix`: lease blobs and side blobs, nested prefixes left out. */
export async function listElectionNames(
  container: ContainerClient,
  prefix: string,
  abortSignal: AbortSignal,
): Promise<string[]> {
  const names = new Set<string>();
  try {
    for await (const item of container.listBlobsFlat({ prefix, abortSignal })) {
      const rest = item.name.slice(prefix.length);
      // Election names have no '/': such a blob belongs to another prefix (e.g. `tenant-a/` under '').
      if (rest === '' || rest.includes('/')) continue;
      names.add(rest.endsWith(SIDE_BLOB_SUFFIX) ? rest.slice(0, -SIDE_BLOB_SUFFIX.length) : rest);
    }
  } catch (error) {
    if (codeOf(error) === 'ContainerNotFound') return [];
    throw error;
  }
  return [...names].filter((name) => name !== '').sort();
}
