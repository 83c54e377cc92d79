// Run: node bench/experiments/state-latency.mjs [--quick] [--stores=postgres,redis]
// @ts-check
// What a leader-state write costs on each store: `writeState` latency (a 1 KiB value and a 64 KiB
// one, the size every store promises), beside `readState` and `renew` (the other conditional round
// trip a leader makes) on the same connection. Real servers: Azurite and etcd started on free
// ports, the machine's PostgreSQL / MariaDB / Redis (bench/lib/servers.mjs); the in-memory store as
// the floor. One leader, sequential calls, so each figure is one round trip plus the store's work.
// Prints a table and writes bench/results/state-latency.json. No pass/fail.
//
//   node bench/experiments/state-latency.mjs [--quick] [--stores=postgres,redis]
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const quick = process.argv.includes('--quick');
const only = process.argv.find((arg) => arg.startsWith('--stores='))?.slice('--stores='.length);
/** Sequential samples per figure (after WARMUP unmeasured rounds that open connections). */
const SAMPLES = quick ? 40 : 200;
const WARMUP = 10;
/** Lease long enough for every store (Azure: 15-60 s); renewed in every round anyway. */
const LEASE_MS = 15_000;
const CALL_TIMEOUT_MS = 10_000;

/** @typedef {ReturnType<typeof import('../lib/stats.mjs').summarize>} Summary */
/** @typedef {{ writeState1KiB: Summary, writeState64KiB: Summary, readState: Summary, renew: Summary }} StoreFigures */

