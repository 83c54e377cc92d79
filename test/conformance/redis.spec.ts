// RedisLeaseStore against the machine's Redis (REDIS_URL): the shared conformance and push suites,
// then what is specific to it: key layout, clients it must not close, auth, ACL and network
// failures, and an acquire that lands after its caller gave up.
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { TransientLeaseStoreError } from '../../lib/shared/errors.js';
import { leaseStoreConformance } from '../../lib/store.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { redisMessages } from '../../lib/stores/redis/redis.messages.js';
import { RedisLeaseStore } from '../../lib/stores/redis/redis.store.js';
import { expectUnreachableIsTransient, REDIS_URL, TcpGate, uniqueName } from '../setup/servers.js';
import { storeBehindBlackHoleProxy } from '../support/black-hole-proxy.js';
import { portOf, storeBehindReplyLosingProxy, withPort } from '../support/reply-losing-proxy.js';
import { describeBlackHoleStopConformance } from './black-hole.conformance.js';
import { describePushHandoverConformance } from './push.conformance.js';
import { deleteRedisKeys, withRedis } from './server-clients.js';
import {
  expectMalformedConnectionRefused,
  stateContinuesAfterUpgrade,
  stateWrittenBeforeUpgrade,
} from './store-spec-helpers.js';

const LEASE_MS = 1_000;
/** Every key of this run starts with this, so parallel runs never meet and clean-up is one SCAN. */
const runPrefix = `${uniqueName('le_redis')}:`;
const prefix = `${runPrefix}main:`;

const signal = (ms = 10_000) => AbortSignal.timeout(ms);

afterAll(() => deleteRedisKeys(runPrefix));

const conformanceCases = leaseStoreConformance({
  leaseDurationMs: LEASE_MS,
  leaderState: true,
  handover: true,
  records: true,
  push: true,
  renewWith: true,
  createStore: () => new RedisLeaseStore({ connection: REDIS_URL, keyPrefix: prefix }),
  createStoreInFreshNamespace: () =>
    new RedisLeaseStore({ connection: REDIS_URL, keyPrefix: `${runPrefix}${randomBytes(4).toString('hex')}:` }),
  createReplyLosingStore: () =>
    storeBehindReplyLosingProxy(
      portOf(REDIS_URL, 6379),
      (port) => new RedisLeaseStore({ connection: withPort(REDIS_URL, port), keyPrefix: prefix }),
    ),
  createBlackHoledStore: () =>
    storeBehindBlackHoleProxy(
      portOf(REDIS_URL, 6379),
      (port) => new RedisLeaseStore({ connection: withPort(REDIS_URL, port), keyPrefix: `${runPrefix}blackhole:` }),
    ),
});

describe('LeaseStore conformance: RedisLeaseStore', () => {
  for (const c of conformanceCases)
    (c.skip ? test.skip : c.concurrent ? test.concurrent : test)(c.name, c.run, c.timeoutMs);
});

describePushHandoverConformance('RedisLeaseStore', () => ({
  leaseDurationMs: LEASE_MS,
  createStore: () => new RedisLeaseStore({ connection: REDIS_URL, keyPrefix: `${runPrefix}push:` }),
}));

describeBlackHoleStopConformance('RedisLeaseStore', () => ({
  leaseDurationMs: 3_000,
  createBlackHoledStore: () =>
    storeBehindBlackHoleProxy(
      portOf(REDIS_URL, 6379),
      (port) => new RedisLeaseStore({ connection: withPort(REDIS_URL, port), keyPrefix: `${runPrefix}blackhole:` }),
    ),
}));

