import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { decodeLeaseMeta } from '../handover-support.js';
import type { LeaseMeta } from '../lease-store.js';
import { REPLICA_REASONS } from '../lease-store.spread-rule.js';
import { replyCode } from './redis-errors.js';

export interface Script {
  lua: string;
  sha: string;
}

// The scripts run atomically on the server, so check-then-act needs no lock. A lease value is
// JSON {leaseId, holder, term, meta?} (meta: the holder's LeaseMeta as a JSON string, absent when
// none — the previous version wrote no meta and ignores it); renew and release act only when its
// leaseId (and term) are ours. A reservation (a directed handover) is JSON {to, term}: `term` is
// the term counter when it was made, so it binds only while nobody has taken the lease since — a
// replica of the previous version, which ignores reservations, voids it by taking the lease.

/**
 * KEYS: lease, term counter, reservation. ARGV: lease id, holder, duration ms, meta JSON ('' none).
 * → {1, value} acquired, {0, current value, PTTL} held, {2, reserved identity, PTTL, counter} reserved.
 * Idempotent for its own lease id: ioredis resends a command whose reply was lost (after a
 * reconnect), and the resend must answer "acquired" with the same lease, not "held by someone"
 * — which would leave the lease held under an id nobody knows.
 */
export const ACQUIRE = script(`
local current = redis.call('GET', KEYS[1])
if current then
  local ok, lease = pcall(cjson.decode, current)
  if ok and type(lease) == 'table' and lease.leaseId == ARGV[1] then return {1, current} end
  -- The holder's remaining time (ms, Redis's clock): when a follower should try again.
  return {0, current, redis.call('PTTL', KEYS[1])}
end
local reserved = redis.call('GET', KEYS[3])
if reserved then
  local ok, r = pcall(cjson.decode, reserved)
  local counter = redis.call('GET', KEYS[2])
  if ok and type(r) == 'table' and type(r.to) == 'string' and r.term == tonumber(counter) and r.to ~= ARGV[2] then
    return {2, r.to, redis.call('PTTL', KEYS[3]), counter}
  end
  -- Ours, or void: taking the lease ends it.
  redis.call('DEL', KEYS[3])
end
-- The counter moves only when the lease is taken: terms strictly increase across holders (one that
-- replicaAcks then refuses is given back and leaves a gap in the terms, never a repeat).
local term = redis.call('INCR', KEYS[2])
local lease = { leaseId = ARGV[1], holder = ARGV[2], term = term }
if ARGV[4] ~= '' then lease.meta = ARGV[4] end
local value = cjson.encode(lease)
redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[3])
return {1, value}`);

/**
 * The renewal, as a script's first step (RENEW, and RENEW_WITH in redis-renewal.ts, share it):
 * KEYS[1] lease; ARGV[1..4] lease id, term, duration ms, meta JSON ('' keep). Returns 0 when the
 * lease is not ours, else falls through. The value is rewritten only when the meta changed: a
 * renew is otherwise one PEXPIRE.
 */
export const RENEW_STEP = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, lease = pcall(cjson.decode, current)
if not ok or type(lease) ~= 'table' or lease.leaseId ~= ARGV[1] or lease.term ~= tonumber(ARGV[2]) then return 0 end
if ARGV[4] == '' or lease.meta == ARGV[4] then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
else
  lease.meta = ARGV[4]
  redis.call('SET', KEYS[1], cjson.encode(lease), 'PX', ARGV[3])
