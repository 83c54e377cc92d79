// Figure 13: what the handover capability (issue 14: spread, handover requests) costs in store calls.
// For each store in STORES, two leader/follower pairs run side by side with the library's default
// timings for WINDOW_MS, each elector on its own store instance (as replicas have):
//   baseline  the store with the capability hidden (as a third-party store, or the previous version)
//   handover  the store as it is, the electors publishing a leadership count as spread does
// Calls are counted at the LeaseStore boundary (for Azure also as HTTP requests). Then HANDOVERS
// directed handovers between the second pair, each requested by a third instance, counted from the
// request until the named elector is elected: the one-time cost of a handover.
//
//   STORES=postgres,redis WINDOW_MS=120000 HANDOVERS=3 node --import ./test/support/swc-register.mjs bench/apps/handover-calls.ts
//
// Prints one `@@b {"type":"result", stores: {…}}` line.
import { Elector } from '../../lib/election/elector.js';
import type { FaultProxy } from '../../test/support/fault-proxy.js';
import { delta, httpOps, storeFor, waitUntil } from './counted-stores.js';
import { type CountingStore, emit, numberEnv } from './stores.js';

const WINDOW_MS = numberEnv('WINDOW_MS', 120_000);
const HANDOVERS = numberEnv('HANDOVERS', 3);
const kinds = (process.env.STORES ?? 'azure,postgres,mysql,redis,etcd').split(',').filter(Boolean);

interface Instance {
  role: string;
  store: CountingStore;
  elector: Elector;
  proxy?: FaultProxy;
}

async function instance(kind: string, role: string, election: string, handover: boolean, proxies: FaultProxy[]) {
  const { store, proxy } = await storeFor(kind, proxies, { handover });
  const elector = new Elector({ store, election, identity: `${role}-${kind}` });
  // What spread publishes in a balanced cluster of as many replicas as elections: one each.
  if (handover) elector.setLeaderships(1);
  return { role, store, elector, proxy } satisfies Instance;
}

async function measure(kind: string) {
  const proxies: FaultProxy[] = [];
  const base = `hcalls-${kind}-${Date.now().toString(36)}`;
  const all: Instance[] = [];
  try {
    for (const handover of [false, true]) {
      const election = `${base}-${handover ? 'handover' : 'baseline'}`;
      const leader = await instance(kind, handover ? 'leader' : 'base-leader', election, handover, proxies);
      all.push(leader);
      await leader.elector.start();
      await waitUntil(() => leader.elector.isLeader(), 30_000);
      const follower = await instance(kind, handover ? 'follower' : 'base-follower', election, handover, proxies);
      all.push(follower);
      await follower.elector.start();
    }
    const [baseLeader, , leader, follower] = all as [Instance, Instance, Instance, Instance];
    if (!baseLeader.elector.isLeader() || !leader.elector.isLeader() || follower.elector.isLeader()) {
      throw new Error(`${kind}: unexpected roles`);
    }
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const before = all.map((i) => ({ ...i.store.counts }));
    const from = Date.now();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const until = Date.now();
    const window = Object.fromEntries(
      all.map((i, index) => [
        i.role,
        { calls: delta(i.store.counts, before[index] as object), http: httpOps(i.proxy, from, until) },
      ]),
    );
    const stillLeaders = baseLeader.elector.isLeader() && leader.elector.isLeader();
    const handovers = await handoverCosts(kind, leader, follower, proxies);
    return { elapsedMs: until - from, stillLeaders, window, handovers };
  } finally {
    await Promise.allSettled(all.map((i) => i.elector.stop()));
    await Promise.allSettled(all.map((i) => i.store.close()));
    await Promise.allSettled(proxies.map((p) => p.close()));
  }
}

/** HANDOVERS directed handovers back and forth between `a` (leading) and `b`, asked by a third instance. */
async function handoverCosts(kind: string, a: Instance, b: Instance, proxies: FaultProxy[]) {
  const requester = await instance(kind, 'requester', a.elector.election, true, proxies);
  const results = [];
  try {
    let [from, to] = [a, b];
    for (let i = 0; i < HANDOVERS; i++) {
      const instances = [requester, from, to];
      const before = instances.map((x) => ({ ...x.store.counts }));
      const sentAt = Date.now();
      await requester.elector.requestHandover({ to: to.elector.identity, reason: 'bench' });
      await waitUntil(() => to.elector.isLeader(), 30_000);
      const electedAt = Date.now();
      // The old leader's release is sent before the new leader can win; its sit-out polls are not counted.
      const calls = Object.fromEntries(
        instances.map((x, index) => [
          x.role === 'requester' ? 'requester' : x === from ? 'old' : 'new',
          delta(x.store.counts, before[index] as object),
        ]),
      );
      const http = Object.fromEntries(
        instances.map((x) => [
          x === requester ? 'requester' : x === from ? 'old' : 'new',
          httpOps(x.proxy, sentAt, electedAt),
        ]),
      );
      results.push({
        ok: to.elector.isLeader(),
        ms: electedAt - sentAt,
        calls,
        http: kind === 'azure' ? http : undefined,
      });
      [from, to] = [to, from];
      // The old leader sits out two retries; the next request goes to a settled pair.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
    }
  } finally {
    await requester.elector.stop();
    await requester.store.close();
  }
  return results;
}

const results: Record<string, unknown> = {};
await Promise.all(
  kinds.map(async (kind) => {
    try {
      results[kind] = await measure(kind);
    } catch (error) {
      results[kind] = { error: error instanceof Error ? error.message : String(error) };
    }
  }),
);
emit('handover-calls', { type: 'result', windowMs: WINDOW_MS, stores: results });
process.exit(0);
