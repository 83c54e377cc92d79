import type { BlobGetPropertiesResponse, BlockBlobClient, ContainerClient } from '@azure/storage-blob';
import { messages } from '../../leader-election.messages.js';
import {
  type AcquireRequest,
  type AcquireResult,
  type CallOptions,
  FatalLeaseStoreError,
  type LeaderStateEntry,
  type Lease,
  type LeaseInfo,
  LeaseLostError,
  type LeaseStore,
  type LeaseStoreError,
  type LeaseStoreLimits,
  type RenewOptions,
  type StateCallOptions,
  TransientLeaseStoreError,
  toLeaseStoreError,
} from '../lease-store.js';
import { decodeStateEntry, prepareStateWrite, stateKey } from '../state-support.js';
import { StoreCalls } from '../store-support.js';
import { type AzureBlobLeaseStoreOptions, azureContainerClient, loadContainerClient } from './azure-client.js';
import {
  type AzureAuthKind,
  type AzureOperation,
  classifyAzureError,
  codeOf,
  isAlreadyThere,
  isLeaseConflict,
  isMissing,
  statusOf,
  summarize,
} from './azure-errors.js';
import { readStateBlob, writeStateBlob } from './azure-state.js';

export type { AzureBlobCredential, AzureBlobLeaseStoreOptions } from './azure-client.js';
export { type AzureAuthKind, type AzureErrorContext, type AzureOperation, classifyAzureError } from './azure-errors.js';

type BlobProperties = BlobGetPropertiesResponse;

const TERM_KEY = 'term';
const HOLDER_KEY = 'holder';

/**
 * Leases as Azure Blob leases: one blob per election, whose native lease (15–60 s, kept by the
 * service's clock) is the leadership. The blob's metadata carries the fencing `term` (bumped under
 * the new lease on every acquisition) and the `holder` identity, so others can read who leads.
 *
 * Leader state is the blob's content (see azure-state.ts), uploaded with the lease-id condition.
 *
 * Every call is bounded by its AbortSignal and makes a single try (no SDK retries).
 */
export class AzureBlobLeaseStore implements LeaseStore {
  readonly name = 'AzureBlobLeaseStore';
  readonly limits: LeaseStoreLimits = {
    minLeaseDurationMs: 15_000,
    maxLeaseDurationMs: 60_000,
    leaseDurationStepMs: 1_000,
    reason: messages.azure.leaseDurationReason,
  };
  /** Name of the container holding the lease blobs. */
  readonly container: string;

  /** Built once the SDK is loaded (import started at construction, awaited by the first call). */
  private readonly containerClient: Promise<ContainerClient>;
  private readonly blobPrefix: string;
  /** Leases seen breaking or broken, per blob: under which term, and when first (monotonic ms). */
  private readonly brokenSeen = new Map<string, { term: number; since: number }>();
  private readonly authKind: AzureAuthKind;
  // Each call classifies its own failures (they name the operation); the fallback is for the rest.
  private readonly calls = new StoreCalls({ name: this.name, classify: toLeaseStoreError });

