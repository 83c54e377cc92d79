import { randomBytes } from 'node:crypto';
import type { ComparatorBuilder, Etcd3, IKeyValue, IRequestOp, IResponseOp } from 'etcd3';
import { decodeLeaseMeta } from '../handover-support.js';
import type { AcquireResult, Lease, LeaseInfo, LeaseMeta } from '../lease-store.js';
import { remainingTtl } from './etcd-leases.js';

/**
 * The etcd protocol's key layout, transactions, reads and stored values, so the store file holds
 * the calls and their order only.
 *
 * Values: the lease key holds JSON `{holder, meta?}` (the previous version wrote `{holder}` and
 * reads only `holder`); the reservation key holds `{to, term}` and is attached to an etcd lease of
 * its own, so etcd deletes it when the reservation ends; the request key holds the request's JSON.
 * A reservation binds only while `term` is still the last term (the term record's revision): a
 * replica of the previous version, which ignores reservations, voids it by taking the lease.
 */
export class EtcdKeys {
  constructor(readonly prefix: string) {}

  lease(election: string): string {
    return `${this.prefix}${election}`;
  }

  term(election: string): string {
    return `${this.prefix}${election}/term`;
  }

  state(election: string, key: string): string {
    return `${this.prefix}${election}/state/${key}`;
  }

  reserved(election: string): string {
    return `${this.prefix}${election}/reserved`;
  }

  handover(election: string): string {
    return `${this.prefix}${election}/handover`;
  }

  /** A shared record: no etcd lease attached, so it outlives the election's leases. */
  record(election: string, key: string): string {
    return `${this.prefix}${election}/records/${key}`;
  }

  /** The election a key of this prefix names: only the term record and the request mark one. */
  electionOf(key: string): string | undefined {
    return /^([^/]+)\/(term|handover)$/.exec(key.slice(this.prefix.length))?.[1];
  }
}

/** etcd lease ids are 64-bit integers; etcd3 passes them as decimal strings. */
export const ETCD_LEASE_ID = /^[1-9][0-9]{0,19}$/;

/** An etcd lease id we choose (not etcd): an acquire whose reply was lost can then still be revoked. */
export function newEtcdLeaseId(): string {
  return String((randomBytes(8).readBigUInt64BE() >> 2n) + 1n);
}

/** What an acquire or a read needs to know about an election, read at one revision. */
export interface Snapshot {
  lease?: IKeyValue;
  reserved?: IKeyValue;
  /** The term record: its mod revision is the last term handed out. */
  term?: IKeyValue;
}

/** The lease, its reservation and its term record, at one revision: one transaction, one round trip. */
export async function readSnapshot(
  etcd: Etcd3,
  keys: EtcdKeys,
  election: string,
  options: { deadline: Date },
): Promise<Snapshot> {
  return snapshotOf((await etcd.kv.txn({ success: snapshotOps(keys, election) }, options)).responses);
}

function snapshotOps(keys: EtcdKeys, election: string): IRequestOp[] {
  return [keys.lease(election), keys.reserved(election), keys.term(election)].map((key) => ({
    request_range: { key: Buffer.from(key) },
  }));
}

export function snapshotOf(responses: IResponseOp[]): Snapshot {
  const [lease, reserved, term] = responses.map((response) => response.response_range?.kvs[0]);
  return { lease, reserved, term };
}

export function lastTerm(seen: Snapshot): number {
  return seen.term ? Number(seen.term.mod_revision) : 0;
}

/** The reservation that binds now, if any: one whose term is still the last term. */
export function bindingReservation(seen: Snapshot): { to: string; leaseId: string } | undefined {
  if (!seen.reserved) return undefined;
  const value = parse(seen.reserved) as { to?: unknown; term?: unknown };
  return typeof value.to === 'string' && value.term === lastTerm(seen)
    ? { to: value.to, leaseId: seen.reserved.lease }
    : undefined;
}

/**
 * Why an acquire by `identity` must fail now, or undefined when it may take the lease: the key is
 * held, or a binding reservation names someone else (with its remaining time).
 */