describe('RedisLeaseStore specifics', () => {
  const stores: LeaseStore[] = [];
  const store = (options: ConstructorParameters<typeof RedisLeaseStore>[0]) => {
    const created = new RedisLeaseStore(options);
    stores.push(created);
    return created;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close?.()));
  });

  it('keeps the lease under <prefix>{<election>} with a server-side expiry, and the term counter beside it', async () => {
    const keyPrefix = `${runPrefix}layout:`;
    const s = store({ connection: REDIS_URL, keyPrefix });
    const result = await s.acquire({ election: 'jobs', identity: 'a', leaseDurationMs: 5_000, signal: signal() });
    if (!result.acquired) throw new Error('not acquired');
    await withRedis(async (redis) => {
      expect((await redis.keys(`${keyPrefix}*`)).sort()).toEqual([`${keyPrefix}{jobs}`, `${keyPrefix}{jobs}:term`]);
      const ttl = await redis.pttl(`${keyPrefix}{jobs}`);
      expect(ttl).toBeGreaterThan(3_000);
      expect(ttl).toBeLessThanOrEqual(5_000);
      expect(JSON.parse((await redis.get(`${keyPrefix}{jobs}`)) ?? '{}')).toEqual({
        leaseId: result.lease.leaseId,
        holder: 'a',
        term: result.lease.term,
      });
      expect(await redis.get(`${keyPrefix}{jobs}:term`)).toBe(String(result.lease.term));
    });
  });

  it('never closes a client the user passed in; close() is idempotent', async () => {
    const client = new Redis(REDIS_URL);
    try {
      const s = new RedisLeaseStore({ client, keyPrefix: prefix });
      const election = `user-client-${randomBytes(4).toString('hex')}`;
      const watch = s.watch(election, () => undefined);
      expect(await s.read(election, { signal: signal() })).toEqual({ held: false, term: 0 });
      await watch.close();
      await s.close();
      await s.close();
      expect(await client.ping()).toBe('PONG');
      await expect(s.read(election, { signal: signal() })).rejects.toBeInstanceOf(TransientLeaseStoreError);
    } finally {
      client.disconnect();
    }
  });

  it('renewWith is one EVALSHA per renewal, whatever it carries, its keys all in one Cluster slot', async () => {
    const client = new Redis(REDIS_URL);
    try {
      const s = store({ client, keyPrefix: prefix });
      const election = `folded-${randomBytes(4).toString('hex')}`;
      const taken = await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
      if (!taken.acquired) throw new Error('not acquired');
      const options = {
        leaseDurationMs: LEASE_MS,
        signal: signal(),
        meta: { leaderships: 1 },
        writeState: [
          { key: 'state', value: 1 },
          { key: 'tick:x', value: 2 },
        ],
        readHandover: true,
        readRecords: ['jobs', 'board'],
      };
      // The first call may load the script (NOSCRIPT, then EVAL); the leader's every later one is one command.
      await s.renewWith(taken.lease, options);
      const sent: { name: string; args: unknown[] }[] = [];
      const send = client.sendCommand.bind(client);
      client.sendCommand = ((command: { name: string; args: unknown[] }, ...rest: unknown[]) => {
        sent.push({ name: command.name, args: command.args });
        return (send as (...a: unknown[]) => unknown)(command, ...rest);
      }) as typeof client.sendCommand;
      expect(await s.renewWith(taken.lease, options)).toEqual({ handover: null, records: { jobs: null, board: null } });
      expect(sent.map((command) => command.name)).toEqual(['evalsha']);
      const [, count, ...rest] = sent[0]?.args ?? [];
      const keys = rest.slice(0, Number(count)) as string[];
      expect(keys).toHaveLength(4);
      for (const key of keys) expect(key.startsWith(`${prefix}{${election}}`)).toBe(true);
      expect(await s.readState(election, { signal: signal(), key: 'tick:x' })).toEqual({
        value: 2,
        term: taken.lease.term,
      });
    } finally {
      client.disconnect();
    }
  });

  it('wrong credentials are a FatalLeaseStoreError whose message and cause hold no password', async () => {
    const url = new URL(REDIS_URL);
    url.username = 'no_such_user';
    url.password = 's3cret-pw';
    const s = store({ connection: url.toString(), keyPrefix: prefix });
    const error = await s.read('e', { signal: signal() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'fatal', name: 'FatalLeaseStoreError' });
    expect((error as Error).message).toContain('WRONGPASS');
    expect(inspect(error, { depth: 10 })).not.toContain('s3cret-pw');
  });

  it('an ACL user without access to the keys gets a FatalLeaseStoreError naming what to allow', async () => {
    const user = uniqueName('le_limited');
    const password = randomBytes(8).toString('hex');
    await withRedis((redis) => redis.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~unrelated:*', '+@all'));
    try {
      const url = new URL(REDIS_URL);
      url.username = user;
      url.password = password;
      const error = await store({ connection: url.toString(), keyPrefix: prefix })
        .acquire({ election: 'e', identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ kind: 'fatal' });
      expect((error as Error).message).toMatch(/NOPERM.*ACL SETUSER/);
      expect(inspect(error, { depth: 10 })).not.toContain(password);
    } finally {
      await withRedis((redis) => redis.call('ACL', 'DELUSER', user));
    }
  });

  it('the grants the NOPERM message names are enough for every call, leader state and records included', async () => {
    const user = uniqueName('le_granted');
    const password = randomBytes(8).toString('hex');
    const grants = redisMessages.permissionDenied(prefix).split('ACL SETUSER <user> ')[1]?.split(' ') ?? [];
    expect(grants).toContain('+hset');
    await withRedis((redis) => redis.call('ACL', 'SETUSER', user, 'on', `>${password}`, 'resetchannels', ...grants));
    try {
      const url = new URL(REDIS_URL);
      url.username = user;
      url.password = password;
      const s = store({ connection: url.toString(), keyPrefix: prefix });
      const election = `granted-${randomBytes(4).toString('hex')}`;
      const taken = await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
      if (!taken.acquired) throw new Error('not acquired');
      await s.renew(taken.lease, { leaseDurationMs: LEASE_MS, signal: signal() });
      await s.writeState(taken.lease, { n: 1 }, { signal: signal() });
      expect(await s.readState(election, { signal: signal() })).toEqual({ value: { n: 1 }, term: taken.lease.term });
      expect(await s.read(election, { signal: signal() })).toMatchObject({ held: true, holder: 'a' });
      // Handover too: meta, a request and its clearing, a reserved release, a refused acquire, SCAN.
      await s.renew(taken.lease, { leaseDurationMs: LEASE_MS, signal: signal(), meta: { leaderships: 1 } });
      // The folded renewal: one script that renews, writes state and reads the request and records.
      const folded = { writeState: [{ key: 'state', value: { n: 2 } }], readHandover: true, readRecords: ['jobs'] };
      expect(await s.renewWith(taken.lease, { leaseDurationMs: LEASE_MS, signal: signal(), ...folded })).toEqual({
        handover: null,
        records: { jobs: null },
      });
      const request = {
        election,
        id: 'r1',
        term: taken.lease.term,
        requestedBy: 'b',
        reason: 'operator',
        requestedAt: 1,
      };
      await s.requestHandover(request, { signal: signal() });
      expect(await s.readHandover(election, { signal: signal() })).toEqual(request);
      await s.clearHandover(election, 'r1', { signal: signal() });
      await s.release(taken.lease, { signal: signal(), handoverTo: 'b', reserveMs: 5_000 });
      expect(await s.acquire({ election, identity: 'c', leaseDurationMs: LEASE_MS, signal: signal() })).toMatchObject({
        acquired: false,
        reservedFor: 'b',
      });
      expect(await s.listElections({ signal: signal() })).toContain(election);
      // Shared records: a compare-and-set script and HGET on the records hash.
      expect(await s.writeRecord(election, 'jobs', 1, { ifVersion: null, signal: signal() })).toBe(true);
      expect(await s.readRecord(election, 'jobs', { signal: signal() })).toMatchObject({ value: 1 });
    } finally {
      await withRedis((redis) => redis.call('ACL', 'DELUSER', user));
    }
  });

  it('an unreachable or silent server is a TransientLeaseStoreError within the signal', () =>
    expectUnreachableIsTransient((port) => store({ connection: `redis://127.0.0.1:${port}`, keyPrefix: prefix })));

  it('an acquire that lands after its caller gave up is released, not left behind', async () => {
    const gate = await TcpGate.start(Number(new URL(REDIS_URL).port || 6379));
    try {
      const election = `late-${randomBytes(4).toString('hex')}`;
      const late = store({ connection: `redis://127.0.0.1:${gate.port}`, keyPrefix: prefix });
      const other = store({ connection: REDIS_URL, keyPrefix: prefix });
      expect(await late.read(election, { signal: signal() })).toEqual({ held: false, term: 0 });
      // Hold the script on its way to the server until the caller has given up on it.
      gate.hold();
      const startedAt = performance.now();
      const aborted = late.acquire({ election, identity: 'late', leaseDurationMs: 60_000, signal: signal(300) });
      await expect(aborted).rejects.toBeInstanceOf(TransientLeaseStoreError);
      expect(performance.now() - startedAt).toBeLessThan(2_000);
      gate.open();
      // The script now runs and takes the lease; its clean-up must hand it back promptly.
      const deadline = performance.now() + 5_000;
      let result = await other.acquire({ election, identity: 'other', leaseDurationMs: LEASE_MS, signal: signal() });
      while (!result.acquired && performance.now() < deadline) {
        expect(result).toMatchObject({ holder: 'late' });
        await new Promise((resolve) => setTimeout(resolve, 20));
        result = await other.acquire({ election, identity: 'other', leaseDurationMs: LEASE_MS, signal: signal() });
      }
      expect(result.acquired).toBe(true);
      // The late acquisition did happen (term 1), so the lease we now hold is a later term.
      if (result.acquired) expect(result.lease.term).toBe(2);
    } finally {
      await gate.close();
    }
  });

  it('upgrade: a lease written by the previous version is read, renewed with meta and released to a named identity', async () => {
    const election = `upgrade-${randomBytes(4).toString('hex')}`;
    const [leaseKey, termKey] = [`${prefix}{${election}}`, `${prefix}{${election}}:term`];
    // Exactly what the previous ACQUIRE script wrote: INCR of the counter, then cjson {leaseId, holder, term} PX.
    const lease = { election, holder: 'old', leaseId: '6c1d7c0e-1f0a-4d7e-9d55-2f7f4a0c1b11', term: 7 };
    await withRedis(async (redis) => {
      await redis.set(termKey, '7');
      await redis.set(leaseKey, JSON.stringify({ leaseId: lease.leaseId, holder: 'old', term: 7 }), 'PX', 10_000);
    });
    const s = store({ connection: REDIS_URL, keyPrefix: prefix });
    expect(await s.read(election, { signal: signal() })).toEqual({ held: true, holder: 'old', term: 7 });
    await s.renew(lease, { leaseDurationMs: 10_000, signal: signal(), meta: { advertise: 'http://old:3000' } });
    expect(await s.read(election, { signal: signal() })).toEqual({
      held: true,
      holder: 'old',
      term: 7,
      meta: { advertise: 'http://old:3000' },
    });
    await s.release(lease, { signal: signal(), handoverTo: 'next', reserveMs: 10_000 });
    expect(await s.read(election, { signal: signal() })).toEqual({ held: false, term: 7, reservedFor: 'next' });
    const refused = await s.acquire({ election, identity: 'other', leaseDurationMs: LEASE_MS, signal: signal() });
    expect(refused).toMatchObject({ acquired: false, term: 7, reservedFor: 'next' });
    const taken = await s.acquire({ election, identity: 'next', leaseDurationMs: LEASE_MS, signal: signal() });
    expect(taken).toMatchObject({ acquired: true, lease: { term: 8 } });
    await withRedis(async (redis) => expect(await redis.exists(`${prefix}{${election}}:reserved`)).toBe(0));
  });

  it('upgrade: a replica of the previous version that takes a reserved lease voids the reservation, never extends it', async () => {
    const election = `old-replica-${randomBytes(4).toString('hex')}`;
    const s = store({ connection: REDIS_URL, keyPrefix: prefix });
    const first = await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!first.acquired) throw new Error('not acquired');
    await s.release(first.lease, { signal: signal(), handoverTo: 'b', reserveMs: 30_000 });
    // The previous version's ACQUIRE ignores the reservation key: it bumps the counter and takes the lease.
    const keys = [`${prefix}{${election}}`, `${prefix}{${election}}:term`];
    await withRedis((redis) => redis.eval(PREVIOUS_ACQUIRE, 2, ...keys, 'old-lease-id', 'old', 60_000));
    expect(await s.read(election, { signal: signal() })).toMatchObject({ held: true, holder: 'old', term: 2 });
    // Its release (a plain DEL): the reservation key outlives it, but its term is stale, so nobody is refused.
    await withRedis((redis) => redis.del(keys[0] as string));
    expect(await s.read(election, { signal: signal() })).toEqual({ held: false, term: 2 });
    const taken = await s.acquire({ election, identity: 'c', leaseDurationMs: LEASE_MS, signal: signal() });
    expect(taken).toMatchObject({ acquired: true, lease: { term: 3 } });
  });

  it('upgrade: leader state survives a replica of the version before it acquiring, renewing and releasing', async () => {
    const election = `old-state-${randomBytes(4).toString('hex')}`;
    const s = store({ connection: REDIS_URL, keyPrefix: prefix });
    const first = await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!first.acquired) throw new Error('not acquired');
    const { read: written, expected: before } = await stateWrittenBeforeUpgrade(s, s, first.lease);
    // The previous version's scripts, as it sent them: they never name the state hash.
    const keys = [`${prefix}{${election}}`, `${prefix}{${election}}:term`];
    await withRedis(async (redis) => {
      await redis.eval(PREVIOUS_ACQUIRE, 2, ...keys, 'old-lease-id', 'old', 60_000);
      const term = (await s.read(election, { signal: signal() })).term;
      expect(await redis.eval(PREVIOUS_RENEW, 1, keys[0] as string, 'old-lease-id', term, 60_000)).toBe(1);
      expect(await written()).toEqual(before);
      expect(
        await redis.eval(PREVIOUS_RELEASE, 1, keys[0] as string, 'old-lease-id', term, `${prefix}released`, election),
      ).toBe(1);
    });
    expect(await written()).toEqual(before);
    const next = await s.acquire({ election, identity: 'b', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!next.acquired) throw new Error('not acquired');
    await stateContinuesAfterUpgrade(s, s, next.lease);
  });

  it('refuses a malformed connection URL at construction, naming the option, never echoing it', () => {
    for (const bad of ['redis://:s3cret-pw@cache:port', 'cache:6379 s3cret-pw', 'http://:s3cret-pw@cache:6379']) {
      expectMalformedConnectionRefused(() => new RedisLeaseStore({ connection: bad }), 'connection', 's3cret-pw');
    }
    for (const good of [REDIS_URL, 'rediss://user:pw@cache:6380/2']) {
      expect(() => new RedisLeaseStore({ connection: good })).not.toThrow();
    }
  });

  it('rejects a key prefix with spaces or control characters', () => {
    for (const bad of ['with space', 'tab\t', 'x'.repeat(201)]) {
      expect(() => new RedisLeaseStore({ connection: REDIS_URL, keyPrefix: bad })).toThrow(TypeError);
    }
    expect(() => new RedisLeaseStore({} as never)).toThrow(TypeError);
  });
});

/** The ACQUIRE script of the version before handover (0d9c296), as a replica of it still runs it. */
const PREVIOUS_ACQUIRE = `
local current = redis.call('GET', KEYS[1])
if current then
  local ok, lease = pcall(cjson.decode, current)
  if ok and type(lease) == 'table' and lease.leaseId == ARGV[1] then return {1, current} end
  return {0, current, redis.call('PTTL', KEYS[1])}
end
local term = redis.call('INCR', KEYS[2])
local value = cjson.encode({ leaseId = ARGV[1], holder = ARGV[2], term = term })
redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[3])
return {1, value}`;

/** The previous version's RENEW and RELEASE (before leader state, 46466f7^), as it sent them. */
const PREVIOUS_RENEW = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, lease = pcall(cjson.decode, current)
if not ok or lease.leaseId ~= ARGV[1] or lease.term ~= tonumber(ARGV[2]) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;
const PREVIOUS_RELEASE = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, lease = pcall(cjson.decode, current)
if not ok or lease.leaseId ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' and lease.term ~= tonumber(ARGV[2]) then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1`;
