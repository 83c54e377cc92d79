import type { BlobGetPropertiesResponse, BlockBlobClient, ContainerClient } from '@azure/storage-blob';
import { FatalLeaseStoreError } from '../../shared/errors.js';
import type { AcquireResult, LeaseStore } from '../lease-store.js';
import { azureMessages } from './azure.messages.js';
import { codeOf, isAlreadyThere } from './azure-errors.js';
import { holderOf, metaOf, termOf } from './azure-metadata.js';

/**
 * The blob lease around the store's calls: whether a read shows it held (counting a lease broken
 * from outside as held for one lease), the blob it lives on, who holds it after a conflict, and
 * the lease durations Azure accepts.
 */

type BlobProperties = BlobGetPropertiesResponse;

/** Leases broken from outside, remembered per blob so a broken lease is not taken too soon. */
export class BrokenLeases {
  /** Leases seen breaking or broken, per blob: under which term, and when first (monotonic ms). */
  private readonly brokenSeen = new Map<string, { term: number; since: number }>();

  /**
   * "Held" when the read shows the lease taken (leased, or breaking: an acquire is refused in both).
   * A lease broken from outside (Break Lease, period 0) is free at once, but its holder learns it
   * only at its next renewal and acts until then, up to its renew deadline — counted from its last
   * renewal, which came before the break. So a broken lease counts as held for one lease duration
   * from when we first saw it breaking or broken (under that term): by then that deadline is past.
   * Undefined when an acquire may succeed.
   */
  heldNow(blobName: string, properties: BlobProperties, leaseDurationMs: number): AcquireResult | undefined {
    const term = termOf(properties.metadata);
    const holder = holderOf(properties.metadata);
    const held: AcquireResult = { acquired: false, holder, term, ...metaOf(properties.metadata) };
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

  /** We hold the lease now (a later break starts a new count). */
  forget(blobName: string): void {
    this.brokenSeen.delete(blobName);
  }
}

/** Creates the container and an empty blob when missing; losing either creation race is fine. */
export async function createBlob(
  container: Promise<ContainerClient>,
  blob: BlockBlobClient,
  abortSignal: AbortSignal,
): Promise<void> {
  const containerClient = await container;
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

/** After a lease conflict: who holds it, as far as one read tells. */
export async function heldBy(
  store: Pick<LeaseStore, 'read'>,
  election: string,
  signal: AbortSignal,
): Promise<AcquireResult> {
  try {
    const info = await store.read(election, { signal });
    return { acquired: false, holder: info.holder, term: info.term, ...(info.meta ? { meta: info.meta } : {}) };
  } catch {
    // Who holds it is a courtesy; failing to say must not turn "held" into an error.
    return { acquired: false };
  }
}

export function leaseSeconds(leaseDurationMs: number): number {
  const seconds = leaseDurationMs / 1000;
  if (!Number.isInteger(seconds) || seconds < 15 || seconds > 60) {
    throw new FatalLeaseStoreError(azureMessages.leaseDurationInvalid(leaseDurationMs));
  }
  return seconds;
}
