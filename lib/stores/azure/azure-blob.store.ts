import type { BlobGetPropertiesResponse } from '@azure/storage-blob';
import { LeaseLostError, TransientLeaseStoreError, toLeaseStoreError } from '../../shared/errors.js';
import { encodeLeaseMeta, releaseReservation } from '../handover-support.js';
import type {
  AcquireRequest,
  AcquireResult,
  CallOptions,
  HandoverRequest,
  LeaderStateEntry,
  Lease,
  LeaseInfo,
  LeaseStore,
  LeaseStoreLimits,
  RecordWriteOptions,
  ReleaseOptions,
  RenewOptions,
  SharedRecord,
  StateCallOptions,
} from '../lease-store.js';
import { decodeStateEntry, prepareStateWrite, stateKey } from '../state-support.js';
import { storeMessages } from '../store.messages.js';
import { StoreCallKit } from '../store-support.js';
import { azureMessages } from './azure.messages.js';
import { AzureBlobs } from './azure-blobs.js';
import { type AzureBlobLeaseStoreOptions, azureReadEvery } from './azure-client.js';
import { isLeaseConflict, isMissing, statusOf, summarize } from './azure-errors.js';
import { AzureHandoverRequests, listElectionNames } from './azure-handover.js';
import { BrokenLeases, createBlob, heldBy, leaseSeconds } from './azure-lease.js';
import {
  holderMetadata,
  holderOf,
  metaOf,
  reservationOf,
  termOf,
  WrittenMetadata,
  withMeta,
  withReservation,
} from './azure-metadata.js';
import { AzureSharedRecords } from './azure-records.js';
import { readStateBlob, writeStateBlob } from './azure-state.js';

export type { AzureBlobCredential, AzureBlobLeaseStoreOptions } from './azure-client.js';
export { type AzureAuthKind, type AzureErrorContext, type AzureOperation, classifyAzureError } from './azure-errors.js';

/**
 * Leases as Azure Blob leases: one blob per election, whose native lease (15–60 s, kept by the
 * service's clock) is the leadership. The blob's metadata carries the fencing `term` (bumped under
 * the new lease on every acquisition), the `holder` identity and meta, so others can read who
 * leads, and a directed handover's reservation (see azure-metadata.ts).
 *
 * Leader state is the blob's content (azure-state.ts), uploaded with the lease-id condition. Handover
 * requests and shared records live in side blobs anyone may write (azure-handover.ts, azure-records.ts:
 * a record's version is its blob's ETag); a renewal cannot bring them back, so the leader reads them
 * every `readEveryNthRenewal` renewals. Every call is bounded by its AbortSignal, with a single try.
 */
export class AzureBlobLeaseStore implements LeaseStore {
  readonly name = 'AzureBlobLeaseStore';
  readonly limits: LeaseStoreLimits = {
    minLeaseDurationMs: 15_000,
    maxLeaseDurationMs: 60_000,
    leaseDurationStepMs: 1_000,
    reason: azureMessages.leaseDurationReason,
  };
  /** Name of the container holding the lease blobs. */
  readonly container: string;
  /** Each read beside a renewal is a billed request: every Nth renewal (the option, default 4). */
  readonly readEveryNthRenewal: number;

  private readonly blobs: AzureBlobs;
  private readonly broken = new BrokenLeases();
  private readonly written = new WrittenMetadata();
  // Each call classifies its own failures (they name the operation); the fallback is for the rest.
  private readonly calls = new StoreCallKit({ name: this.name, classify: toLeaseStoreError });
  private readonly requests: AzureHandoverRequests;
  private readonly records: AzureSharedRecords;

