import { isValidIdentity } from '../shared/identity.js';
import { sharedMessages } from '../shared/messages.js';
import {
  type HandoverRequest,
  type LeaseMeta,
  type LeaseStoreLimits,
  MAX_HANDOVER_REQUEST_BYTES,
  MAX_LEASE_META_BYTES,
  type ReleaseOptions,
} from './lease-store.js';
import { storeMessages as messages } from './store.messages.js';

/**
 * The handover capability, shared by every store that offers it: the JSON encodings of lease meta
 * and of handover requests (size-checked before anything is sent, checked again when read back,
 * so a row or key written by hand or by a later version never crashes a reader), and the release
 * options of a directed handover.
 */

/** `meta` as the JSON a store keeps, or undefined when there is none. Throws RangeError when too large. */
export function encodeLeaseMeta(store: string, meta: LeaseMeta | undefined): string | undefined {
  if (meta === undefined) return undefined;
  const json = JSON.stringify(meta);
  if (Buffer.byteLength(json) > MAX_LEASE_META_BYTES) {
    throw new RangeError(messages.handover.metaTooLarge(store, Buffer.byteLength(json), MAX_LEASE_META_BYTES));
  }
  return json;
}

/** Stored meta back: undefined when absent or not an object this library wrote (never throws). */
export function decodeLeaseMeta(stored: unknown): LeaseMeta | undefined {
  const value = parseStored(stored);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const meta = value as Record<string, unknown>;
  const decoded: LeaseMeta & Record<string, unknown> = { ...meta };
  if (decoded.advertise !== undefined && typeof decoded.advertise !== 'string') delete decoded.advertise;
  if (decoded.leaderships !== undefined && !Number.isSafeInteger(decoded.leaderships)) delete decoded.leaderships;
  if (decoded.pinned !== undefined && typeof decoded.pinned !== 'boolean') delete decoded.pinned;
  if (decoded.priority !== undefined && !Number.isSafeInteger(decoded.priority)) delete decoded.priority;
  return decoded;
}

/** `request` as the JSON a store keeps. Throws TypeError/RangeError before anything is sent. */
export function encodeHandoverRequest(store: string, request: HandoverRequest): string {
  if (!isHandoverRequest(request)) throw new TypeError(messages.handover.invalidRequest(store));
  const json = JSON.stringify(request);
  if (Buffer.byteLength(json) > MAX_HANDOVER_REQUEST_BYTES) {
    throw new RangeError(messages.handover.requestTooLarge(store, Buffer.byteLength(json), MAX_HANDOVER_REQUEST_BYTES));
  }
  return json;
}

/** A stored request back: undefined when absent or malformed (never throws). */
export function decodeHandoverRequest(stored: unknown): HandoverRequest | undefined {
  const value = parseStored(stored);
  return isHandoverRequest(value) ? value : undefined;
}

/**
 * The reservation a release asks for, validated: both options or neither. Throws TypeError naming
 * the option, before anything is sent. A reservation is a lease held for the heir: while it lasts
 * nobody else may lead, so a store keeps one at most as long as its longest lease
 * (`limits.maxLeaseDurationMs`) — never longer than a crashed holder could block the election —
 * and the elector refuses at construction any timings whose reservation would be longer.
 */
export function releaseReservation(
  options: ReleaseOptions,
  limits: Pick<LeaseStoreLimits, 'maxLeaseDurationMs'>,
): { to: string; ms: number } | undefined {
  const { handoverTo, reserveMs } = options;
  if (handoverTo === undefined && reserveMs === undefined) return undefined;
  if (!isValidIdentity(handoverTo)) {
    throw new TypeError(messages.handover.badReleaseOption('handoverTo', sharedMessages.identityForm, handoverTo));
  }
  const max = maxReserveMs(limits);
  if (typeof reserveMs !== 'number' || !Number.isInteger(reserveMs) || reserveMs < 1 || reserveMs > max) {
    throw new TypeError(
      messages.handover.badReleaseOption(
        'reserveMs',
        `whole milliseconds from 1 to ${max} (the store's longest lease)`,
        reserveMs,
      ),
    );
  }
  return { to: handoverTo, ms: reserveMs };
}

/** The longest reservation a store keeps: its longest lease (see {@link releaseReservation}). */
export function maxReserveMs(limits: Pick<LeaseStoreLimits, 'maxLeaseDurationMs'>): number {
  return limits.maxLeaseDurationMs;
}

function parseStored(stored: unknown): unknown {
  if (typeof stored !== 'string') return stored ?? undefined;
  try {
    return JSON.parse(stored);
  } catch {
    return undefined;
  }
}

function isHandoverRequest(value: unknown): value is HandoverRequest {
  if (value === null || typeof value !== 'object') return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r.election === 'string' &&
    typeof r.id === 'string' &&
    r.id !== '' &&
    Number.isSafeInteger(r.term) &&
    (r.to === undefined || (typeof r.to === 'string' && r.to !== '')) &&
    typeof r.requestedBy === 'string' &&
    typeof r.reason === 'string' &&
    typeof r.requestedAt === 'number' &&
    (r.requesterLeaderships === undefined || Number.isSafeInteger(r.requesterLeaderships)) &&
    (r.requesterPriority === undefined || Number.isSafeInteger(r.requesterPriority))
  );
}
