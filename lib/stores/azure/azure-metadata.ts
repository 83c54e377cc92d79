import type { BlobGetPropertiesResponse, BlockBlobClient } from '@azure/storage-blob';
import { LeaseLostError } from '../../shared/errors.js';
import { decodeLeaseMeta } from '../handover-support.js';
import type { Lease, LeaseMeta } from '../lease-store.js';
import { storeMessages as messages } from '../store.messages.js';
import { codeOf, isLeaseConflict, isMissing, statusOf, summarize } from './azure-errors.js';

// The lease blob's metadata, AzureBlobLeaseStore's record of who leads:
//   term         fencing token, bumped under the new lease on every acquisition
//   holder       the holder's identity, URI-encoded (metadata values travel as ASCII HTTP headers)
//   meta         the holder's LeaseMeta: its JSON, base64url (ASCII, at most 2 732 chars for 2 KiB)
//   metaterm     the term that wrote `meta`
//   reservedfor  a directed handover's reserved identity, URI-encoded
//   reservedms   how long the reservation lasts, counted from the blob's Last-Modified
//   reservedterm the term that wrote the reservation
// Names are lowercase C# identifiers (Azure's rule; it lowercases them anyway). `metaterm` and
// `reservedterm` exist for upgrades: a previous version's acquire keeps the keys it does not know
// (it re-sends all metadata) but bumps `term`, so a meta or reservation of an older term is stale.

export type Metadata = Record<string, string>;

const TERM = 'term';
const HOLDER = 'holder';
const META = 'meta';
const META_TERM = 'metaterm';
const RESERVED_FOR = 'reservedfor';
const RESERVED_MS = 'reservedms';
const RESERVED_TERM = 'reservedterm';

export function termOf(metadata: Metadata | undefined): number {
  const term = Number(metadata?.[TERM]);
  return Number.isSafeInteger(term) && term > 0 ? term : 0;
}

export function holderOf(metadata: Metadata | undefined): string | undefined {
  return decodeText(metadata?.[HOLDER]);
}

/** The metadata a new holder writes under its lease: the term and holder, its meta, no reservation. */
export function holderMetadata(
  previous: Metadata | undefined,
  term: number,
  identity: string,
  meta?: string,
): Metadata {
  const kept: Metadata = { ...previous };
  for (const key of [META, META_TERM, RESERVED_FOR, RESERVED_MS, RESERVED_TERM]) delete kept[key];
  const metadata: Metadata = { ...kept, [TERM]: String(term), [HOLDER]: encodeURIComponent(identity) };
  return meta === undefined ? metadata : withMeta(metadata, meta, term);
}

/** `metadata` with the holder's meta (the JSON encodeLeaseMeta made) replaced. */
export function withMeta(metadata: Metadata, meta: string, term: number): Metadata {
  return { ...metadata, [META]: Buffer.from(meta).toString('base64url'), [META_TERM]: String(term) };
}

/** `metadata` with a directed handover's reservation added (holder, term and meta kept). */
export function withReservation(metadata: Metadata, reservation: { to: string; ms: number }, term: number): Metadata {
  return {
    ...metadata,
    [RESERVED_FOR]: encodeURIComponent(reservation.to),
    [RESERVED_MS]: String(reservation.ms),
    [RESERVED_TERM]: String(term),
  };
}

/** The meta the holder of the blob's current term wrote, if any. */
export function metaOf(metadata: Metadata | undefined): { meta?: LeaseMeta } {
  const stored = metadata?.[META];
  if (stored === undefined || metadata?.[META_TERM] !== String(termOf(metadata))) return {};
  const meta = decodeLeaseMeta(Buffer.from(stored, 'base64url').toString('utf8'));
  return meta === undefined ? {} : { meta };
}

/**
 * The reservation still running on a free blob, judged by the service's clock alone: its age is the
 * answer's Date minus the blob's Last-Modified (set by the reservation's metadata write; a lease
 * release leaves it alone). Both are HTTP dates, whole seconds, so a reservation ends up to a
 * second early or late.
 */
export function reservationOf(properties: BlobGetPropertiesResponse): { to: string; inMs: number } | undefined {
  const { metadata, date, lastModified } = properties;
  const to = decodeText(metadata?.[RESERVED_FOR]);
  const ms = Number(metadata?.[RESERVED_MS]);
  if (to === undefined || !Number.isSafeInteger(ms) || metadata?.[RESERVED_TERM] !== String(termOf(metadata))) {
    return undefined;
  }
  if (!date || !lastModified) return undefined;
  const inMs = ms - (date.getTime() - lastModified.getTime());
  return inMs > 0 ? { to, inMs } : undefined;
}

function decodeText(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * The metadata each of our leases last wrote, by lease id. Only that lease can change it (leader
 * state writes re-send it unchanged), so a renew sends a metadata write only when the meta changed,
 * and a reserving release writes without reading first.
 */
export class WrittenMetadata {
  private readonly byLease = new Map<string, { metadata: Metadata; meta?: string }>();

  recorded(leaseId: string, metadata: Metadata, meta: string | undefined): void {
    this.byLease.set(leaseId, { metadata, meta });
  }

  /** The meta JSON `leaseId` last wrote. */
  metaOf(leaseId: string): string | undefined {
    return this.byLease.get(leaseId)?.meta;
  }

  forget(leaseId: string): void {
    this.byLease.delete(leaseId);
  }

  /**
   * Replaces the metadata of `lease`'s blob with `change` of it, under the lease id: from what the
   * lease last wrote (one request), else read under the lease first (two; the write conditional on
   * that read's ETag). LeaseLostError when the service says the lease is not ours; other failures
   * are the SDK's, for the caller to classify.
   */
  async rewrite(
    blob: BlockBlobClient,
    lease: Lease,
    abortSignal: AbortSignal,
    change: (metadata: Metadata) => Metadata,
    meta?: string,
  ): Promise<void> {
    const { leaseId } = lease;
    try {
      let written = this.byLease.get(leaseId);
      let ifMatch: string | undefined;
      if (!written) {
        const current = await blob.getProperties({ abortSignal, conditions: { leaseId } });
        written = { metadata: current.metadata ?? {} };
        ifMatch = current.etag;
      }
      const metadata = change(written.metadata);
      await blob.setMetadata(metadata, { abortSignal, conditions: { leaseId, ifMatch } });
      this.byLease.set(leaseId, { metadata, meta: meta ?? written.meta });
    } catch (error) {
      const ours = !isLeaseConflict(error) && !isMissing(error);
      if (!ours || (statusOf(error) === 412 && codeOf(error) !== 'ConditionNotMet')) {
        throw new LeaseLostError(messages.leaseLost(lease.election), { cause: summarize(error) });
      }
      throw error;
    }
  }
}
