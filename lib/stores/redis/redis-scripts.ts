import { createHash } from 'node:crypto';

export interface Script {
  lua: string;
  sha: string;
}

// The scripts run atomically on the server, so check-then-act needs no lock. A lease value is
// JSON {leaseId, holder, term}; renew and release act only when its leaseId (and term) are ours.

/**
 * KEYS: lease, term counter. ARGV: lease id, holder, duration ms. → {1, value} or {0, current value, PTTL}.
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
-- The counter moves only on success: terms strictly increase across holders, without gaps.
local term = redis.call('INCR', KEYS[2])
local value = cjson.encode({ leaseId = ARGV[1], holder = ARGV[2], term = term })
redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[3])
return {1, value}`);

/** KEYS: lease. ARGV: lease id, term, duration ms. → 1 renewed, 0 not ours. */
export const RENEW = script(`
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, lease = pcall(cjson.decode, current)
if not ok or lease.leaseId ~= ARGV[1] or lease.term ~= tonumber(ARGV[2]) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`);

/** KEYS: lease. ARGV: lease id, term ('' = any), channel, election. → 1 released, 0 not ours. */
export const RELEASE = script(`
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, lease = pcall(cjson.decode, current)
if not ok or lease.leaseId ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' and lease.term ~= tonumber(ARGV[2]) then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[4])
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

function script(lua: string): Script {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}
