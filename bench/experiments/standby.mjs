// Run: node bench/experiments/standby.mjs [--runs N] [--window-s S]
// @ts-check
// Standby followers (`activeFollowers`) on the two stores that do not push, Azure Blob (Azurite) and
// MySQL/MariaDB, at the library's default timings (lease 15 s, renew 2.5 s, retry 2 s) and
// standbyPollMs 30 s. Measured, per store, in the same run:
//   - store calls per hour of each role — leader, active follower, standby follower — over a window,
//     with activeFollowers 2 and R = 6 replicas (each its own store client), beside a plain follower
//     of the same fleet without the option; Azure also as billed HTTP requests (a counting proxy per
//     replica in front of Azurite);
//   - crash failover (the leader stops without releasing, as on kill -9) and graceful handover
//     (stop(): release) with and without the option, RUNS each;
// then projects the fleet (figure 8's formula, per election; an instance's calls grow linearly with
// its elections, which figure 8 checks): calls/h = L + K·A + (R − 1 − K)·S with the option,
// L + (R − 1)·F without. Runs against the built package (`npm run build` first). Writes
// bench/results/standby.json; `npm run bench` puts its projection into figure 8.
//
//   node bench/experiments/standby.mjs [--runs N] [--window-s S]
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AZURITE_ACCOUNT, AZURITE_ACCOUNT_KEY, startAzurite } from '../../scripts/lib/azurite.mjs';
import { countingProxy } from '../lib/azure-proxy.mjs';
import { arg } from '../lib/cli-args.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const RUNS = Number(arg('--runs', '5'));
const WINDOW_MS = Number(arg('--window-s', '240')) * 1_000;
const OUT = join(ROOT, 'bench/results/standby.json');
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const REPLICAS = 6;
const ACTIVE = 2;
const STANDBY_POLL_MS = 30_000;
const FLEET = [10, 100, 1_000];
const ELECTIONS = [1, 20];
/** Azure "other operations", Hot LRS, per 10,000 (as figure 5; not verified against today's price list). */
const AZURE_PER_10K = Number(process.env.BENCH_AZURE_OTHER_PER_10K ?? 0.0044);
const HOURS_PER_MONTH = 730;

const dist = (/** @type {string} */ file) => pathToFileURL(join(ROOT, 'dist/esm', file)).href;
/** @type {typeof import('../../lib/index.js')} */
const lib = await import(dist('index.js'));
/** @type {typeof import('../../lib/mysql.js')} */
const mysqlLib = await import(dist('mysql.js'));
const silent = { log() {}, warn() {}, error() {} };
const tag = () => randomBytes(3).toString('hex');
const sleep = (/** @type {number} */ ms) => new Promise((done) => setTimeout(done, ms));

/**
 * A store client that counts its calls (every LeaseStore method is one call) and can be "crashed":
 * from then on its calls never answer (until their signal aborts), so nothing is released.
 * @param {import('../../lib/store.js').LeaseStore} store
 */
function replicaStore(store) {
  /** @type {number[]} */
  const calls = [];
  let crashed = false;
  const wrapped = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'watch' || property === 'close') return value.bind(target);
      return (/** @type {unknown[]} */ ...args) => {
        if (crashed) {
          const options = /** @type {{ signal?: AbortSignal } | undefined} */ (args.at(-1));
          return new Promise((_, reject) =>
            options?.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true }),
          );
        }
        calls.push(performance.now());
        return value.apply(target, args);
      };
    },
  });
  return {
    store: wrapped,
    crash: () => {
      crashed = true;
    },
    count: (/** @type {number} */ from, /** @type {number} */ to) => calls.filter((t) => t >= from && t < to).length,
  };
}

/** @param {() => boolean} check @param {number} timeoutMs */
async function until(check, timeoutMs) {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error('timed out');
    await sleep(5);
  }
}

const median = (/** @type {number[]} */ v) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)];
const perHour = (/** @type {number} */ count, /** @type {number} */ ms) => (count * 3_600_000) / ms;

