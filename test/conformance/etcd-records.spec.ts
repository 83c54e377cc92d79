// EtcdLeaseStore shared records (issue 28) against the etcd the global setup started: the direct
// cases shared with Redis (records-direct.ts), then what is specific to etcd: one key per record
// without an etcd lease, the mod revision as version, and versions etcd3 would misread.
import { FatalLeaseStoreError } from '../../lib/shared/errors.js';
import { EtcdLeaseStore } from '../../lib/stores/etcd/etcd.store.js';
import { etcdEndpoint, uniqueName } from '../setup/servers.js';
import { describeRecordsDirect, electionFor } from './records-direct.js';
import { deleteEtcdKeys, withEtcd } from './server-clients.js';

const runPrefix = `${uniqueName('le_etcd_rec')}/`;
const prefix = `${runPrefix}main/`;
const signal = () => AbortSignal.timeout(10_000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterAll(() => deleteEtcdKeys(runPrefix));

describeRecordsDirect('EtcdLeaseStore', () => ({
  // etcd's smallest lease with default settings (whole seconds).
  leaseDurationMs: 2_000,
  // etcd revokes expired leases in a periodic sweep, and counts TTLs in whole seconds.
  expirySlackMs: 2_000,
  createStore: () => new EtcdLeaseStore({ connection: etcdEndpoint(), keyPrefix: prefix }),
}));

describe('EtcdLeaseStore shared records, etcd specifics', () => {
  const stores: EtcdLeaseStore[] = [];
  const store = (keyPrefix = prefix) => {
    const created = new EtcdLeaseStore({ connection: etcdEndpoint(), keyPrefix });
    stores.push(created);
    return created;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it('one key per record, <prefix><election>/records/<key>: the value JSON, no etcd lease, the mod revision as version', async () => {
    const keyPrefix = `${runPrefix}layout/`;
    const s = store(keyPrefix);
    expect(await s.writeRecord('jobs', 'board', { paused: ['a'] }, { ifVersion: null, signal: signal() })).toBe(true);
    expect(await s.writeRecord('jobs', 'job:x', 1, { ifVersion: null, signal: signal() })).toBe(true);
    const record = await s.readRecord('jobs', 'board', { signal: signal() });
    await withEtcd(async (etcd) => {
      const kvs = (await etcd.getAll().prefix(keyPrefix).exec()).kvs;
      // Written on an election nobody led: the records only, no lease and no term record.
      expect(kvs.map((kv) => kv.key.toString()).sort()).toEqual([
        `${keyPrefix}jobs/records/board`,
        `${keyPrefix}jobs/records/job:x`,
      ]);
      const board = kvs.find((kv) => kv.key.toString().endsWith('/board'));
      expect(board?.value.toString()).toBe('{"paused":["a"]}');
      expect(board?.lease).toBe('0');
      expect(record).toEqual({ value: { paused: ['a'] }, version: board?.mod_revision });
    });
  });

  it('a version etcd3 would misread (not a positive decimal, or too long for an int64) is refused, never sent', async () => {
    const s = store();
    const election = electionFor('bad-version');
    // etcd3 sends an unparsable revision as 0, which an absent key matches: it would create.
    for (const bad of ['abc', '0', '0x10', '-1', '01', '1e3', '9'.repeat(20)]) {
      expect(await s.writeRecord(election, 'jobs', bad, { ifVersion: bad, signal: signal() })).toBe(false);
    }
    expect(await s.readRecord(election, 'jobs', { signal: signal() })).toBeUndefined();
    await s.writeRecord(election, 'jobs', 'kept', { ifVersion: null, signal: signal() });
    const kept = await s.readRecord(election, 'jobs', { signal: signal() });
    for (const bad of ['abc', '0x10']) {
      expect(await s.writeRecord(election, 'jobs', bad, { ifVersion: bad, signal: signal() })).toBe(false);
    }
    expect(await s.readRecord(election, 'jobs', { signal: signal() })).toEqual(kept);
  });

  it('record writes never wake a watch of the election (only the lease key is watched)', async () => {
    const s = store();
    const election = electionFor('watch');
    let wakes = 0;
    const watch = s.watch(election, () => {
      wakes += 1;
    });
    try {
      const taken = await s.acquire({ election, identity: 'a', leaseDurationMs: 10_000, signal: signal() });
      if (!taken.acquired) throw new Error('not acquired');
      await sleep(300); // the watch is open
      for (let i = 0; i < 3; i++) {
        const version = (await s.readRecord(election, 'jobs', { signal: signal() }))?.version ?? null;
        expect(await s.writeRecord(election, 'jobs', i, { ifVersion: version, signal: signal() })).toBe(true);
      }
      await sleep(300);
      expect(wakes).toBe(0);
      // The watch does work: the release wakes it.
      await s.release(taken.lease, { signal: signal() });
      for (let waited = 0; wakes === 0 && waited < 5_000; waited += 50) await sleep(50);
      expect(wakes).toBe(1);
    } finally {
      await watch.close();
    }
  });

  it('a value that is not JSON reads as a FatalLeaseStoreError naming the record', async () => {
    const s = store();
    const election = electionFor('corrupt');
    await withEtcd((etcd) => etcd.put(`${prefix}${election}/records/jobs`).value('not json').exec());
    const error = await s.readRecord(election, 'jobs', { signal: signal() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FatalLeaseStoreError);
    expect((error as Error).message).toContain(`"jobs" of election "${election}"`);
  });
});
