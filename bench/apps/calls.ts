// Figure 5: store calls per instance-hour. For each store in STORES, one leader and one follower
// elector (each with its own store instance and connections, as two replicas would have) run with
// the library's default timings for WINDOW_MS; calls are counted at the LeaseStore boundary, and for
// Azure also as HTTP requests (a counting proxy in front of Azurite, one per elector), since Azure
// bills requests. Also measures each store's round trip (median of READS sequential read() calls),
// used by the runner for the bounds of push-capable stores. The same pair is measured again with
// MULTI_ELECTIONS elections per instance (one store instance shared by its electors, as one replica
// has), for the fleet projection of figure 8 (bench/lib/rows/fleet.mjs).
//
//   STORES=azure,postgres WINDOW_MS=120000 node --import ./test/support/swc-register.mjs bench/apps/calls.ts
//
// Prints one `@@b {"type":"result", stores: {…}}` line.
import { Elector } from '../../lib/election/elector.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import type { FaultProxy } from '../../test/support/fault-proxy.js';
import { delta, httpOps, storeFor, waitUntil } from './counted-stores.js';
import { type CountingStore, emit, numberEnv } from './stores.js';

const WINDOW_MS = numberEnv('WINDOW_MS', 120_000);
const READS = 25;
const MULTI_ELECTIONS = numberEnv('MULTI_ELECTIONS', 20);
const kinds = (process.env.STORES ?? 'azure,postgres,mysql,redis,etcd').split(',').filter(Boolean);

interface Instance {
  store: CountingStore;
  electors: Elector[];
  proxy?: FaultProxy;
}

async function roundTrip(store: LeaseStore, election: string): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < READS; i++) {
    const start = performance.now();
    await store.read(election, { signal: AbortSignal.timeout(5_000) });
    samples.push(performance.now() - start);
  }
  return samples.slice(5); // the first calls open connections
}

async function measure(kind: string, elections: number) {
  const proxies: FaultProxy[] = [];
  const base = `calls-${kind}-${elections}-${Date.now().toString(36)}`;
  const names = Array.from({ length: elections }, (_, i) => `${base}-${i}`);
  const election = names[0] as string;
  const instances: Instance[] = [];
  try {
    for (const role of ['leader', 'follower']) {
      const { store, proxy } = await storeFor(kind, proxies);
      const electors = names.map((name) => new Elector({ store, election: name, identity: `${role}-${kind}` }));
      instances.push({ store, electors, proxy });
      await Promise.all(electors.map((e) => e.start()));
      // On a busy machine a first acquire can fail (connect, table setup): the leader instance gets
      // its retries before the follower instance starts, so each role is what it says.
      if (role === 'leader') await waitUntil(() => electors.every((e) => e.isLeader()), 30_000);
    }
    const [leader, follower] = instances as [Instance, Instance];
    if (!leader.electors.every((e) => e.isLeader()) || follower.electors.some((e) => e.isLeader())) {
      throw new Error(`${kind}: unexpected roles`);
    }
    // Start counting from a clean slate once both are in their steady loop.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const before = instances.map((i) => ({ ...i.store.counts }));
    const from = Date.now();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const until = Date.now();
    const elapsed = until - from;
    const stillLeader = leader.electors.every((e) => e.isLeader());
    const roles = instances.map((instance, index) => {
      const calls = delta(instance.store.counts, before[index] as object);
      return { calls, http: httpOps(instance.proxy, from, until) };
    });
    const rtt = await roundTrip(leader.store.inner, election);
    return { elections, elapsedMs: elapsed, stillLeader, leader: roles[0], follower: roles[1], rttMs: rtt };
  } finally {
    await Promise.allSettled(instances.flatMap((i) => i.electors.map((e) => e.stop())));
    await Promise.allSettled(instances.map((i) => i.store.close()));
    await Promise.allSettled(proxies.map((p) => p.close()));
  }
}

const results: Record<string, unknown> = {};
const multi: Record<string, unknown> = {};
async function measureInto(target: Record<string, unknown>, kind: string, elections: number): Promise<void> {
  try {
    target[kind] = await measure(kind, elections);
  } catch (error) {
    target[kind] = { error: error instanceof Error ? error.message : String(error) };
  }
}
await Promise.all(kinds.flatMap((kind) => [measureInto(results, kind, 1), measureInto(multi, kind, MULTI_ELECTIONS)]));
emit('calls', { type: 'result', windowMs: WINDOW_MS, stores: results, multi });
process.exit(0);