/**
 * One store: the calls of each role over the window, then RUNS crash and graceful takeovers with and
 * without standby, all fleets in parallel (each its own election).
 * @param {(replica: number) => Promise<{ store: import('../../lib/store.js').LeaseStore, billed?: (from: number, to: number) => number, close?: () => Promise<void> }>} client
 */
async function measureStore(client) {
  /** @param {boolean} standby @param {string} election */
  async function fleet(standby, election) {
    const replicas = await Promise.all(
      Array.from({ length: REPLICAS }, async (_, i) => {
        const made = await client(i);
        const counted = replicaStore(made.store);
        const elector = new lib.Elector({
          store: counted.store,
          election,
          identity: `${election}-${i}`,
          logger: silent,
          ...(standby ? { activeFollowers: ACTIVE, standbyPollMs: STANDBY_POLL_MS } : {}),
        });
        return { ...made, ...counted, elector };
      }),
    );
    for (const replica of replicas) await replica.elector.start();
    return {
      replicas,
      async stop() {
        await Promise.all(replicas.map((r) => r.elector.stop()));
        await Promise.all(replicas.map((r) => Promise.all([r.store.close?.(), r.close?.()])));
      },
    };
  }

  // ---- calls per role over the window ----
  const steady = `sb-${tag()}`;
  const [withStandby, without] = await Promise.all([fleet(true, steady), fleet(false, `plain-${tag()}`)]);
  // Settle: slots taken at the first poll; one standby poll later everyone is on schedule.
  await sleep(STANDBY_POLL_MS * 1.2);
  const from = performance.now();
  await sleep(WINDOW_MS);
  const to = performance.now();
  const slotHolders = new Set();
  const reader = await client(REPLICAS);
  for (let i = 0; i < ACTIVE; i++) {
    const slot = await reader.store.read(`~standby.${i}.${steady}`, { signal: AbortSignal.timeout(10_000) });
    if (slot.held) slotHolders.add(slot.holder);
  }
  await Promise.all([reader.store.close?.(), reader.close?.()]);
  /** @param {{ replicas: Array<{ elector: import('../../lib/index.js').Elector, count: (a: number, b: number) => number, billed?: (a: number, b: number) => number }> }} f */
  const roles = (f) => {
    /** @type {Record<string, { calls: number[], billed: number[] }>} */
    const byRole = {};
    for (const r of f.replicas) {
      const role = r.elector.isLeader() ? 'leader' : slotHolders.has(r.elector.identity) ? 'active' : 'standby';
      byRole[role] ??= { calls: [], billed: [] };
      byRole[role].calls.push(perHour(r.count(from, to), to - from));
      if (r.billed) byRole[role].billed.push(perHour(r.billed(from, to), to - from));
    }
    return Object.fromEntries(
      Object.entries(byRole).map(([role, v]) => [
        role,
        {
          instances: v.calls.length,
          callsPerHour: Math.round(median(v.calls)),
          billedPerHour: v.billed.length ? Math.round(median(v.billed)) : null,
        },
      ]),
    );
  };
  const standbyRoles = roles(withStandby);
  const plainRoles = roles(without);
  const plain = { leader: plainRoles.leader, follower: plainRoles.standby };
  await Promise.all([withStandby.stop(), without.stop()]);

  // ---- takeovers ----
  /** @type {Record<string, number[]>} */
  const takeover = { 'crash, standby': [], 'crash, plain': [], 'graceful, standby': [], 'graceful, plain': [] };
  for (let run = 0; run < RUNS; run++) {
    await Promise.all(
      Object.keys(takeover).map(async (key) => {
        const [kind, mode] = key.split(', ');
        const f = await fleet(mode === 'standby', `${kind}-${tag()}`);
        try {
          await until(() => f.replicas.some((r) => r.elector.isLeader()), 30_000);
          // Slots taken and a random phase of the followers' polling against the stop.
          await sleep(3_000 + Math.random() * 2_000);
          const leader = f.replicas.find((r) => r.elector.isLeader());
          if (!leader) throw new Error('no leader');
          const stoppedAt = performance.now();
          if (kind === 'crash') leader.crash();
          else await leader.elector.stop();
          await until(() => f.replicas.some((r) => r !== leader && r.elector.isLeader()), 90_000);
          takeover[key].push(Math.round(performance.now() - stoppedAt));
        } finally {
          await f.stop();
        }
      }),
    );
  }
  return {
    windowMs: Math.round(to - from),
    withStandby: standbyRoles,
    without: plain,
    takeoverMs: Object.fromEntries(Object.entries(takeover).map(([k, v]) => [k, { runs: v, median: median(v) }])),
  };
}

