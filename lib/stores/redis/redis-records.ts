import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { CallOptions, LeaseStore, RecordWriteOptions, SharedRecord } from '../lease-store.js';
import { decodeRecord, encodeRecord, prepareRecordWrite, recordKey } from '../record-support.js';
import type { RedisKeys } from './redis-keys.js';
import { evalScript, WRITE_RECORD } from './redis-scripts.js';

/** What the records need of the store: its bounded calls and its replica-acknowledged writes. */
export interface RedisRecordCalls {
  run<T>(signal: AbortSignal, work: (client: Redis) => Promise<T>): Promise<T>;
  /**
   * A script's reply; with replicaAcks, a "written" reply (1, or what `written` says) only once the
   * replicas have it.
   */
  acknowledged(client: Redis, write: () => Promise<unknown>, written?: (reply: unknown) => boolean): Promise<unknown>;
}

/**
 * Shared records of RedisLeaseStore: one hash per election (`<prefix>{<election>}:records`, in
 * the lease's Cluster slot), field = record key, value = `{"value":…,"version":"…"}`. The hash has
 * no expiry and no script touching the lease reads or writes it, so a record outlives any lease.
 * The version is a random UUID per write, chosen here: never reused (no ABA, unlike a counter that
 * would restart if the hash were deleted), and known before the write, so a write resent by
 * ioredis after a lost reply recognises itself (WRITE_RECORD) instead of answering "condition
 * failed" for a write that did happen, which would make a read-modify-write loop apply twice.
 */
export class RedisRecords {
  constructor(
    private readonly store: Pick<LeaseStore, 'name'>,
    private readonly keys: RedisKeys,
    private readonly calls: RedisRecordCalls,
  ) {}

  async read(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined> {
    const field = recordKey(key);
    const raw = await this.calls.run(options.signal, (client) => client.hget(this.keys.records(election), field));
    return raw == null ? undefined : decodeRecord(this.store.name, election, field, raw);
  }

  async write(election: string, key: string, value: unknown, options: RecordWriteOptions): Promise<boolean> {
    const write = prepareRecordWrite(this.store, key, value, options);
    const version = randomUUID();
    const condition = write.ifVersion === null ? '' : versionSuffix(write.ifVersion);
    const args = [write.key, condition, encodeRecord(write.json, version), versionSuffix(version)];
    const written = await this.calls.run(options.signal, (client) =>
      this.calls.acknowledged(client, () => evalScript(client, WRITE_RECORD, [this.keys.records(election)], args)),
    );
    return Number(written) === 1;
  }
}

/** How an entry written by encodeRecord with this version ends (the version is its last member). */
function versionSuffix(version: string): string {
  return `,"version":${JSON.stringify(version)}}`;
}