export async function refusal(
  etcd: Etcd3,
  seen: Snapshot,
  identity: string,
  options: { deadline: Date },
): Promise<AcquireResult | undefined> {
  if (seen.lease) {
    // The holder's remaining TTL (one more call): a watching follower then polls only as a safety
    // net and once the lease can have expired, instead of every retry interval (flat store load).
    const ttl = await remainingTtl(etcd, seen.lease.lease, options);
    const refused = notAcquired(seen.lease);
    // etcd answers whole seconds, rounded down: the lease ends within TTL + 1 s.
    return ttl >= 0 && !refused.acquired ? { ...refused, expiresInMs: (ttl + 1) * 1000 } : refused;
  }
  const reservation = bindingReservation(seen);
  if (!reservation || reservation.to === identity) return undefined;
  const ttl = await remainingTtl(etcd, reservation.leaseId, options);
  // Its lease ended and etcd is about to delete the key: the reservation is over.
  if (ttl < 0) return undefined;
  // etcd answers whole seconds, rounded down: the reservation ends within TTL + 1 s.
  return { acquired: false, term: lastTerm(seen), reservedFor: reservation.to, expiresInMs: (ttl + 1) * 1000 };
}

/**
 * Takes the lease if its key is absent and the reservation key is as the caller last saw it
 * (`reservedMod`, '0' for absent): a reservation made since makes it fail. Writes the term record
 * in the same revision (it keeps the last term once the key is gone) and ends the reservation.
 * Else: the snapshot, so the caller learns why in the same round trip.
 */
export function takeTxn(
  etcd: Etcd3,
  keys: EtcdKeys,
  election: string,
  take: { identity: string; leaseId: string; meta?: string; reservedMod: string },
): ComparatorBuilder {
  return etcd
    .if(keys.lease(election), 'Create', '==', 0)
    .and(keys.reserved(election), 'Mod', '==', take.reservedMod)
    .then(
      etcd.put(keys.lease(election)).value(leaseValue(take.identity, take.meta)).lease(take.leaseId),
      etcd.put(keys.term(election)).value(JSON.stringify({ holder: take.identity })),
      etcd.delete().key(keys.reserved(election)),
    )
    .else(...snapshotOps(keys, election));
}

/** The lease key's value as an acquire writes it: `{holder, meta?}`, `meta` the encoded meta's JSON. */
export function leaseValue(holder: string, meta: string | undefined): string {
  return JSON.stringify(meta === undefined ? { holder } : { holder, meta: JSON.parse(meta) });
}

/** Conditional on `lease` being the key's current etcd lease and term. */
export function ifOurs(etcd: Etcd3, keys: EtcdKeys, lease: Lease): ComparatorBuilder {
  const key = keys.lease(lease.election);
  return etcd.if(key, 'Lease', '==', lease.leaseId).and(key, 'Create', '==', lease.term);
}

/**
 * Deletes our lease key and reserves the election for `to` in one revision: the key attached to
 * `reservationLeaseId` expires with it. The delete is what watchers see.
 */
export function releaseToTxn(
  etcd: Etcd3,
  keys: EtcdKeys,
  lease: Lease,
  to: string,
  reservationLeaseId: string,
): ComparatorBuilder {
  const reservation = JSON.stringify({ to, term: lease.term });
  return ifOurs(etcd, keys, lease).then(
    etcd.delete().key(keys.lease(lease.election)),
    etcd.put(keys.reserved(lease.election)).value(reservation).lease(reservationLeaseId),
  );
}

/** Rewrites our lease value with new meta, still attached to our etcd lease (a put without it detaches). */
export function putMetaTxn(etcd: Etcd3, keys: EtcdKeys, lease: Lease, kv: IKeyValue, meta: string): ComparatorBuilder {
  const value = JSON.stringify({ ...parse(kv), meta: JSON.parse(meta) });
  return ifOurs(etcd, keys, lease).then(etcd.put(keys.lease(lease.election)).value(value).lease(lease.leaseId));
}

/** The meta a lease key holds, as the JSON the encoder would write (to skip a write that changes nothing). */
export function storedMetaJson(kv: IKeyValue): string | undefined {
  const meta = (parse(kv) as { meta?: unknown }).meta;
  return meta === undefined ? undefined : JSON.stringify(meta);
}

function notAcquired(kv: IKeyValue): AcquireResult {
  return { acquired: false, holder: holderOf(kv), term: Number(kv.create_revision), ...metaOf(kv) };
}

export function heldInfo(kv: IKeyValue): LeaseInfo {
  return { held: true, holder: holderOf(kv), term: Number(kv.create_revision), ...metaOf(kv) };
}

function holderOf(kv: IKeyValue): string | undefined {
  const holder = (parse(kv) as { holder?: unknown }).holder;
  return typeof holder === 'string' ? holder : undefined;
}

function metaOf(kv: IKeyValue): { meta?: LeaseMeta } {
  const meta = decodeLeaseMeta((parse(kv) as { meta?: unknown }).meta);
  return meta === undefined ? {} : { meta };
}

/** A stored JSON object, or {} (a key written by hand never crashes a reader). */
function parse(kv: IKeyValue): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(kv.value.toString());
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