/**
 * Per election: L + K·A + (R − 1 − K)·S with standby, L + (R − 1)·F without; × E elections.
 * @param {any} m @param {'callsPerHour' | 'billedPerHour'} unit
 */
function project(m, unit) {
  const L = m.withStandby.leader[unit];
  const A = m.withStandby.active[unit];
  const S = m.withStandby.standby[unit];
  const L0 = m.without.leader[unit];
  const F = m.without.follower[unit];
  if ([L, A, S, L0, F].some((v) => typeof v !== 'number')) return null;
  const rows = [];
  for (const replicas of FLEET) {
    const K = Math.min(ACTIVE, replicas - 1);
    for (const elections of ELECTIONS) {
      const withPerHour = elections * (L + K * A + (replicas - 1 - K) * S);
      const withoutPerHour = elections * (L0 + (replicas - 1) * F);
      rows.push({
        replicas,
        elections,
        withStandby: { perHour: withPerHour, perSecond: withPerHour / 3_600 },
        without: { perHour: withoutPerHour, perSecond: withoutPerHour / 3_600 },
        formula: `${elections} × (${L} + ${K} × ${A} + ${replicas - 1 - K} × ${S}) vs ${elections} × (${L0} + ${replicas - 1} × ${F})`,
        ...(unit === 'billedPerHour'
          ? {
              usdPerMonth: {
                withStandby: (withPerHour * HOURS_PER_MONTH * AZURE_PER_10K) / 10_000,
                without: (withoutPerHour * HOURS_PER_MONTH * AZURE_PER_10K) / 10_000,
              },
            }
          : {}),
      });
    }
  }
  return rows;
}

const startedAt = Date.now();
const load = loadavg()[0];
const azurite = await startAzurite();
/** @type {Array<{ close: () => Promise<void> }>} */
const proxies = [];
try {
  const container = `bench-standby-${tag()}`;
  const azure = measureStore(async () => {
    const proxy = await countingProxy(azurite.port);
    proxies.push(proxy);
    const connectionString = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_ACCOUNT_KEY};BlobEndpoint=http://127.0.0.1:${proxy.port}/${AZURITE_ACCOUNT};`;
    return {
      store: new lib.AzureBlobLeaseStore({ connectionString, container }),
      billed: (from, to) => Object.values(proxy.counts(from, to)).reduce((a, b) => a + b, 0),
      close: () => proxy.close(),
    };
  });
  const table = `bench_standby_${tag()}`;
  const mysql = measureStore(async () => ({
    store: new mysqlLib.MySqlLeaseStore({ connection: MYSQL_URL, table }),
  }));
  const measured = { azure: await azure, mysql: await mysql };
  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: cpus().length, loadAverageAtStart: load },
    runtimeSec: Math.round((Date.now() - startedAt) / 1000),
    settings: {
      timings: lib.DEFAULT_TIMINGS,
      replicas: REPLICAS,
      activeFollowers: ACTIVE,
      standbyPollMs: STANDBY_POLL_MS,
      runs: RUNS,
      azurePer10k: AZURE_PER_10K,
    },
    stores: measured,
    projection: {
      azureBilled: project(measured.azure, 'billedPerHour'),
      azureCalls: project(measured.azure, 'callsPerHour'),
      mysqlCalls: project(measured.mysql, 'callsPerHour'),
    },
  };
  console.log(JSON.stringify(result, null, 2));
  writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await Promise.all(proxies.map((p) => p.close().catch(() => undefined)));
  await azurite.stop();
}