  constructor(options: AzureBlobLeaseStoreOptions) {
    const plan = azureContainerClient(options);
    ({ container: this.container, authKind: this.authKind, blobPrefix: this.blobPrefix } = plan);
    this.containerClient = loadContainerClient(plan);
    // Awaited (and its failure reported) by each call; this only keeps it from counting as unhandled.
    this.containerClient.catch(() => undefined);
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, signal } = request;
    // Checked before anything is sent: a wrong duration is a configuration error, not an outcome.
    const seconds = leaseSeconds(request.leaseDurationMs);
    return this.calls.acquire(request, {
      attempt: async (leaseId, step) => {
        const blob = await this.blob(election);
        // One read says whether the lease is free and, when it is not, who holds it: a follower
        // polling a held lease pays one request, and sends the acquire only when it can succeed.
        let properties: BlobProperties | undefined;
        try {
          properties = await blob.getProperties({ abortSignal: signal });
        } catch (error) {
          if (!isMissing(error)) throw this.classify(error, 'read', election, signal);
        }
        const held = properties && this.heldNow(blob.name, properties, request.leaseDurationMs);
        if (held) return held;
        step();
        const leaseClient = blob.getBlobLeaseClient(leaseId);
        try {
          try {
            await leaseClient.acquireLease(seconds, { abortSignal: signal });
          } catch (error) {
            if (!isMissing(error)) throw error;
            await this.createBlob(blob, signal);
            await leaseClient.acquireLease(seconds, { abortSignal: signal });
          }
        } catch (error) {
          if (isLeaseConflict(error)) return this.heldBy(election, signal);
          throw this.classify(error, 'acquire', election, signal);
        }
        // The lease is ours; record a term greater than any before it. Only our lease can write
        // the blob now, and ifMatch makes sure the term we read is the one we overwrite. Should
        // that fail, the shared acquire rule gives the lease back: no lease without a fresh term.
        try {
          const leased = await blob.getProperties({ abortSignal: signal, conditions: { leaseId } });
          const term = parseTerm(leased.metadata?.[TERM_KEY]) + 1;
          const metadata = { ...leased.metadata, [TERM_KEY]: String(term), [HOLDER_KEY]: encodeHolder(identity) };
          await blob.setMetadata(metadata, { abortSignal: signal, conditions: { leaseId, ifMatch: leased.etag } });
          this.brokenSeen.delete(blob.name);
          return { acquired: true, lease: { election, holder: identity, leaseId, term } };
        } catch (error) {
          const cause = this.classify(error, 'record term', election, signal);
          if (cause.kind !== 'transient') throw cause;
          throw new TransientLeaseStoreError(messages.azure.termNotWritten(election, cause.message), {
            cause: cause.cause,
          });
        }
      },
      releaseAttempt: (leaseId, abortSignal) =>
        this.calls.run(abortSignal, async () =>
          (await this.blob(election)).getBlobLeaseClient(leaseId).releaseLease({ abortSignal }),
        ),
    });
  }

  /** Azure renews for the duration given at acquire; `leaseDurationMs` is the same by contract. */
  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const { signal } = options;
    const renewed = await this.calls.run(signal, async () => {
      const leaseClient = (await this.blob(lease.election)).getBlobLeaseClient(lease.leaseId);
      try {
        return (await leaseClient.renewLease({ abortSignal: signal })).leaseId;
      } catch (error) {
        if (isLeaseConflict(error) || isMissing(error) || statusOf(error) === 412) {
          throw new LeaseLostError(messages.leaseLost(lease.election), { cause: summarize(error) });
        }
        throw this.classify(error, 'renew', lease.election, signal);
      }
    });
    // Azurite renews an *expired* lease whatever id the request carries and answers with the id of
    // the lease it renewed: success under another id means the lease is not ours.
    if (renewed !== lease.leaseId) throw new LeaseLostError(messages.azure.renewedForeignLease(lease.election));
  }

  async release(lease: Lease, options: CallOptions): Promise<void> {
    const { signal } = options;
    await this.calls.run(signal, async () => {
      const leaseClient = (await this.blob(lease.election)).getBlobLeaseClient(lease.leaseId);
      try {
        await leaseClient.releaseLease({ abortSignal: signal });
      } catch (error) {
        // Not ours any more (taken, released, expired and re-leased, blob gone): nothing to give back.
        if (isLeaseConflict(error) || isMissing(error) || statusOf(error) === 412) return;
        throw this.classify(error, 'release', lease.election, signal);
      }
    });
  }

  read(election: string, options: CallOptions): Promise<LeaseInfo> {
    const { signal } = options;
    return this.calls.run(signal, async (): Promise<LeaseInfo> => {
      const blob = await this.blob(election);
      let properties: BlobProperties;
      try {
        properties = await blob.getProperties({ abortSignal: signal });
      } catch (error) {
        if (isMissing(error)) return { held: false, term: 0 };
        throw this.classify(error, 'read', election, signal);
      }
      const term = parseTerm(properties.metadata?.[TERM_KEY]);
      // 'locked' covers 'leased' and 'breaking': in both an acquire is refused, so both count as held.
      if (properties.leaseStatus !== 'locked') return { held: false, term };
      return { held: true, holder: decodeHolder(properties.metadata?.[HOLDER_KEY]), term };
    });
  }

  async writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const write = prepareStateWrite(this, lease, value, options);
    const { signal } = options;
    await this.calls.run(signal, async (step) =>
      writeStateBlob(await this.blob(lease.election), lease, write, signal, step, (error) =>
        this.classify(error, 'write state', lease.election, signal),
      ),
    );
  }

  async readState(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    const key = stateKey(options);
    const { signal } = options;
    const map = await this.calls.run(signal, async () =>
      readStateBlob(await this.blob(election), signal, (error) => this.classify(error, 'read state', election, signal)),
    );
    const entry = map?.[key];
    return entry === undefined ? undefined : decodeStateEntry(this.name, election, key, entry);
  }

  /**
   * HTTP needs no teardown (keep-alive sockets close when idle): waits for the give-backs of
   * acquires of unknown outcome, and the store stays usable. Idempotent.
   */
  close(): Promise<void> {
    return this.calls.settlePending();
  }

  // ---- helpers --------------------------------------------------------------------------------

  private async blob(election: string): Promise<BlockBlobClient> {
    return (await this.containerClient).getBlockBlobClient(this.blobPrefix + election);
  }

  /**
   * "Held" when the read shows the lease taken (leased, or breaking: an acquire is refused in both).
   * A lease broken from outside (Break Lease, period 0) is free at once, but its holder learns it
   * only at its next renewal and acts until then, up to its renew deadline — counted from its last
   * renewal, which came before the break. So a broken lease counts as held for one lease duration
   * from when we first saw it breaking or broken (under that term): by then that deadline is past.
   * Undefined when an acquire may succeed.
   */
  private heldNow(blobName: string, properties: BlobProperties, leaseDurationMs: number): AcquireResult | undefined {
    const term = parseTerm(properties.metadata?.[TERM_KEY]);
    const held: AcquireResult = { acquired: false, holder: decodeHolder(properties.metadata?.[HOLDER_KEY]), term };
    const state = properties.leaseState;
    if (state !== 'broken' && state !== 'breaking') {
      this.brokenSeen.delete(blobName);
      return properties.leaseStatus === 'locked' ? held : undefined;
    }
    const now = performance.now();
    let seen = this.brokenSeen.get(blobName);
    if (seen?.term !== term) {
      seen = { term, since: now };
      this.brokenSeen.set(blobName, seen);
    }
    return state === 'breaking' || now - seen.since < leaseDurationMs ? held : undefined;
  }

  /** Creates the container and an empty blob when missing; losing either creation race is fine. */
  private async createBlob(blob: BlockBlobClient, abortSignal: AbortSignal): Promise<void> {
    const containerClient = await this.containerClient;
    // ifNoneMatch '*': never overwrite an existing blob, it carries the term.
    const upload = () => blob.upload('', 0, { abortSignal, conditions: { ifNoneMatch: '*' } });
    try {
      await upload();
      return;
    } catch (error) {
      if (isAlreadyThere(error)) return;
      if (codeOf(error) !== 'ContainerNotFound') throw error;
    }
    await containerClient.createIfNotExists({ abortSignal });
    try {
      await upload();
    } catch (error) {
      if (!isAlreadyThere(error)) throw error;
    }
  }

  private async heldBy(election: string, signal: AbortSignal): Promise<AcquireResult> {
    try {
      const info = await this.read(election, { signal });
      return { acquired: false, holder: info.holder, term: info.term };
    } catch {
      // Who holds it is a courtesy; failing to say must not turn "held" into an error.
      return { acquired: false };
    }
  }

  private classify(error: unknown, operation: AzureOperation, election: string, signal: AbortSignal): LeaseStoreError {
    return classifyAzureError(error, {
      operation,
      election,
      container: this.container,
      authKind: this.authKind,
      signal,
    });
  }
}

function leaseSeconds(leaseDurationMs: number): number {
  const seconds = leaseDurationMs / 1000;
  if (!Number.isInteger(seconds) || seconds < 15 || seconds > 60) {
    throw new FatalLeaseStoreError(messages.azure.leaseDurationInvalid(leaseDurationMs));
  }
  return seconds;
}

function parseTerm(value: string | undefined): number {
  const term = Number(value);
  return Number.isSafeInteger(term) && term > 0 ? term : 0;
}

// Metadata values travel as HTTP headers (ASCII only); identities may not be.
function encodeHolder(identity: string): string {
  return encodeURIComponent(identity);
}

function decodeHolder(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
