// One replica's store for the store-traffic figure: built by the bench's own factory (bench/apps/stores.ts,
// which reads the server's address from the environment), pointed at a counting proxy of its own —
// the TCP WireCounter for PostgreSQL, MySQL/MariaDB, Redis and etcd, the tests' HTTP FaultProxy for
// Azurite (Azure bills HTTP requests, which it names) — and logged by loggedStore.
import type { LeaseStore } from '../../../lib/stores/lease-store.js';
import { FaultProxy, type ProxyCall } from '../../../test/support/fault-proxy.js';
import { makeStore } from '../../apps/stores.js';
import { type CallRecord, type Capability, loggedStore } from './call-log.js';
import type { WireSource } from './traffic-window.js';
import { WireCounter } from './wire-counter.js';
import type { WireProtocol } from './wire-protocols.js';

export type TrafficStoreKind = WireProtocol | 'azure';

/** The environment variable makeStore reads each store's address from. */
const ADDRESS_ENV: Record<TrafficStoreKind, string> = {
  postgres: 'PG_URL',
  mysql: 'MYSQL_URL',
  redis: 'REDIS_URL',
  etcd: 'ETCD_ENDPOINT',
  azure: 'AZURE_CONNECTION_STRING',
};
const DEFAULT_PORTS: Record<string, number> = { 'postgres:': 5432, 'mysql:': 3306, 'redis:': 6379, 'http:': 80 };

export interface TrafficStore {
  store: LeaseStore;
  calls: CallRecord[];
  wire: WireSource;
}

/** makeStore reads the address after an await: one store at a time, each with its own address. */
let turn: Promise<unknown> = Promise.resolve();

export function trafficStore(kind: TrafficStoreKind, expose: readonly Capability[]): Promise<TrafficStore> {
  const made = turn.then(() => build(kind, expose));
  turn = made.catch(() => undefined);
  return made;
}

async function build(kind: TrafficStoreKind, expose: readonly Capability[]): Promise<TrafficStore> {
  const name = ADDRESS_ENV[kind];
  const address = process.env[name];
  if (!address) throw new Error(`${name} is not set`);
  const { wire, proxied } = kind === 'azure' ? await azureProxy(address) : await tcpProxy(kind, address);
  const calls: CallRecord[] = [];
  process.env[name] = proxied;
  try {
    return { store: loggedStore(await makeStore(kind), expose, calls), calls, wire };
  } catch (error) {
    await wire.close();
    throw error;
  } finally {
    process.env[name] = address;
  }
}

async function tcpProxy(kind: WireProtocol, address: string): Promise<{ wire: WireSource; proxied: string }> {
  const url = new URL(address);
  const counter = await WireCounter.start(Number(url.port) || (DEFAULT_PORTS[url.protocol] ?? 0), kind);
  url.hostname = '127.0.0.1';
  url.port = String(counter.port);
  const wire: WireSource = {
    messages: () => counter.events,
    bytes: () => {
      const totals = { connections: 0, bytesToServer: 0, bytesToClient: 0, writesToServer: 0, writesToClient: 0 };
      for (const c of counter.connections) {
        totals.connections += 1;
        totals.bytesToServer += c.bytesToServer;
        totals.bytesToClient += c.bytesToClient;
        totals.writesToServer += c.writesToServer;
        totals.writesToClient += c.writesToClient;
      }
      return totals;
    },
    close: () => counter.close(),
  };
  // etcd's endpoint is written without a path; URL adds a slash.
  return { wire, proxied: kind === 'etcd' ? url.origin : url.toString() };
}

async function azureProxy(connectionString: string): Promise<{ wire: WireSource; proxied: string }> {
  const target = Number(/BlobEndpoint=http:\/\/127\.0\.0\.1:(\d+)\//.exec(connectionString)?.[1]);
  if (!target) throw new Error('AZURE_CONNECTION_STRING has no loopback BlobEndpoint');
  const proxy = await FaultProxy.start(target);
  // The proxy stamps a request with Date.now(); the figure matches requests to calls to the
  // sub-millisecond (a renewal and the read after it share their millisecond): stamp each as it is logged.
  const stamps = new WeakMap<ProxyCall, number>();
  const push = proxy.log.push;
  proxy.log.push = (...calls: ProxyCall[]) => {
    const now = performance.now();
    for (const call of calls) stamps.set(call, now);
    return push.apply(proxy.log, calls);
  };
  const wire: WireSource = {
    // Every HTTP request is answered (and billed); labelled as figure 5 labels them (read:HEAD, lease:renew, …).
    messages: () =>
      proxy.log.map((call) => ({
        at: stamps.get(call) ?? Number.NaN,
        label: call.op === 'read' || call.op === 'container' ? `${call.op}:${call.method}` : call.op,
        request: true,
      })),
    bytes: () => undefined,
    close: () => proxy.close(),
  };
  return { wire, proxied: connectionString.replace(`:${target}/`, `:${proxy.port}/`) };
}
