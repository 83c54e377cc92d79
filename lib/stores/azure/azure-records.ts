import type { BlockBlobClient } from '@azure/storage-blob';
import { FatalLeaseStoreError } from '../../shared/errors.js';
import type { CallOptions, RecordWriteOptions, SharedRecord } from '../lease-store.js';
import { prepareRecordWrite, recordKey } from '../record-support.js';
import { storeMessages as messages } from '../store.messages.js';
import type { StoreCallKit } from '../store-support.js';
import type { AzureBlobs } from './azure-blobs.js';
import { type AzureOperation, isAlreadyThere, isMissing } from './azure-errors.js';
import { downloadText, onBlob, putJson } from './azure-json-blobs.js';

// Shared records of AzureBlobLeaseStore: one blob per record, `<prefix><election>~records/<key>`,
// never leased, holding the value's JSON. Not the lease blob: only the lease holder may write that
// one, and any replica must be able to write a record. The compare-and-set is the service's own:
// the version is the blob's ETag, and a Put Blob carries `If-Match: <etag>` (or `If-None-Match: *`
// to create), so the service refuses a write over anything but the version read (412 / 409).
// `~` is outside the election alphabet, so no lease blob is named like a record; the `/` keeps
// record blobs out of `listElections` (it skips nested names) and groups an election's records
// under one virtual folder in a storage browser. Previous versions never look at these blobs.

const RECORDS_FOLDER = '~records/';
/** An HTTP entity tag as the service sends it (RFC 9110 `"…"`): anything else matches no blob. */
const ETAG = /^"[\x21\x23-\x7e]*"$/;

/** The store's record calls, each bounded by its signal and its failures classified. */
export class AzureSharedRecords {
  constructor(
    private readonly store: string,
    private readonly blobs: AzureBlobs,
    private readonly calls: Pick<StoreCallKit, 'run'>,
  ) {}

  /** Async, so an invalid key rejects like any other failure (never throws at the call). */
  async read(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined> {
    const checked = recordKey(key);
    return this.onRecordBlob(election, checked, 'read record', options.signal, async (blob, abortSignal) => {
      // The blob or the whole container missing: no record (an election nobody ever used included).
      const current = await downloadText(blob, abortSignal);
      if (current === undefined) return undefined;
      const corrupt = () => new FatalLeaseStoreError(messages.records.corrupt(this.store, election, checked));
      if (current.etag === undefined || !ETAG.test(current.etag)) throw corrupt();
      try {
        return { value: JSON.parse(current.text), version: current.etag };
      } catch {
        throw corrupt();
      }
    });
  }

  async write(election: string, key: string, value: unknown, options: RecordWriteOptions): Promise<boolean> {
    const write = prepareRecordWrite({ name: this.store }, key, value, options);
    return this.onRecordBlob(election, write.key, 'write record', options.signal, async (blob, abortSignal) => {
      // A version this store never handed out cannot be the record's ETag: refused without a request.
      if (write.ifVersion !== null && !ETAG.test(write.ifVersion)) return false;
      const conditions = write.ifVersion === null ? { ifNoneMatch: '*' } : { ifMatch: write.ifVersion };
      try {
        // Only a create makes a missing container: a replace there has nothing to match.
        const container = write.ifVersion === null ? await this.blobs.client : undefined;
        await putJson(container, blob, write.json, abortSignal, conditions);
        return true;
      } catch (error) {
        // 412 ConditionNotMet (If-Match), 409 BlobAlreadyExists (If-None-Match: *): someone wrote
        // first; 404 under If-Match: the record is gone (deleted by hand), nothing to match.
        if (isAlreadyThere(error) || (write.ifVersion !== null && isMissing(error))) return false;
        throw error;
      }
    });
  }

  private onRecordBlob<T>(
    election: string,
    key: string,
    operation: AzureOperation,
    signal: AbortSignal,
    work: (blob: BlockBlobClient, signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    return onBlob(this.calls, this.blobs, { election, suffix: RECORDS_FOLDER + key, operation }, signal, work);
  }
}
