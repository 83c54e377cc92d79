// Figure 6: a few electors in one process, all on one lease, sharing one store instance (one
// connection pool per process, as replicas would have one each). Driven over stdin by the runner:
//   go <epoch ms>   start every elector at that wall-clock instant (all processes race at once)
//   resign          each elector that leads right now resigns (a handover the others race for)
//   counts          print the store calls made so far
//   stop            stop every elector (no release) and exit
// stdout `@@b` events: ready, elected {term, validUntil}, renewed {term, validUntil}, revoked {term},
// counts {counts, total}.
//
//   STORE=redis ELECTION=e ELECTORS=5 PROCESS=3 LEASE_MS=2000 … node --import ./test/support/swc-register.mjs bench/apps/contender.ts
import { Elector } from '../../lib/election/elector.js';
import { CountingStore, emit, makeStore, numberEnv, timingsFromEnv } from './stores.js';

const kind = process.env.STORE ?? '';
const election = process.env.ELECTION ?? 'contention';
const count = numberEnv('ELECTORS', 5);
const processId = process.env.PROCESS ?? String(process.pid);

const store = new CountingStore(await makeStore(kind));
// Open the connections before the race, so "time to the first leader" is not a connect time.
await store.inner.read(election, { signal: AbortSignal.timeout(10_000) });

const electors = Array.from({ length: count }, (_, index) => {
  const identity = `p${processId}-e${index}`;
  const elector = new Elector({
    store,
    election,
    identity,
    ...timingsFromEnv(),
  });
  elector.events$.subscribe((event) => {
    if (event.type === 'elected' || event.type === 'renewed' || event.type === 'revoked') {
      emit(identity, { type: event.type, term: event.term, validUntil: event.validUntil, reason: event.reason });
    }
  });
  return elector;
});

emit(`p${processId}`, { type: 'ready' });

let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  buffer += chunk;
  let newline = buffer.indexOf('\n');
  while (newline >= 0) {
    const line = buffer.slice(0, newline).trim();
    buffer = buffer.slice(newline + 1);
    newline = buffer.indexOf('\n');
    void command(line);
  }
});
process.stdin.on('end', () => process.exit(0));

async function command(line: string): Promise<void> {
  const [verb, arg] = line.split(' ');
  if (verb === 'go') {
    const delay = Math.max(0, Number(arg) - Date.now());
    setTimeout(() => {
      for (const elector of electors) void elector.start();
    }, delay);
  } else if (verb === 'resign') {
    await Promise.all(electors.filter((e) => e.isLeader()).map((e) => e.resign()));
  } else if (verb === 'counts') {
    emit(`p${processId}`, { type: 'counts', counts: store.counts, total: store.total });
  } else if (verb === 'stop') {
    await Promise.allSettled(electors.map((e) => e.stop({ release: false })));
    await store.close().catch(() => undefined);
    process.exit(0);
  }
}