end`;

/** KEYS: lease. ARGV: lease id, term, duration ms, meta JSON ('' keep). → 1 renewed, 0 not ours. */
export const RENEW = script(`${RENEW_STEP}
return 1`);

/**
 * KEYS: lease, reservation. ARGV: lease id, term ('' = any), channel, election, reserved identity
 * ('' none), reservation ms. → 1 released, 0 not ours. The reservation is written in the same step
 * as the delete, and the PUBLISH wakes every watcher (the reserved one takes it, others are told).
 */
export const RELEASE = script(`
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, lease = pcall(cjson.decode, current)
if not ok or type(lease) ~= 'table' or lease.leaseId ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' and lease.term ~= tonumber(ARGV[2]) then return 0 end
redis.call('DEL', KEYS[1])
if ARGV[5] ~= '' then
  redis.call('SET', KEYS[2], cjson.encode({ to = ARGV[5], term = lease.term }), 'PX', ARGV[6])
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1`);

/**
 * KEYS: handover request. ARGV: request JSON, '1' for a replica's own request (spread, priority),
 * its term. → 1 written, 0 refused. The slot rule (spreadRequestYields): a replica's request leaves
 * an operator's pending request for its term or a later one in place; anything else replaces what
 * is pending.
 */
export const REQUEST_HANDOVER = script(`
if ARGV[2] == '1' then
  local current = redis.call('GET', KEYS[1])
  if current then
    local ok, pending = pcall(cjson.decode, current)
    if ok and type(pending) == 'table' and type(pending.reason) == 'string' ${REPLICA_REASONS.map((reason) => `and pending.reason ~= '${reason}'`).join(' ')}
      and type(pending.term) == 'number' and pending.term >= tonumber(ARGV[3]) then return 0 end
  end
end
redis.call('SET', KEYS[1], ARGV[1])
return 1`);

/** KEYS: handover request. ARGV: request id. → 1 removed, 0 none or another request. */
export const CLEAR_HANDOVER = script(`
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, request = pcall(cjson.decode, current)
if not ok or type(request) ~= 'table' or request.id ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`);

/**
 * KEYS: lease, state hash. ARGV: lease id, term, field, entry JSON. → 1 written, 0 not ours.
 * The lease key exists only while unexpired (server-side PX), so finding our id in it is the
 * whole condition; HSET in the same script cannot be overtaken by a takeover.
 */
export const WRITE_STATE = script(`
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, lease = pcall(cjson.decode, current)
if not ok or type(lease) ~= 'table' or lease.leaseId ~= ARGV[1] or lease.term ~= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
return 1`);

/**
 * KEYS: records hash. ARGV: field, the condition's version suffix ('' = only if absent), entry
 * JSON, the entry's own version suffix. → 1 written, 0 condition failed. An entry is
 * `{"value":…,"version":"…"}` with the version last (encodeRecord), so its version is compared as
 * the entry's suffix: never decoding the value, whose nesting cjson limits. Finding our own entry
 * already there is ioredis resending the write after a reconnect lost its reply: it did happen, so
 * it answers 1 (rewriting the same entry, so a WAIT on this connection has a write to count).
 */
export const WRITE_RECORD = script(`
local current = redis.call('HGET', KEYS[1], ARGV[1])
local function endsWith(suffix) return suffix ~= '' and string.sub(current, -#suffix) == suffix end
if current then
  if not endsWith(ARGV[4]) and not endsWith(ARGV[2]) then return 0 end
elseif ARGV[2] ~= '' then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1`);

/** EVALSHA, falling back to EVAL the first time the server has not cached the script. */
export async function evalScript(
  client: Redis,
  { sha, lua }: Script,
  keys: string[],
  args: (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (replyCode(error) !== 'NOSCRIPT') throw error;
    return client.eval(lua, keys.length, ...keys, ...args);
  }
}

export function script(lua: string): Script {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

export interface LeaseValue {
  leaseId?: string;
  holder?: string;
  term?: number;
  /** The holder's LeaseMeta as JSON (absent in values of the previous version). */
  meta?: string;
}

// ---- the values the scripts write, read back (never throws: a key written by hand is no crash) ----

export function parseValue(raw: string | null | undefined): LeaseValue {
  try {
    const value = JSON.parse(raw ?? '{}') as LeaseValue;
    return typeof value === 'object' && value ? value : {};
  } catch {
    return {};
  }
}

export function metaOf(value: LeaseValue): { meta?: LeaseMeta } {
  const meta = decodeLeaseMeta(value.meta);
  return meta === undefined ? {} : { meta };
}

export function parseReservation(raw: string | null | undefined): { to: string; term: number } | undefined {
  try {
    const value = JSON.parse(raw ?? 'null') as { to?: unknown; term?: unknown } | null;
    return typeof value?.to === 'string' && typeof value.term === 'number'
      ? { to: value.to, term: value.term }
      : undefined;
  } catch {
    return undefined;
  }
}
