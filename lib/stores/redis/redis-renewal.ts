import type { Redis } from 'ioredis';
import { LeaseLostError } from '../../shared/errors.js';
import { encodeLeaseMeta } from '../handover-support.js';
import type { Lease, LeaseStore, RenewWithOptions, RenewWithReply } from '../lease-store.js';
import { prepareRenewal, renewalReplyOf } from '../renew-with-support.js';
import { storeMessages as messages } from '../store.messages.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRecordCalls } from './redis-records.js';
import { evalScript, RENEW_STEP, script } from './redis-scripts.js';

/**
 * KEYS: lease, state hash, handover request, records hash (one election: one Cluster slot).
 * ARGV: lease id, term, duration ms, meta JSON ('' keep) — RENEW's own —, then the number of
 * state writes n, n field/entry pairs, '1' to read the handover request ('0' not), then the record
 * fields to read. → 0 not ours (nothing written), else {1, handover request or nil, each record's
 * entry or nil, in the order asked}. The writes run only after the renewal succeeded, in the same
 * script, so they are all-or-none under its condition; a WRONGTYPE would stop at the first HSET,
 * before any write. The reads come last: they see the renewal and its writes.
 */
export const RENEW_WITH = script(`${RENEW_STEP}
local n = tonumber(ARGV[5])
for i = 0, n - 1 do
  redis.call('HSET', KEYS[2], ARGV[6 + 2 * i], ARGV[7 + 2 * i])
end
local at = 6 + 2 * n
local reply = {1, false}
if ARGV[at] == '1' then reply[2] = redis.call('GET', KEYS[3]) end
for i = at + 1, #ARGV do
  reply[i - at + 2] = redis.call('HGET', KEYS[4], ARGV[i])
end
return reply`);

/**
 * The folded renewal of RedisLeaseStore (`renewWith`): RENEW_WITH, one EVALSHA, renews as RENEW
 * does, writes the leader-state entries as WRITE_STATE does (same hash, same `{value, term}`
 * envelope) and reads the handover request and records as readHandover and readRecord do.
 */
export class RedisRenewal {
  constructor(
    private readonly store: Pick<LeaseStore, 'name' | 'limits'>,
    private readonly keys: RedisKeys,
    private readonly calls: RedisRecordCalls,
  ) {}

  async renewWith(lease: Lease, options: RenewWithOptions): Promise<RenewWithReply> {
    const meta = encodeLeaseMeta(this.store.name, options.meta) ?? '';
    const asked = prepareRenewal(this.store, { state: true, handover: true, records: true }, lease, options);
    const { election } = lease;
    const keys = [
      this.keys.lease(election),
      this.keys.state(election),
      this.keys.handover(election),
      this.keys.records(election),
    ];
    const args = [
      ...[lease.leaseId, lease.term, options.leaseDurationMs, meta],
      asked.writes.length,
      ...asked.writes.flatMap((write) => [write.key, write.entry]),
      asked.readHandover ? '1' : '0',
      ...asked.recordKeys,
    ];
    const reply = await this.calls.run(options.signal, (client: Redis) =>
      // A renewal that applied is waited for (replicaAcks) as renew is; a refusal is not.
      this.calls.acknowledged(client, () => evalScript(client, RENEW_WITH, keys, args), Array.isArray),
    );
    if (!Array.isArray(reply)) throw new LeaseLostError(messages.leaseLost(election));
    const [, handover, ...entries] = reply as [number, string | null, ...(string | null)[]];
    const records = new Map(asked.recordKeys.map((key, i) => [key, entries[i]]));
    return renewalReplyOf(this.store, election, asked, handover, (key) => records.get(key));
  }
}
