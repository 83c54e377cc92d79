// RedisLeaseStore shared records (issue 28) against the machine's Redis: the direct cases shared with
// etcd (records-direct.ts), then what is specific to Redis: the hash beside the lease and its lack of
// expiry, versions compared without decoding the value, and a write ioredis resends after a lost reply.
import { FatalLeaseStoreError } from '../../lib/shared/errors.js';
import { RedisLeaseStore } from '../../lib/stores/redis/redis.store.js';
import { REDIS_URL, uniqueName } from '../setup/servers.js';
import { portOf, storeBehindReplyLosingProxy, withPort } from '../support/reply-losing-proxy.js';
import { describeRecordsDirect, electionFor } from './records-direct.js';
import { deleteRedisKeys, withRedis } from './server-clients.js';

const runPrefix = `${uniqueName('le_redis_rec')}:`;
const prefix = `${runPrefix}main:`;
const signal = () => AbortSignal.timeout(10_000);

afterAll(() => deleteRedisKeys(runPrefix));

describeRecordsDirect('RedisLeaseStore', () => ({
  leaseDurationMs: 1_000,
  // Redis expires a key on its own clock, to the millisecond.
  expirySlackMs: 200,
  createStore: () => new RedisLeaseStore({ connection: REDIS_URL, keyPrefix: prefix }),
}));

describe('RedisLeaseStore shared records, Redis specifics', () => {
  const stores: RedisLeaseStore[] = [];
  const store = (keyPrefix = prefix) => {
    const created = new RedisLeaseStore({ connection: REDIS_URL, keyPrefix });
    stores.push(created);
    return created;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it('lives in the hash <prefix>{<election>}:records (field = key), without expiry, and never moves the lease expiry', async () => {
    const keyPrefix = `${runPrefix}layout:`;
    const s = store(keyPrefix);
    expect(await s.writeRecord('jobs', 'board', { paused: ['a'] }, { ifVersion: null, signal: signal() })).toBe(true);
    const record = await s.readRecord('jobs', 'board', { signal: signal() });
    await withRedis(async (redis) => {
      // Written on an election nobody led: the hash only, no lease and no term counter.
      expect(await redis.keys(`${keyPrefix}*`)).toEqual([`${keyPrefix}{jobs}:records`]);
      expect(await redis.hgetall(`${keyPrefix}{jobs}:records`)).toEqual({
        board: JSON.stringify({ value: { paused: ['a'] }, version: record?.version }),
      });
      expect(record?.version).toMatch(/^[0-9a-f-]{36}$/);
      expect(await redis.pttl(`${keyPrefix}{jobs}:records`)).toBe(-1);
      const taken = await s.acquire({ election: 'jobs', identity: 'a', leaseDurationMs: 5_000, signal: signal() });
      if (!taken.acquired) throw new Error('not acquired');
      await redis.pexpire(`${keyPrefix}{jobs}`, 3_000);
      await s.writeRecord('jobs', 'board', 2, { ifVersion: record?.version ?? null, signal: signal() });
      await s.writeRecord('jobs', 'other', 3, { ifVersion: null, signal: signal() });
      const leaseTtl = await redis.pttl(`${keyPrefix}{jobs}`);
      expect(leaseTtl).toBeGreaterThan(0);
      expect(leaseTtl).toBeLessThanOrEqual(3_000);
      expect(await redis.pttl(`${keyPrefix}{jobs}:records`)).toBe(-1);
    });
  });

  it('compares versions without decoding the value: a value nested deeper than cjson decodes is written over', async () => {
    const s = store();
    const election = electionFor('deep');
    // 2,000 levels (4 KB of JSON): Redis's cjson refuses to decode past 1,000.
    const deep = JSON.parse(`${'['.repeat(2_000)}${']'.repeat(2_000)}`) as unknown;
    expect(await s.writeRecord(election, 'deep', deep, { ifVersion: null, signal: signal() })).toBe(true);
    const first = await s.readRecord(election, 'deep', { signal: signal() });
    expect(first?.value).toEqual(deep);
    expect(await s.writeRecord(election, 'deep', deep, { ifVersion: 'stale', signal: signal() })).toBe(false);
    expect(await s.writeRecord(election, 'deep', 'flat', { ifVersion: first?.version ?? null, signal: signal() })).toBe(
      true,
    );
    expect((await s.readRecord(election, 'deep', { signal: signal() }))?.value).toBe('flat');
  });

  it('a version that merely ends like the current one is refused (the compare is the whole version)', async () => {
    const s = store();
    const election = electionFor('suffix');
    await s.writeRecord(election, 'jobs', 1, { ifVersion: null, signal: signal() });
    const { version } = (await s.readRecord(election, 'jobs', { signal: signal() })) ?? { version: '' };
    for (const near of [version.slice(1), version.slice(-1), `x${version}`, `${version}"}`]) {
      expect(await s.writeRecord(election, 'jobs', 2, { ifVersion: near, signal: signal() })).toBe(false);
    }
    expect(await s.readRecord(election, 'jobs', { signal: signal() })).toEqual({ value: 1, version });
  });

  it('a write whose reply is lost after Redis applied it, resent by ioredis on its new connection, answers true, not "condition failed"', async () => {
    const lossy = await storeBehindReplyLosingProxy(
      portOf(REDIS_URL, 6379),
      (port) => new RedisLeaseStore({ connection: withPort(REDIS_URL, port), keyPrefix: prefix }),
    );
    try {
      const election = electionFor('resent');
      const other = store();
      expect(await lossy.store.writeRecord(election, 'jobs', 1, { ifVersion: null, signal: signal() })).toBe(true);
      const before = await other.readRecord(election, 'jobs', { signal: signal() });
      const marker = `marker-${Date.now()}`;
      lossy.loseNextReplyContaining(marker, 'reset');
      const written = await lossy.store.writeRecord(
        election,
        'jobs',
        { marker },
        {
          ifVersion: before?.version ?? null,
          signal: signal(),
        },
      );
      expect(lossy.repliesLost).toBe(1);
      // Answered "false", a read-modify-write caller would read its own value and apply its change twice.
      expect(written).toBe(true);
      const after = await other.readRecord(election, 'jobs', { signal: signal() });
      expect(after?.value).toEqual({ marker });
      expect(after?.version).not.toBe(before?.version);
    } finally {
      await lossy.close();
    }
  });

  it('an entry that is not the JSON this library writes reads as a FatalLeaseStoreError naming the record', async () => {
    const s = store();
    const election = electionFor('corrupt');
    await withRedis((redis) => redis.hset(`${prefix}{${election}}:records`, 'jobs', 'not json'));
    const error = await s.readRecord(election, 'jobs', { signal: signal() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FatalLeaseStoreError);
    expect((error as Error).message).toContain(`"jobs" of election "${election}"`);
    // Nothing this library wrote, so no version of it can match: a write over it is refused.
    expect(await s.writeRecord(election, 'jobs', 1, { ifVersion: 'any', signal: signal() })).toBe(false);
  });
});
