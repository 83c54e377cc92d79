// Figure 5: store calls per instance-hour. For each store in STORES, one leader and one follower
// elector (each with its own store instance and connections, as two replicas would have) run with
// the library's default timings for WINDOW_MS; calls are counted at the LeaseStore boundary, and for
// Azure also as HTTP requests (a counting proxy in front of Azurite, one per elector), since Azure
// bills requests. Also measures each store's round trip (median of READS sequential read() calls),
// used by the runner for the bounds of push-capable stores.
//
//   STORES=azure,postgres WINDOW_MS=120000 node --import ./test/support/swc-register.mjs bench/apps/calls.ts
//
// Prints one `@@b {"type":"result", stores: {…}}` line.
import { Elector } from '../../lib/election/elector.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { FaultProxy } from '../../test/support/fault-proxy.js';
import { CountingStore, emit, makeStore, numberEnv } from './stores.js';

const WINDOW_MS = numberEnv('WINDOW_MS', 120_000);
const READS = 25;
const kinds = (process.env.STORES ?? 'azure,postgres,mysql,redis,etcd').split(',').filter(Boolean);

interface Instance {
  store: CountingStore;
  elector: Elector;
  proxy?: FaultProxy;
}

async function storeFor(kind: string, proxies: FaultProxy[]): Promise<{ store: CountingStore; proxy?: FaultProxy }> {
  if (kind !== 'azure') return { store: new CountingStore(await makeStore(kind)) };
  const connectionString = process.env.AZURE_CONNECTION_STRING ?? '';
  const target = Number(/BlobEndpoint=http:\/\/127\.0\.0\.1:(\d+)\//.exec(connectionString)?.[1]);
  if (!target) throw new Error('AZURE_CONNECTION_STRING has no loopback BlobEndpoint');
  const proxy = await FaultProxy.start(target);
  proxies.push(proxy);
  const previous = process.env.AZURE_CONNECTION_STRING;
  process.env.AZURE_CONNECTION_STRING = connectionString.replace(`:${target}/`, `:${proxy.port}/`);
  try {
    return { store: new CountingStore(await makeStore(kind)), proxy };
  } finally {
    process.env.AZURE_CONNECTION_STRING = previous;
  }
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

function httpOps(proxy: FaultProxy | undefined, from: number, until: number) {
  if (!proxy) return undefined;
  const ops: Record<string, number> = {};
  for (const call of proxy.log) {
    if (call.at < from || call.at >= until) continue;
    const op = call.op === 'read' || call.op === 'container' ? `${call.op}:${call.method}` : call.op;
    ops[op] = (ops[op] ?? 0) + 1;
  }
  return ops;
}

async function measure(kind: string) {
  const proxies: FaultProxy[] = [];
  const election = `calls-${kind}-${Date.now().toString(36)}`;
  const instances: Instance[] = [];
  try {
    for (const role of ['leader', 'follower']) {
      const { store, proxy } = await storeFor(kind, proxies);
      const elector = new Elector({ store, election, identity: `${role}-${kind}` });
      await elector.start();
      instances.push({ store, elector, proxy });
    }
    const [leader, follower] = instances;
    if (!leader.elector.isLeader() || follower.elector.isLeader()) throw new Error(`${kind}: unexpected roles`);
    // Start counting from a clean slate once both are in their steady loop.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const before = instances.map((i) => ({ ...i.store.counts }));
    const from = Date.now();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const until = Date.now();
    const elapsed = until - from;
    const stillLeader = leader.elector.isLeader();
    const roles = instances.map((instance, index) => {
      const counts = instance.store.counts;
      const delta = Object.fromEntries(
        Object.entries(counts).map(([key, value]) => [key, value - (before[index] as Record<string, number>)[key]]),
      );
      return { calls: delta, http: httpOps(instance.proxy, from, until) };
    });
    const rtt = await roundTrip(leader.store.inner, election);
    return { elapsedMs: elapsed, stillLeader, leader: roles[0], follower: roles[1], rttMs: rtt };
  } finally {
    await Promise.allSettled(instances.map((i) => i.elector.stop()));
    await Promise.allSettled(instances.map((i) => i.store.close()));
    await Promise.allSettled(proxies.map((p) => p.close()));
  }
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
emit('calls', { type: 'result', windowMs: WINDOW_MS, stores: results });
process.exit(0);
