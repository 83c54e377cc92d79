// Shared records beside the lease (issue 28): a record write never creates, changes or extends a
// lease, a lease's life (acquire, renew, release, expiry) never touches a record, and records are
// not leader state even under the same key.
import assert from 'node:assert/strict';
import type { StateCapableStore } from '../stores/lease-store.capabilities.js';
import { conformanceMessages as messages } from './conformance.messages.js';
import type { ConformanceCase } from './conformance.types.js';
import { electionName, matches, type Scope, same, sleep, type Target } from './conformance-kit.js';
import { readRecord, recordDefine, recordStores, versionOf, writeRecord } from './records-kit.js';
import { readState, stateStore, writeState } from './state.cases.js';

export function recordLeaseCases(t: Target): ConformanceCase[] {
  const define = recordDefine(t);
  const withState = recordDefine(
    t,
    t.leaderState ? undefined : messages.noCapability('leader state (writeState/readState)'),
  );
  const notHeld = async (s: Scope, store: Parameters<Scope['read']>[0], election: string, term: number) => {
    const info = await s.read(store, election);
    matches(info, { held: false, term }, `the lease of "${election}": ${JSON.stringify(info)}`);
    assert.equal(info.holder, undefined, `the lease of "${election}" has a holder: ${JSON.stringify(info)}`);
  };
  return [
    define(
      'a write on an election nobody ever led creates no lease; acquire, renew and release leave records as they were',
      async (s) => {
        const [a, b] = await recordStores(s, 2);
        const election = electionName('rec-lease');
        assert.equal(await writeRecord(b, election, 'jobs', { paused: ['a'] }, null), true);
        await notHeld(s, a, election, 0);
        const written = await readRecord(a, election, 'jobs');

        const lease = await s.acquireOk(a, election, 'a');
        same(await readRecord(b, election, 'jobs'), written, 'the acquire changed the record');
        // Any replica writes while another holds the lease, and the lease is none the worse for it.
        assert.equal(await writeRecord(b, election, 'jobs', { paused: [] }, written?.version ?? null), true);
        assert.equal(await writeRecord(b, election, 'other', 1, null), true);
        matches(await s.read(b, election), { held: true, holder: 'a', term: lease.term });
        const refused = await s.acquire(b, election, 'b');
        assert.equal(refused.acquired, false, 'a record write freed the lease');
        const after = await readRecord(a, election, 'jobs');
        await s.renew(a, lease);
        same(await readRecord(b, election, 'jobs'), after, 'the renew changed the record');
        await s.release(a, lease);
        same(await readRecord(b, election, 'jobs'), after, 'the release changed the record');
        assert.equal((await readRecord(b, election, 'other'))?.value, 1);
        await notHeld(s, b, election, lease.term);
        // The next acquire finds the lease free, and the records still there.
        const next = await s.acquireOk(b, election, 'b');
        assert.ok(next.term > lease.term, `term ${next.term} after ${lease.term}`);
        same(await readRecord(a, election, 'jobs'), after);
        await s.release(b, next);
      },
    ),

    define(
      'a lease that expires leaves records unchanged, and a record write never extends a lease',
      async (s) => {
        const [a, b] = await recordStores(s, 2);
        const election = electionName('rec-expiry');
        const lease = await s.acquireOk(a, election, 'a');
        assert.equal(await writeRecord(a, election, 'jobs', 'by the leader', null), true);
        // Writes all through the lease's life: none of them may keep the lease alive.
        const deadline = performance.now() + t.expiryWaitMs;
        let version = await versionOf(b, election, 'jobs');
        for (let i = 0; performance.now() < deadline; i++) {
          assert.equal(await writeRecord(b, election, 'jobs', { by: 'b', i }, version), true);
          version = await versionOf(a, election, 'jobs');
          await sleep(Math.min(100, t.durationMs / 5));
        }
        const kept = await readRecord(b, election, 'jobs');
        await notHeld(s, b, election, lease.term);
        same(await readRecord(a, election, 'jobs'), kept, 'the expiry changed the record');
        const next = await s.acquireOk(b, election, 'b');
        assert.ok(next.term > lease.term, `term ${next.term} after ${lease.term}`);
        same(await readRecord(a, election, 'jobs'), kept, 'the takeover changed the record');
        await s.release(b, next);
      },
      t.slowTimeoutMs,
    ),

    withState('records are not leader state: the same key holds a record and a state value, apart', async (s) => {
      const [a, b] = await recordStores(s, 2);
      const state = (await stateStore(s)) as StateCapableStore;
      const election = electionName('rec-state');
      // A record under the state's default key makes no leader state appear.
      assert.equal(await writeRecord(b, election, 'state', 'record', null), true);
      assert.equal(await readState(state, election), undefined);
      const lease = await s.acquireOk(state, election, 'a');
      await writeState(state, lease, 'state value');
      await writeState(state, lease, 'state jobs', 'jobs');
      assert.equal(await readRecord(a, election, 'jobs'), undefined);
      assert.equal(await writeRecord(a, election, 'jobs', 'record jobs', null), true);
      same(await readState(state, election, 'jobs'), { value: 'state jobs', term: lease.term });
      same(await readState(state, election), { value: 'state value', term: lease.term });
      const records = [await readRecord(b, election, 'state'), await readRecord(b, election, 'jobs')];
      assert.equal(records[0]?.value, 'record');
      assert.equal(records[1]?.value, 'record jobs');
      // Each side written again leaves the other as it was, the record's version included.
      await writeState(state, lease, 'state jobs 2', 'jobs');
      await writeState(state, lease, 'state value 2');
      same([await readRecord(a, election, 'state'), await readRecord(a, election, 'jobs')], records);
      assert.equal(await writeRecord(b, election, 'jobs', 'record jobs 2', records[1]?.version ?? null), true);
      same(await readState(state, election, 'jobs'), { value: 'state jobs 2', term: lease.term });
      await s.release(state, lease);
    }),
  ];
}
