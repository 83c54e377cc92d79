// EtcdLeaseStore against the etcd the global setup started (ETCD_ENDPOINT): the shared conformance
// and push suites, then what is specific to it: key and lease layout, whole-second limits, push on
// expiry, clients it must not close, auth and network failures.
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { Elector } from '../../lib/election/elector.js';
import { LeaseLostError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import { leaseStoreConformance } from '../../lib/store.js';
import { EtcdLeaseStore } from '../../lib/stores/etcd/etcd.store.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { etcdEndpoint, expectUnreachableIsTransient, uniqueName } from '../setup/servers.js';
import { storeBehindBlackHoleProxy } from '../support/black-hole-proxy.js';
import { portOf, storeBehindReplyLosingProxy } from '../support/reply-losing-proxy.js';
import { describeBlackHoleStopConformance } from './black-hole.conformance.js';
import { describePushHandoverConformance } from './push.conformance.js';
import { deleteEtcdKeys, withEtcd } from './server-clients.js';
import {
  expectMalformedConnectionRefused,
  stateContinuesAfterUpgrade,
  stateWrittenBeforeUpgrade,
} from './store-spec-helpers.js';

/** etcd's smallest lease with default server settings (see EtcdLeaseStore.limits). */
const LEASE_MS = 2_000;
/** Every key of this run starts with this, so parallel runs never meet and clean-up is one call. */
const runPrefix = `${uniqueName('le_etcd')}/`;
const prefix = `${runPrefix}main/`;

const signal = (ms = 10_000) => AbortSignal.timeout(ms);
const quietLogger = { log: () => undefined, warn: () => undefined, error: () => undefined };

afterAll(() => deleteEtcdKeys(runPrefix));

const conformanceCases = leaseStoreConformance({
  leaseDurationMs: LEASE_MS,
  // TTLs are whole seconds and the server revokes expired leases in a periodic sweep.
  expiryGranularityMs: 1_000,
  leaderState: true,
  handover: true,
  records: true,
  push: true,
  renewWith: true,
  createStore: () => new EtcdLeaseStore({ connection: etcdEndpoint(), keyPrefix: prefix }),
  createStoreInFreshNamespace: () =>
    new EtcdLeaseStore({ connection: etcdEndpoint(), keyPrefix: `${runPrefix}${randomBytes(4).toString('hex')}/` }),
  createReplyLosingStore: () =>
    storeBehindReplyLosingProxy(
      portOf(etcdEndpoint(), 2379),
      (port) => new EtcdLeaseStore({ connection: `http://127.0.0.1:${port}`, keyPrefix: prefix }),
    ),
  createBlackHoledStore: () =>
    storeBehindBlackHoleProxy(
      portOf(etcdEndpoint(), 2379),
      (port) => new EtcdLeaseStore({ connection: `http://127.0.0.1:${port}`, keyPrefix: `${runPrefix}blackhole/` }),
    ),
});

describe('LeaseStore conformance: EtcdLeaseStore', () => {
  for (const c of conformanceCases)
    (c.skip ? test.skip : c.concurrent ? test.concurrent : test)(c.name, c.run, c.timeoutMs);
});

describePushHandoverConformance('EtcdLeaseStore', () => ({
  leaseDurationMs: LEASE_MS,
  createStore: () => new EtcdLeaseStore({ connection: etcdEndpoint(), keyPrefix: `${runPrefix}push/` }),
}));

describeBlackHoleStopConformance('EtcdLeaseStore', () => ({
  // A whole-second lease: the elector's call timeout is then 1.5 s.
  leaseDurationMs: 3_000,
  createBlackHoledStore: () =>
    storeBehindBlackHoleProxy(
      portOf(etcdEndpoint(), 2379),
      (port) => new EtcdLeaseStore({ connection: `http://127.0.0.1:${port}`, keyPrefix: `${runPrefix}blackhole/` }),
    ),
}));

describe('EtcdLeaseStore specifics', () => {
  const stores: LeaseStore[] = [];
  const store = (options: ConstructorParameters<typeof EtcdLeaseStore>[0]) => {
    const created = new EtcdLeaseStore(options);
    stores.push(created);
    return created;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close?.()));
  });

  it('keeps the lease as <prefix><election> attached to an etcd lease; the term is its create revision', async () => {
    const s = store({ connection: etcdEndpoint(), keyPrefix: prefix });
    const election = `layout-${randomBytes(4).toString('hex')}`;
    const result = await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!result.acquired) throw new Error('not acquired');
    await withEtcd(async (etcd) => {
      const kv = (await etcd.get(`${prefix}${election}`).exec()).kvs[0];
      expect(kv?.lease).toBe(result.lease.leaseId);
      expect(Number(kv?.create_revision)).toBe(result.lease.term);
      expect(JSON.parse(kv?.value.toString() ?? '{}')).toEqual({ holder: 'a' });
      const ttl = await etcd.leaseClient.leaseTimeToLive({ ID: result.lease.leaseId, keys: false });
      expect(Number(ttl.grantedTTL)).toBe(LEASE_MS / 1000);
    });
    await s.release(result.lease, { signal: signal() });
    await withEtcd(async (etcd) => {
      expect(await etcd.get(`${prefix}${election}`).exec()).toMatchObject({ kvs: [] });
      // Released means revoked: nothing is left for etcd to expire.
      const ttl = await etcd.leaseClient.leaseTimeToLive({ ID: result.lease.leaseId, keys: false });
      expect(Number(ttl.TTL)).toBe(-1);
    });
  });

  it('followers woken by a release to a named identity skip their read: the others are refused, the named one takes it', async () => {
    const election = `woken-reserved-${randomBytes(4).toString('hex')}`;
    const [leader, named, other] = [1, 2, 3].map(() => store({ connection: etcdEndpoint(), keyPrefix: prefix }));
    const first = await leader.acquire({ election, identity: 'leader', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!first.acquired) throw new Error('not acquired');
    const woken = [named, other].map(
      (s) =>
        new Promise<void>((resolve) => {
          s.watch?.(election, resolve);
        }),
    );
    await sleep(300); // the watches are open
    await leader.release(first.lease, { signal: signal(), handoverTo: 'named', reserveMs: 10_000 });
    await Promise.all(woken);
    // Both acquires skip the read: the transaction finds the reservation instead.
    const refused = await other.acquire({ election, identity: 'other', leaseDurationMs: LEASE_MS, signal: signal() });
    expect(refused).toMatchObject({ acquired: false, term: first.lease.term, reservedFor: 'named' });
    const taken = await named.acquire({ election, identity: 'named', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!taken.acquired) throw new Error(`the named follower did not acquire: ${JSON.stringify(taken)}`);
    expect(await other.read(election, { signal: signal() })).toEqual({
      held: true,
      holder: 'named',
      term: taken.lease.term,
    });
    await named.release(taken.lease, { signal: signal() });
  });

  it('upgrade: a lease written by the previous version is read, renewed with meta and released to a named identity', async () => {
    const election = `upgrade-${randomBytes(4).toString('hex')}`;
    const s = store({ connection: etcdEndpoint(), keyPrefix: prefix });
    const lease = await withEtcd((etcd) => previousAcquire(etcd, election, 'old'));
    expect(await s.read(election, { signal: signal() })).toEqual({ held: true, holder: 'old', term: lease.term });
    await s.renew(lease, { leaseDurationMs: 10_000, signal: signal(), meta: { advertise: 'http://old:3000' } });
    expect(await s.read(election, { signal: signal() })).toEqual({
      held: true,
      holder: 'old',
      term: lease.term,
      meta: { advertise: 'http://old:3000' },
    });
    await s.release(lease, { signal: signal(), handoverTo: 'next', reserveMs: 9_500 });
    expect(await s.read(election, { signal: signal() })).toEqual({
      held: false,
      term: lease.term,
      reservedFor: 'next',
    });
    await withEtcd(async (etcd) => {
      // Rounded up to whole seconds: 9.5 s is a 10 s etcd lease.
      const kv = (await etcd.get(`${prefix}${election}/reserved`).exec()).kvs[0];
      const ttl = await etcd.leaseClient.leaseTimeToLive({ ID: kv?.lease ?? '0', keys: false });
      expect(Number(ttl.grantedTTL)).toBe(10);
    });
    const refused = await s.acquire({ election, identity: 'other', leaseDurationMs: LEASE_MS, signal: signal() });
    expect(refused).toMatchObject({ acquired: false, term: lease.term, reservedFor: 'next' });
    if (refused.acquired) throw new Error('unreachable');
    expect(refused.expiresInMs).toBeGreaterThan(0);
    expect(refused.expiresInMs).toBeLessThanOrEqual(10_000);
    const taken = await s.acquire({ election, identity: 'next', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!taken.acquired) throw new Error('the reserved identity did not acquire');
    expect(taken.lease.term).toBeGreaterThan(lease.term);
    await withEtcd(async (etcd) =>
      expect(await etcd.get(`${prefix}${election}/reserved`).exec()).toMatchObject({ kvs: [] }),
    );
    await s.release(taken.lease, { signal: signal() });
  });

  it('upgrade: a replica of the previous version that takes a reserved lease voids the reservation, never extends it', async () => {
    const election = `old-replica-${randomBytes(4).toString('hex')}`;
    const s = store({ connection: etcdEndpoint(), keyPrefix: prefix });
    const first = await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!first.acquired) throw new Error('not acquired');
    await s.release(first.lease, { signal: signal(), handoverTo: 'b', reserveMs: 30_000 });
    await withEtcd(async (etcd) => {
      // The previous version's acquire ignores the reservation key and takes the lease.
      const old = await previousAcquire(etcd, election, 'old');
      expect(await s.read(election, { signal: signal() })).toEqual({ held: true, holder: 'old', term: old.term });
      // Its release (a revoke): the reservation key outlives it, but its term is stale.
      await etcd.leaseClient.leaseRevoke({ ID: old.leaseId });
      expect(await s.read(election, { signal: signal() })).toEqual({ held: false, term: old.term });
    });
    const taken = await s.acquire({ election, identity: 'c', leaseDurationMs: LEASE_MS, signal: signal() });
    expect(taken.acquired).toBe(true);
    if (taken.acquired) await s.release(taken.lease, { signal: signal() });
  });

  it('upgrade: leader state survives a replica of the version before it acquiring, renewing and releasing', async () => {
    const election = `old-state-${randomBytes(4).toString('hex')}`;
    const s = store({ connection: etcdEndpoint(), keyPrefix: prefix });
    const first = await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!first.acquired) throw new Error('not acquired');
    const { read: written, expected: before } = await stateWrittenBeforeUpgrade(s, s, first.lease);
    await withEtcd(async (etcd) => {
      // The previous version's acquire (a txn on the lease and term keys only), its renew (a
      // keep-alive of its etcd lease, which names no key) and its release (a revoke).
      const old = await previousAcquire(etcd, election, 'old');
      expect(await s.read(election, { signal: signal() })).toEqual({ held: true, holder: 'old', term: old.term });
      const stream = await etcd.leaseClient.leaseKeepAlive();
      const renewed = new Promise<{ TTL: string }>((resolve, reject) => {
        stream.on('data', resolve);
        stream.on('error', reject);
      });
      stream.write({ ID: old.leaseId });
      expect(Number((await renewed).TTL)).toBeGreaterThan(0);
      stream.end();
      expect(await written()).toEqual(before);
      await etcd.leaseClient.leaseRevoke({ ID: old.leaseId });
    });
    expect(await written()).toEqual(before);
    const next = await s.acquire({ election, identity: 'b', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!next.acquired) throw new Error('not acquired');
    await stateContinuesAfterUpgrade(s, s, next.lease);
  });

  it('a folded renewal with nothing to put writes nothing; its meta and state puts keep the layout of acquire and writeState', async () => {
    const election = `folded-${randomBytes(4).toString('hex')}`;
    const s = store({ connection: etcdEndpoint(), keyPrefix: prefix });
    const result = await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!result.acquired) throw new Error('not acquired');
    const { lease } = result;
    await withEtcd(async (etcd) => {
      // The election's keys only: another test's reservation expiring meanwhile moves the global revision.
      const revisions = async () =>
        (await etcd.getAll().prefix(`${prefix}${election}`).exec()).kvs.map((kv) => kv.mod_revision);
      const before = await revisions();
      // Only reads in the success branch: a read-only transaction, nothing of the election rewritten.
      const reply = await s.renewWith(lease, {
        leaseDurationMs: LEASE_MS,
        signal: signal(),
        readHandover: true,
        readRecords: ['jobs'],
      });
      expect(reply).toEqual({ handover: null, records: { jobs: null } });
      expect(await revisions()).toEqual(before);
      await s.renewWith(lease, {
        leaseDurationMs: LEASE_MS,
        signal: signal(),
        meta: { advertise: 'http://a:1' },
        writeState: [{ key: 'state', value: { n: 1 } }],
      });
      const kv = (await etcd.get(`${prefix}${election}`).exec()).kvs[0];
      expect(kv?.lease).toBe(lease.leaseId);
      expect(Number(kv?.create_revision)).toBe(lease.term);
      expect(JSON.parse(kv?.value.toString() ?? '{}')).toEqual({ holder: 'a', meta: { advertise: 'http://a:1' } });
      const state = (await etcd.get(`${prefix}${election}/state/state`).exec()).kvs[0];
      expect(state?.value.toString()).toBe(`{"value":{"n":1},"term":${lease.term}}`);
      expect(state?.lease).toBe('0');
    });
    await s.release(lease, { signal: signal() });
  });

  it("a folded renewal under a stranger's live etcd lease is refused and writes nothing: the txn compares the key's lease", async () => {
    const election = `folded-stranger-${randomBytes(4).toString('hex')}`;
    const s = store({ connection: etcdEndpoint(), keyPrefix: prefix });
    const ours = await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
    const theirs = await s.acquire({
      election: `${election}-x`,
      identity: 'x',
      leaseDurationMs: LEASE_MS,
      signal: signal(),
    });
    if (!ours.acquired || !theirs.acquired) throw new Error('not acquired');
    // The keep-alive of the stranger's lease succeeds: only the transaction's compare can refuse.
    const stranger = { ...ours.lease, holder: 'x', leaseId: theirs.lease.leaseId };
    await expect(
      s.renewWith(stranger, {
        leaseDurationMs: LEASE_MS,
        signal: signal(),
        meta: { advertise: 'http://x:1' },
        writeState: [{ key: 'state', value: 'stranger' }],
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await s.readState(election, { signal: signal() })).toBeUndefined();
    expect(await s.read(election, { signal: signal() })).toEqual({ held: true, holder: 'a', term: ours.lease.term });
    await s.release(ours.lease, { signal: signal() });
  });

  it('accepts whole seconds from 2 s only', () => {
    const s = new EtcdLeaseStore({ connection: etcdEndpoint(), keyPrefix: prefix });
    const make = (leaseDurationMs: number) => new Elector({ store: s, election: 'limits', leaseDurationMs });
    expect(() => make(1_000)).toThrow(RangeError);
    expect(() => make(2_500)).toThrow(RangeError);
    expect(() => make(3_000)).not.toThrow();
  });

  it("a crashed leader's lease expires in etcd and a watching follower leads at once, not at its next poll", async () => {
    const election = `crash-${randomBytes(4).toString('hex')}`;
    const crashed = store({ connection: etcdEndpoint(), keyPrefix: prefix });
    // Taken and never renewed nor released: a leader that died.
    const lease = await crashed.acquire({ election, identity: 'crashed', leaseDurationMs: LEASE_MS, signal: signal() });
    expect(lease.acquired).toBe(true);
    const acquiredAt = performance.now();
    const follower = new Elector({
      store: store({ connection: etcdEndpoint(), keyPrefix: prefix }),
      election,
      identity: 'follower',
      leaseDurationMs: LEASE_MS,
      retryIntervalMs: 60_000,
      logger: quietLogger,
    });
    try {
      const elected = new Promise<number>((resolve) => {
        follower.events$.subscribe((event) => {
          if (event.type === 'elected') resolve(performance.now());
        });
      });
      await follower.start();
      expect(follower.isLeader()).toBe(false);
      const electedAt = await Promise.race([elected, sleep(10_000, true).then(() => Number.NaN)]);
      // etcd deletes expired keys within about half a second of the TTL; polling would take a minute.
      expect(electedAt - acquiredAt).toBeGreaterThanOrEqual(LEASE_MS * 0.9);
      expect(electedAt - acquiredAt).toBeLessThan(LEASE_MS + 3_000);
      expect(follower.isLeader()).toBe(true);
    } finally {
      await follower.stop();
    }
  });

  it('a follower woken by the deletion skips its read; if another took the key meanwhile it is told who holds it', async () => {
    const election = `woken-${randomBytes(4).toString('hex')}`;
    const [leader, woken, other] = [1, 2, 3].map(() => store({ connection: etcdEndpoint(), keyPrefix: prefix }));
    const first = await leader.acquire({ election, identity: 'leader', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!first.acquired) throw new Error('not acquired');
    let wake: () => void = () => undefined;
    const woke = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const watch = woken.watch?.(election, () => wake());
    try {
      await sleep(300); // the watch is open
      await leader.release(first.lease, { signal: signal() });
      await woke;
      // Between the wake and the woken follower's acquire, a third replica wins.
      const winner = await other.acquire({ election, identity: 'other', leaseDurationMs: LEASE_MS, signal: signal() });
      if (!winner.acquired) throw new Error('the third replica did not win');
      const lost = await woken.acquire({ election, identity: 'woken', leaseDurationMs: LEASE_MS, signal: signal() });
      // With the holder's remaining lease (whole seconds, rounded up) as the next poll's hint.
      const refused = { acquired: false, holder: 'other', term: winner.lease.term, expiresInMs: expect.any(Number) };
      expect(lost).toEqual(refused);
      // The next acquire reads first again, and finds the same holder.
      const polled = await woken.acquire({ election, identity: 'woken', leaseDurationMs: LEASE_MS, signal: signal() });
      expect(polled).toEqual(refused);
      if (polled.acquired) throw new Error('unreachable');
      expect(polled.expiresInMs).toBeGreaterThan(0);
      expect(polled.expiresInMs).toBeLessThanOrEqual(Math.ceil(LEASE_MS / 1000) * 1000 + 1000);
      await other.release(winner.lease, { signal: signal() });
    } finally {
      await watch?.close();
      await Promise.all([leader, woken, other].map((s) => s.close?.()));
    }
  });

  it('never closes a client the user passed in; close() is idempotent', async () => {
    const client = new Etcd3({ hosts: etcdEndpoint() });
    try {
      const s = new EtcdLeaseStore({ client, keyPrefix: prefix });
      const election = `user-client-${randomBytes(4).toString('hex')}`;
      const watch = s.watch(election, () => undefined);
      const result = await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
      if (!result.acquired) throw new Error('not acquired');
      await s.release(result.lease, { signal: signal() });
      await watch.close();
      await s.close();
      await s.close();
      await client.put(`${prefix}still-open`).value('yes');
      expect(await client.get(`${prefix}still-open`).string()).toBe('yes');
      await expect(s.read(election, { signal: signal() })).rejects.toBeInstanceOf(TransientLeaseStoreError);
    } finally {
      client.close();
    }
  });

  it('credentials for a cluster without authentication are a FatalLeaseStoreError without the password', async () => {
    const s = store({
      connection: { hosts: etcdEndpoint(), auth: { username: 'someone', password: 's3cret-pw' } },
      keyPrefix: prefix,
    });
    const error = await s.read('e', { signal: signal() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'fatal', name: 'FatalLeaseStoreError' });
    expect((error as Error).message).not.toContain('s3cret-pw');
  });

  it('an unreachable or silent server is a TransientLeaseStoreError within the signal', () =>
    expectUnreachableIsTransient((port) => store({ connection: `http://127.0.0.1:${port}`, keyPrefix: prefix })));

  it('refuses a malformed endpoint at construction, naming the option, never echoing it', () => {
    for (const bad of ['http://root:s3cret-pw@etcd:2379', 'etcd:port s3cret-pw', 'ftp://etcd:2379/s3cret-pw']) {
      expectMalformedConnectionRefused(() => new EtcdLeaseStore({ connection: bad }), 'connection', 's3cret-pw');
      expectMalformedConnectionRefused(
        () => new EtcdLeaseStore({ connection: ['http://etcd-1:2379', bad] }),
        'connection',
        's3cret-pw',
      );
      expectMalformedConnectionRefused(
        () => new EtcdLeaseStore({ connection: { hosts: bad } }),
        'connection.hosts',
        's3cret-pw',
      );
    }
    expectMalformedConnectionRefused(
      () => new EtcdLeaseStore({ connection: ['etcd-1:2379', ''] }),
      'connection',
      'etcd-1:2379',
    );
    // A cluster as one comma-separated string (etcdctl's --endpoints): an empty member is refused too.
    expectMalformedConnectionRefused(
      () => new EtcdLeaseStore({ connection: 'http://etcd-1:2379,' }),
      'connection',
      'etcd-1:2379',
    );
    expectMalformedConnectionRefused(() => new EtcdLeaseStore({ connection: [] }), 'connection', 'etcd-1:2379');
    for (const good of [
      etcdEndpoint(),
      'https://etcd-1:2379',
      'etcd-2:2379',
      'http://[::1]:2379',
      'http://etcd-1:2379, http://etcd-2:2379,http://etcd-3:2379',
    ]) {
      expect(() => new EtcdLeaseStore({ connection: good })).not.toThrow();
    }
  });

  it('black-holed connection: a watch closes within the call timeout, the keep-alive redials within 10 s', async () => {
    const {
      store: s,
      proxy,
      close,
    } = await storeBehindBlackHoleProxy(
      portOf(etcdEndpoint(), 2379),
      (port) => new EtcdLeaseStore({ connection: `http://127.0.0.1:${port}`, keyPrefix: prefix, callTimeoutMs: 2_000 }),
    );
    try {
      const election = `blackhole-${randomBytes(4).toString('hex')}`;
      const [first, second] = [1, 2].map(() => s.watch(election, () => undefined));
      await s.read(election, { signal: signal() });
      await sleep(500);
      const dials = proxy.connections;
      proxy.blackHole();
      const blackHoledAt = performance.now();
      // etcd3 waits for the server's answer to a cancel: bounded by the store's call timeout.
      await first?.close();
      expect(performance.now() - blackHoledAt).toBeLessThan(2_000 + 2_000);
      // The keep-alive (6 s + 4 s) gives the silent connection up; the open watch dials again.
      while (proxy.connections === dials && performance.now() - blackHoledAt < 20_000) await sleep(100);
      expect(proxy.connections).toBeGreaterThan(dials);
      expect(performance.now() - blackHoledAt).toBeLessThan(10_000 + 3_000);
      await second?.close();
    } finally {
      await close();
    }
  }, 30_000);

  it('rejects a key prefix with spaces or control characters', () => {
    for (const bad of ['with space', 'tab\t', 'x'.repeat(201)]) {
      expect(() => new EtcdLeaseStore({ connection: etcdEndpoint(), keyPrefix: bad })).toThrow(TypeError);
    }
    expect(() => new EtcdLeaseStore({} as never)).toThrow(TypeError);
  });
});

/**
 * Exactly what the version before handover (0d9c296) did to acquire: a granted etcd lease, then one
 * transaction creating the key `{holder}` attached to it and the term record in the same revision.
 */
async function previousAcquire(etcd: Etcd3, election: string, holder: string) {
  const leaseId = String(BigInt(`0x${randomBytes(7).toString('hex')}`) + 1n);
  await etcd.leaseClient.leaseGrant({ TTL: 10, ID: leaseId });
  const key = `${prefix}${election}`;
  const txn = await etcd
    .if(key, 'Create', '==', 0)
    .then(
      etcd.put(key).value(JSON.stringify({ holder })).lease(leaseId),
      etcd.put(`${key}/term`).value(JSON.stringify({ holder })),
    )
    .commit();
  if (!txn.succeeded) throw new Error('the previous version would not have acquired');
  return { election, holder, leaseId, term: Number(txn.header.revision) };
}

/** `unref`: a timer that only bounds a race must not keep the test process alive. */
function sleep(ms: number, unref = false): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (unref) timer.unref();
  });
}
