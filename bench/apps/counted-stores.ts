// Counted store instances for the call-count figures (5, 8, 13): one store per instance, as each
// replica has its own; an Azure store goes through its own counting proxy in front of Azurite, since
// Azure bills HTTP requests rather than LeaseStore calls.
import { FaultProxy } from '../../test/support/fault-proxy.js';
import { CountingStore, makeStore } from './stores.js';

export type Made = { store: CountingStore; proxy?: FaultProxy };
let azureTurn: Promise<unknown> = Promise.resolve();

/** A counted store of `kind` (its proxy, if any, pushed to `proxies` for closing). */
export async function storeFor(kind: string, proxies: FaultProxy[], { handover = false } = {}): Promise<Made> {
  if (kind !== 'azure') return { store: new CountingStore(await makeStore(kind), { handover }) };
  // makeStore reads the (swapped) connection string after an await: one Azure store at a time, or
  // a second measurement's store would go through the first one's counting proxy.
  const made = azureTurn.then(() => azureStoreBehindProxy(proxies, handover));
  azureTurn = made.catch(() => undefined);
  return made;
}

async function azureStoreBehindProxy(proxies: FaultProxy[], handover: boolean): Promise<Made> {
  const connectionString = process.env.AZURE_CONNECTION_STRING ?? '';
  const target = Number(/BlobEndpoint=http:\/\/127\.0\.0\.1:(\d+)\//.exec(connectionString)?.[1]);
  if (!target) throw new Error('AZURE_CONNECTION_STRING has no loopback BlobEndpoint');
  const proxy = await FaultProxy.start(target);
  proxies.push(proxy);
  const previous = process.env.AZURE_CONNECTION_STRING;
  process.env.AZURE_CONNECTION_STRING = connectionString.replace(`:${target}/`, `:${proxy.port}/`);
  try {
    return { store: new CountingStore(await makeStore('azure'), { handover }), proxy };
  } finally {
    process.env.AZURE_CONNECTION_STRING = previous;
  }
}

export async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 100));
}

/** The proxy's requests in [from, until) per operation; undefined without a proxy (not Azure). */
export function httpOps(proxy: FaultProxy | undefined, from: number, until: number) {
  if (!proxy) return undefined;
  const ops: Record<string, number> = {};
  for (const call of proxy.log) {
    if (call.at < from || call.at >= until) continue;
    const op = call.op === 'read' || call.op === 'container' ? `${call.op}:${call.method}` : call.op;
    ops[op] = (ops[op] ?? 0) + 1;
  }
  return ops;
}

/** `after − before` per counter. */
export function delta(after: object, before: object): Record<string, number> {
  const b = before as Record<string, number | undefined>;
  return Object.fromEntries(
    Object.entries(after as Record<string, number | undefined>).map(([key, value]) => [
      key,
      (value ?? 0) - (b[key] ?? 0),
    ]),
  );
}
