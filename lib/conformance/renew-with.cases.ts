// The folded renewal (renewWith, issue 29): one call that renews, writes leader state under the
// renewal's condition and brings back the pending handover request and shared records. Each case
// checks it against the separate calls (writeState, readHandover, readRecord), the shape a store
// without it keeps: both must answer alike.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type FoldingStore, supportsHandover, supportsRenewWith } from '../stores/lease-store.capabilities.js';
import type { HandoverRequest, Lease, RenewWithOptions } from '../stores/lease-store.js';
import { conformanceMessages as messages } from './conformance.messages.js';
import type { ConformanceCase } from './conformance.types.js';
import {
  callSignal,
  defineCase,
  electionName,
  FAST_TIMEOUT_MS,
  rejectsPromptly,
  rejectsWith,
  type Scope,
  same,
  sleep,
  type Target,
} from './conformance-kit.js';
import { readRecord, recordStore, writeRecord } from './records-kit.js';
import { readState, rejectsLost, stateStore, writeState } from './state.cases.js';

async function foldingStore(s: Scope): Promise<FoldingStore> {
  const store = await s.newStore();
  assert.ok(supportsRenewWith(store), `${store.name} does not declare renewWith`);
  return store;
}

export function renewWithCases(t: Target): ConformanceCase[] {
  const define = (
    name: string,
    needs: { capability: string; declared: boolean | undefined } | undefined,
    timeoutMs: number,
    body: (s: Scope) => Promise<void>,
  ) => {
    const missing = !t.renewWith
      ? messages.noCapability('the folded renewal (renewWith)')
      : needs && !needs.declared
        ? messages.noCapability(needs.capability)
        : undefined;
    return defineCase(t, `folded renewal: ${name}`, timeoutMs, body, missing ? { skipReason: missing } : {});
  };
  const renewWith = (store: FoldingStore, lease: Lease, extra: Omit<RenewWithOptions, 'signal' | 'leaseDurationMs'>) =>
    store.renewWith(lease, { leaseDurationMs: t.durationMs, signal: callSignal(), ...extra });
  const state = { capability: 'leader state (writeState/readState)', declared: t.leaderState };
  const handover = { capability: 'handover (requestHandover/readHandover/clearHandover)', declared: t.handover };
  const records = { capability: 'shared records (readRecord/writeRecord)', declared: t.records };

  return [
    define(
      'extends the lease as renew does, and brings back nothing it was not asked for',
      undefined,
      t.slowTimeoutMs,
      async (s) => {
        const election = electionName('rw-extend');
        const a = await foldingStore(s);
        const b = await s.newStore();
        const lease = await s.acquireOk(a, election, 'a');
        // Renewed at a third of the lease for two leases: held throughout, by the same term.
        const until = Date.now() + 2 * t.durationMs + t.granularityMs;
        while (Date.now() < until) {
          same(await renewWith(a, lease, {}), {}, 'a reply with parts nobody asked for');
          await sleep(t.durationMs / 3);
        }
        const info = await s.read(b, election);
        assert.equal(info.held, true, 'the lease lapsed although renewWith ran every third of it');
        assert.equal(info.holder, 'a');
        assert.equal(info.term, lease.term);
        if (supportsHandover(a)) {
          await renewWith(a, lease, { meta: { advertise: 'http://127.0.0.1:1/rw' } });
          assert.equal((await s.read(b, election)).meta?.advertise, 'http://127.0.0.1:1/rw', 'meta not replaced');
        }
        await s.release(a, lease);
        await rejectsLost(renewWith(a, lease, {}));
      },
    ),

    define(
      'carries leader-state writes: each as writeState writes it, all only when the renewal succeeds',
      state,
      t.slowTimeoutMs,
      async (s) => {
        const election = electionName('rw-state');
        const a = await foldingStore(s);
        const b = await stateStore(s);
        const lease = await s.acquireOk(a, election, 'a');
        const value = { cursor: 'ü/1 "quoted"', n: 3, nested: [null, true, 1.5], empty: {} };
        const reply = await renewWith(a, lease, {
          writeState: [
            { key: 'state', value },
            { key: 'jobs:history:x', value: [1, 2] },
            { key: 'tick:y', value: null },
          ],
        });
        same(reply, {}, 'writes brought back a reply part');
        same(await readState(b, election), { value, term: lease.term });
        same(await readState(b, election, 'jobs:history:x'), { value: [1, 2], term: lease.term });
        same(await readState(b, election, 'tick:y'), { value: null, term: lease.term });
        // A later write of one key leaves the others; the separate call reads the same.
        await renewWith(a, lease, { writeState: [{ key: 'tick:y', value: 'two' }] });
        same(await readState(b, election, 'tick:y'), { value: 'two', term: lease.term });
        same(await readState(b, election), { value, term: lease.term });

        // Checked before anything is sent: a duplicate key, an oversized value (nothing written).
        await rejectsWith(
          renewWith(a, lease, {
            writeState: [
              { key: 'k', value: 1 },
              { key: 'k', value: 2 },
            ],
          }),
          TypeError,
        );
        const huge = 'x'.repeat((a.limits.maxStateBytes ?? 65_536) + 1);
        await rejectsWith(renewWith(a, lease, { writeState: [{ key: 'state', value: huge }] }), RangeError);
        same(await readState(b, election), { value, term: lease.term });

        // Not ours: a stranger's lease id, then our own once expired. Nothing written either time.
        const stranger: Lease = { ...lease, holder: 'stranger', leaseId: randomUUID() };
        await rejectsLost(renewWith(a, stranger, { writeState: [{ key: 'state', value: 'stranger' }] }));
        await sleep(t.expiryWaitMs);
        await rejectsLost(renewWith(a, lease, { writeState: [{ key: 'state', value: 'expired' }] }));
        same(await readState(b, election), { value, term: lease.term });
        const next = await s.acquireOk(b, election, 'b');
        await rejectsLost(renewWith(a, lease, { writeState: [{ key: 'tick:y', value: 'stale' }] }));
        same(await readState(b, election, 'tick:y'), { value: 'two', term: lease.term });
        await writeState(b, next, 'b wrote');
        await s.release(b, next);
      },
    ),

    define(
      'brings back the pending handover request as readHandover answers it, null when none',
      handover,
      FAST_TIMEOUT_MS,
      async (s) => {
        const election = electionName('rw-handover');
        const a = await foldingStore(s);
        const b = await s.newStore();
        assert.ok(supportsHandover(b) && supportsHandover(a));
        const lease = await s.acquireOk(a, election, 'a');
        same(await renewWith(a, lease, { readHandover: true }), { handover: null });
        const request: HandoverRequest = {
          election,
          id: randomUUID(),
          term: lease.term,
          requestedBy: 'operator "ü"',
          reason: 'deploy',
          requestedAt: Date.now(),
          to: 'b',
        };
        await b.requestHandover(request, { signal: callSignal() });
        const separate = await b.readHandover(election, { signal: callSignal() });
        same(separate, request);
        same(await renewWith(a, lease, { readHandover: true }), { handover: separate });
        await b.clearHandover(election, request.id, { signal: callSignal() });
        same(await renewWith(a, lease, { readHandover: true }), { handover: null });
        await s.release(a, lease);
      },
    ),

    define(
      'brings back the records asked for as readRecord answers them, null when absent; their versions write',
      records,
      FAST_TIMEOUT_MS,
      async (s) => {
        const election = electionName('rw-records');
        const a = await foldingStore(s);
        const b = await recordStore(s);
        const lease = await s.acquireOk(a, election, 'a');
        same(await renewWith(a, lease, { readRecords: ['jobs', 'absent'] }), { records: { jobs: null, absent: null } });
        assert.equal(await writeRecord(b, election, 'jobs', { paused: { x: 1 } }, null), true);
        const separate = await readRecord(b, election, 'jobs');
        const reply = await renewWith(a, lease, { readRecords: ['jobs', 'absent'] });
        same(reply, { records: { jobs: separate, absent: null } });
        // The version brought back is the record's: a compare-and-set over it wins, once.
        const version = reply.records?.jobs?.version ?? 'missing';
        assert.equal(await writeRecord(b, election, 'jobs', 'next', version), true);
        assert.equal(await writeRecord(b, election, 'jobs', 'stale', version), false);
        assert.equal((await renewWith(a, lease, { readRecords: ['jobs'] })).records?.jobs?.value, 'next');
        await rejectsWith(renewWith(a, lease, { readRecords: ['jobs', 'jobs'] }), TypeError);
        await rejectsWith(renewWith(a, lease, { readRecords: ['bad key!'] }), TypeError);
        await s.release(a, lease);
        // A lease not ours brings back nothing: the call is refused.
        await rejectsLost(renewWith(a, lease, { readRecords: ['jobs'] }));
      },
    ),

    define('honours its signal: an aborted renewal settles promptly', undefined, FAST_TIMEOUT_MS, async (s) => {
      const election = electionName('rw-abort');
      const a = await foldingStore(s);
      const lease = await s.acquireOk(a, election, 'a');
      await rejectsPromptly(
        a.renewWith(lease, { leaseDurationMs: t.durationMs, signal: AbortSignal.abort(new Error('stop')) }),
      );
      await s.release(a, lease);
    }),
  ];
}