if (!process.env.STATE_BENCH_CHILD) {
  // The stores and the server starters are TypeScript: run again under the tests' swc loader.
  const child = spawnSync(
    process.execPath,
    ['--import', join(root, 'test/support/swc-register.mjs'), fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { cwd: root, env: { ...process.env, STATE_BENCH_CHILD: '1' }, stdio: 'inherit', timeout: 900_000 },
  );
  process.exit(child.status ?? 1);
}

const { startServers, ALL_STORES } = await import('../lib/servers.mjs');
const { summarize, round } = await import('../lib/stats.mjs');
const { makeStore } = await import('../apps/stores.js');
const { InMemoryLeaseStore } = await import('../../lib/stores/memory/memory.store.js');
const { supportsState } = await import('../../lib/stores/lease-store.capabilities.js');

/** @type {string[]} */
const errors = [];
const loadAtStart = loadavg().map((x) => round(x, 2));
const wanted = ['memory', ...ALL_STORES].filter((store) => !only || only.split(',').includes(store));
const servers = await startServers((message) => console.error(message), errors);
/** @type {Record<string, StoreFigures | { error: string }>} */
const results = {};
/** @type {Record<string, string>} */
const versions = {};
try {
  for (const kind of wanted) {
    if (kind !== 'memory' && !servers.available.has(kind)) continue;
    try {
      results[kind] = await measure(kind);
      const version = await serverVersion(kind);
      if (version) versions[kind] = version;
    } catch (error) {
      results[kind] = { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
    }
  }
} finally {
  await servers.stop();
}

/** @param {Summary} s */
const cell = (s) => `${round(s.median, 2)} / ${round(s.p95, 2)}`.padEnd(18);
console.log(`\nms per call, median / p95 (${SAMPLES} sequential calls each)`);
console.log(
  `${'store'.padEnd(10)}${['writeState 1 KiB', 'writeState 64 KiB', 'readState', 'renew'].map((h) => h.padEnd(18)).join('')}`,
);
for (const [kind, figures] of Object.entries(results)) {
  if ('error' in figures) {
    console.log(`${kind.padEnd(10)}error: ${figures.error}`);
    continue;
  }
  const { writeState1KiB, writeState64KiB, readState, renew } = figures;
  console.log(`${kind.padEnd(10)}${[writeState1KiB, writeState64KiB, readState, renew].map(cell).join('')}`);
}
for (const error of errors) console.log(`note: ${error}`);

const out = join(here, '../results', 'state-latency.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      what: 'writeState / readState / renew latency per store, ms, sequential calls by one leader on one store instance',
      samples: SAMPLES,
      warmup: WARMUP,
      leaseDurationMs: LEASE_MS,
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
      // The machine is shared: its load average (1, 5, 15 min) before and after the run.
      loadAverage: { atStart: loadAtStart, atEnd: loadavg().map((x) => round(x, 2)) },
      serverVersions: versions,
      at: new Date().toISOString(),
      notes: errors,
      stores: results,
    },
    null,
    2,
  )}\n`,
);
console.log(`\nwritten to ${out}`);

/**
 * The server's own version string, for the figures' labels (undefined when not asked or unknown).
 * @param {string} kind
 * @returns {Promise<string | undefined>}
 */
async function serverVersion(kind) {
  try {
    if (kind === 'postgres') {
      const pg = (await import('pg')).default;
      const client = new pg.Client({ connectionString: process.env.PG_URL });
      await client.connect();
      try {
        return (await client.query('SELECT version() AS v')).rows[0]?.v;
      } finally {
        await client.end();
      }
    }
    if (kind === 'mysql') {
      const mysql = await import('mysql2/promise');
      const connection = await mysql.createConnection(process.env.MYSQL_URL ?? '');
      try {
        const [rows] = await connection.query('SELECT VERSION() AS v');
        return /** @type {Array<{ v: string }>} */ (rows)[0]?.v;
      } finally {
        await connection.end();
      }
    }
    if (kind === 'redis') {
      const { Redis } = await import('ioredis');
      const redis = new Redis(process.env.REDIS_URL ?? '', { lazyConnect: true });
      try {
        await redis.connect();
        return /redis_version:(\S+)/.exec(await redis.info('server'))?.[1];
      } finally {
        redis.disconnect();
      }
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * The figures of one store: warm-up rounds, then SAMPLES rounds of write 1 KiB → read → renew, then
 * SAMPLES / 4 writes of 64 KiB (each followed by a renew, so the lease never lapses).
 * @param {string} kind
 * @returns {Promise<StoreFigures>}
 */
async function measure(kind) {
  /** @type {import('../../lib/stores/lease-store.js').LeaseStore} */
  const store = kind === 'memory' ? new InMemoryLeaseStore() : await makeStore(kind);
  try {
    if (!supportsState(store)) throw new Error(`${store.name} does not support leader state`);
    const election = `state-bench-${randomBytes(4).toString('hex')}`;
    const signal = () => AbortSignal.timeout(CALL_TIMEOUT_MS);
    const acquired = await store.acquire({ election, identity: 'bench', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!acquired.acquired) throw new Error(`could not acquire ${election}`);
    const { lease } = acquired;
    const small = { cursor: 0, payload: 'x'.repeat(1_000) };
    // 64 KiB of JSON exactly: the quotes plus 65 534 characters, different in every write (MySQL
    // skips the commit of an UPDATE that changes nothing, which would flatter it).
    /** @param {number} i */
    const large = (i) => `${String(i).padStart(6, '0')}${'y'.repeat(65_528)}`;
    /** @type {Record<'write1' | 'write64' | 'read' | 'renew', number[]>} */
    const samples = { write1: [], write64: [], read: [], renew: [] };
    /**
     * @param {keyof typeof samples | undefined} into
     * @param {() => Promise<unknown>} call
     */
    const timed = async (into, call) => {
      const start = performance.now();
      await call();
      if (into) samples[into].push(performance.now() - start);
    };
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const measured = i >= WARMUP;
      small.cursor = i;
      await timed(measured ? 'write1' : undefined, () => store.writeState(lease, small, { signal: signal() }));
      await timed(measured ? 'read' : undefined, () => store.readState(election, { signal: signal() }));
      await timed(measured ? 'renew' : undefined, () =>
        store.renew(lease, { leaseDurationMs: LEASE_MS, signal: signal() }),
      );
    }
    for (let i = 0; i < Math.ceil(SAMPLES / 4); i++) {
      await timed('write64', () => store.writeState(lease, large(i), { key: 'large', signal: signal() }));
      await store.renew(lease, { leaseDurationMs: LEASE_MS, signal: signal() });
    }
    await store.release(lease, { signal: signal() });
    return {
      writeState1KiB: summarize(samples.write1),
      writeState64KiB: summarize(samples.write64),
      readState: summarize(samples.read),
      renew: summarize(samples.renew),
    };
  } finally {
    await store.close?.();
  }
}
