// RedisLeaseStore against the machine's Redis (REDIS_URL): the shared conformance and push suites,
// then what is specific to it: key layout, clients it must not close, auth, ACL and network
// failures, and an acquire that lands after its caller gave up.
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { messages } from '../../lib/leader-election.messages.js';
import { type LeaseStore, TransientLeaseStoreError } from '../../lib/stores/lease-store.js';
import { RedisLeaseStore } from '../../lib/stores/redis/redis.store.js';
import { expectUnreachableIsTransient, REDIS_URL, TcpGate, uniqueName } from '../setup/servers.js';
import { portOf, storeBehindReplyLosingProxy, withPort } from '../support/reply-losing-proxy.js';
import { describeLeaseStoreConformance, expectMalformedConnectionRefused } from './lease-store.conformance.js';
import { describePushHandoverConformance } from './push.conformance.js';

const LEASE_MS = 1_000;
/** Every key of this run starts with this, so parallel runs never meet and clean-up is one SCAN. */
const runPrefix = `${uniqueName('le_redis')}:`;
const prefix = `${runPrefix}main:`;

const signal = (ms = 10_000) => AbortSignal.timeout(ms);

async function withRedis<T>(work: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(REDIS_URL);
  try {
    return await work(redis);
  } finally {
    redis.disconnect();
  }
}

afterAll(async () => {
  await withRedis(async (redis) => {
    const keys = await redis.keys(`${runPrefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  });
});

describeLeaseStoreConformance('RedisLeaseStore', () => ({
  leaseDurationMs: LEASE_MS,
  leaderState: true,
  createStore: () => new RedisLeaseStore({ connection: REDIS_URL, keyPrefix: prefix }),
  createStoreInFreshNamespace: () =>
    new RedisLeaseStore({ connection: REDIS_URL, keyPrefix: `${runPrefix}${randomBytes(4).toString('hex')}:` }),
  createReplyLosingStore: () =>
    storeBehindReplyLosingProxy(
      portOf(REDIS_URL, 6379),
      (port) => new RedisLeaseStore({ connection: withPort(REDIS_URL, port), keyPrefix: prefix }),
    ),
}));

describePushHandoverConformance('RedisLeaseStore', () => ({
  leaseDurationMs: LEASE_MS,
  createStore: () => new RedisLeaseStore({ connection: REDIS_URL, keyPrefix: `${runPrefix}push:` }),
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

  it('the grants the NOPERM message names are enough for every call, leader state included', async () => {
    const user = uniqueName('le_granted');
    const password = randomBytes(8).toString('hex');
    const grants = messages.redis.permissionDenied(prefix).split('ACL SETUSER <user> ')[1]?.split(' ') ?? [];
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
      await s.release(taken.lease, { signal: signal() });
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