  constructor(options: AzureBlobLeaseStoreOptions) {
    this.readEveryNthRenewal = azureReadEvery(options);
    this.blobs = new AzureBlobs(options);
    this.container = this.blobs.container;
    this.requests = new AzureHandoverRequests(this.name, this.blobs, this.calls);
    this.records = new AzureSharedRecords(this.name, this.blobs, this.calls);
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, signal } = request;
    // Checked before anything is sent: a wrong duration is a configuration error, not an outcome.
    const seconds = leaseSeconds(request.leaseDurationMs);
    const meta = encodeLeaseMeta(this.name, request.meta);
    return this.calls.acquire(request, {
      attempt: async (leaseId, step) => {
        const blob = await this.blobs.blob(election);
        // One read says whether the lease is free and, when it is not, who holds it: a follower
        // polling a held lease pays one request, and sends the acquire only when it can succeed.
        let properties: BlobGetPropertiesResponse | undefined;
        try {
          properties = await blob.getProperties({ abortSignal: signal });
        } catch (error) {
          if (!isMissing(error)) throw this.blobs.classify(error, 'read', election, signal);
        }
        const held = properties && this.broken.heldNow(blob.name, properties, request.leaseDurationMs);
        if (held) return held;
        // Free but reserved for another identity by a directed handover: refused without a request.
        const reserved = properties && reservationOf(properties);
        if (reserved && reserved.to !== identity) {
          const term = termOf(properties?.metadata);
          return { acquired: false, term, reservedFor: reserved.to, expiresInMs: reserved.inMs };
        }
        step();
        const leaseClient = blob.getBlobLeaseClient(leaseId);
        try {
          try {
            await leaseClient.acquireLease(seconds, { abortSignal: signal });
          } catch (error) {
            if (!isMissing(error)) throw error;
            await createBlob(this.blobs.client, blob, signal);
            await leaseClient.acquireLease(seconds, { abortSignal: signal });
          }
        } catch (error) {
          if (isLeaseConflict(error)) return heldBy(this, election, signal);
          throw this.blobs.classify(error, 'acquire', election, signal);
        }
        // The lease is ours; record a term greater than any before it. Only our lease can write
        // the blob now, and ifMatch makes sure the term we read is the one we overwrite. Should
        // that fail, the shared acquire rule gives the lease back: no lease without a fresh term.
        try {
          const leased = await blob.getProperties({ abortSignal: signal, conditions: { leaseId } });
          const term = termOf(leased.metadata) + 1;
          // The meta is written with the term, and any reservation (ours, or a stale one) cleared.
          const metadata = holderMetadata(leased.metadata, term, identity, meta);
          await blob.setMetadata(metadata, { abortSignal: signal, conditions: { leaseId, ifMatch: leased.etag } });
          this.broken.forget(blob.name);
          this.written.recorded(leaseId, metadata, meta);
          return { acquired: true, lease: { election, holder: identity, leaseId, term } };
        } catch (error) {
          const cause = this.blobs.classify(error, 'record term', election, signal);
          if (cause.kind !== 'transient') throw cause;
          throw new TransientLeaseStoreError(azureMessages.termNotWritten(election, cause.message), {
            cause: cause.cause,
          });
        }
      },
      releaseAttempt: (leaseId, abortSignal) =>
        this.calls.run(abortSignal, async () =>
          (await this.blobs.blob(election)).getBlobLeaseClient(leaseId).releaseLease({ abortSignal }),
        ),
    });
  }

  /** Azure renews for the duration given at acquire; `leaseDurationMs` is the same by contract. */
  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const { signal } = options;
    const meta = encodeLeaseMeta(this.name, options.meta);
    try {
      await this.calls.run(signal, async (step) => {
        const blob = await this.blobs.blob(lease.election);
        let renewed: string | undefined;
        try {
          renewed = (await blob.getBlobLeaseClient(lease.leaseId).renewLease({ abortSignal: signal })).leaseId;
        } catch (error) {
          if (isLeaseConflict(error) || isMissing(error) || statusOf(error) === 412) {
            throw new LeaseLostError(storeMessages.leaseLost(lease.election), { cause: summarize(error) });
          }
          throw this.blobs.classify(error, 'renew', lease.election, signal);
        }
        // Azurite renews an *expired* lease whatever id the request carries and answers with the id of
        // the lease it renewed: success under another id means the lease is not ours.
        if (renewed !== lease.leaseId) throw new LeaseLostError(azureMessages.renewedForeignLease(lease.election));
        // Unchanged meta costs nothing: a leader's renewal stays one request.
        if (meta === undefined || meta === this.written.metaOf(lease.leaseId)) return;
        step();
        try {
          await this.written.rewrite(blob, lease, signal, (metadata) => withMeta(metadata, meta, lease.term), meta);
        } catch (error) {
          const cause = this.blobs.classify(error, 'record meta', lease.election, signal);
          // The lease is renewed either way; the meta, still unrecorded, is written at the next renewal.
          if (cause.kind !== 'transient') throw cause;
        }
      });
    } catch (error) {
      if (error instanceof LeaseLostError) this.written.forget(lease.leaseId);
      throw error;
    }
  }

  async release(lease: Lease, options: ReleaseOptions): Promise<void> {
    const { signal } = options;
    const reservation = releaseReservation(options, this.limits);
    await this.calls.run(signal, async (step) => {
      const blob = await this.blobs.blob(lease.election);
      if (reservation) {
        // Written under our lease just before the release: followers see it as soon as it is free.
        try {
          await this.written.rewrite(blob, lease, signal, (metadata) =>
            withReservation(metadata, reservation, lease.term),
          );
        } catch (error) {
          // Not ours any more: a release changes nothing, so no reservation either.
          if (error instanceof LeaseLostError) {
            this.written.forget(lease.leaseId);
            return;
          }
          throw this.blobs.classify(error, 'release', lease.election, signal);
        }
        step();
      }
      this.written.forget(lease.leaseId);
      const leaseClient = blob.getBlobLeaseClient(lease.leaseId);
      try {
        await leaseClient.releaseLease({ abortSignal: signal });
      } catch (error) {
        // Not ours any more (taken, released, expired and re-leased, blob gone): nothing to give back.
        if (isLeaseConflict(error) || isMissing(error) || statusOf(error) === 412) return;
        throw this.blobs.classify(error, 'release', lease.election, signal);
      }
    });
  }

  read(election: string, options: CallOptions): Promise<LeaseInfo> {
    const { signal } = options;
    return this.calls.run(signal, async (): Promise<LeaseInfo> => {
      const blob = await this.blobs.blob(election);
      let properties: BlobGetPropertiesResponse;
      try {
        properties = await blob.getProperties({ abortSignal: signal });
      } catch (error) {
        if (isMissing(error)) return { held: false, term: 0 };
        throw this.blobs.classify(error, 'read', election, signal);
      }
      const term = termOf(properties.metadata);
      // 'locked' covers 'leased' and 'breaking': in both an acquire is refused, so both count as held.
      if (properties.leaseStatus !== 'locked') {
        const reserved = reservationOf(properties);
        return reserved ? { held: false, term, reservedFor: reserved.to } : { held: false, term };
      }
      return { held: true, holder: holderOf(properties.metadata), term, ...metaOf(properties.metadata) };
    });
  }

  readonly conditionalSpreadRequests = true;

  requestHandover(request: HandoverRequest, options: CallOptions): Promise<boolean> {
    return this.requests.request(request, options);
  }

  readHandover(election: string, options: CallOptions): Promise<HandoverRequest | undefined> {
    return this.requests.read(election, options);
  }

  clearHandover(election: string, id: string, options: CallOptions): Promise<void> {
    return this.requests.clear(election, id, options);
  }

  listElections(options: CallOptions): Promise<string[]> {
    const { signal } = options;
    return this.calls.run(signal, async () => {
      try {
        return await listElectionNames(await this.blobs.client, this.blobs.prefix, signal);
      } catch (error) {
        throw this.blobs.classify(error, 'list elections', '*', signal);
      }
    });
  }

  async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const write = prepareStateWrite(this, lease, value, options);
    const { signal } = options;
    await this.calls.run(signal, async (step) =>
      writeStateBlob(await this.blobs.blob(lease.election), lease, write, signal, step, (error) =>
        this.blobs.classify(error, 'write state', lease.election, signal),
      ),
    );
  }

  async readState(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    const key = stateKey(options);
    const { signal } = options;
    const map = await this.calls.run(signal, async () =>
      readStateBlob(await this.blobs.blob(election), signal, (error) =>
        this.blobs.classify(error, 'read state', election, signal),
      ),
    );
    const entry = map?.[key];
    return entry === undefined ? undefined : decodeStateEntry(this.name, election, key, entry);
  }

  readRecord(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined> {
    return this.records.read(election, key, options);
  }

  writeRecord(election: string, key: string, value: unknown, options: RecordWriteOptions): Promise<boolean> {
    return this.records.write(election, key, value, options);
  }

  /** HTTP needs no teardown: waits for the give-backs of acquires of unknown outcome (store stays usable). Idempotent. */
  close(): Promise<void> {
    return this.calls.settlePending();
  }
}
