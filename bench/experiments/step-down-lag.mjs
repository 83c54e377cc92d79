// Run: node bench/experiments/step-down-lag.mjs [--trials=30]
// @ts-check
// Step-down lag on real timers: how long after its deadline a leader's term `signal` aborts (and
// `revoked` is emitted) when nothing reads `isLeader()` — only the deadline timer can end the term.
// The issue-11 reproduction: an in-memory store that the leader cannot reach from the start of its term, the
// issue's timings (lease 2000 / deadline 250 / renew 240, and 3000 / 2000 / 1900, which validation
// accepts), 30 trials each. A second elector polls every 50 ms, so each trial also shows how long
// before the next leader's election the old term's signal aborted (must stay > 0: no overlap).
// Prints a table and writes bench/results/step-down-lag.json. No pass/fail.
//
//   node bench/experiments/step-down-lag.mjs [--trials=30]
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const TRIALS = Number(process.argv.find((arg) => arg.startsWith('--trials='))?.slice('--trials='.length) ?? 30);
const SETTINGS = [
  { leaseDurationMs: 2000, renewDeadlineMs: 250, renewIntervalMs: 240 },
  { leaseDurationMs: 3000, renewDeadlineMs: 2000, renewIntervalMs: 1900 },
];

if (!process.env.STEP_DOWN_BENCH_CHILD) {
  // The library is TypeScript: run again under the tests' swc loader, so this measures lib/ as it is.
  const child = spawnSync(
    process.execPath,
    ['--import', join(root, 'test/support/swc-register.mjs'), fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { cwd: root, env: { ...process.env, STEP_DOWN_BENCH_CHILD: '1' }, stdio: 'inherit', timeout: 900_000 },
  );
  process.exit(child.status ?? 1);
}

const { Elector } = await import('../../lib/election/elector.js');
const { InMemoryLeaseStore } = await import('../../lib/stores/memory/memory.store.js');
const { TransientLeaseStoreError } = await import('../../lib/shared/errors.js');
const { summarize, round } = await import('../lib/stats.mjs');

/** A summary with every figure rounded to 0.01 ms. @param {number[]} values */
const summary = (values) => {
  const { n, median, p95, max, min } = summarize(values);
  return { n, min: round(min, 2), median: round(median, 2), p95: round(p95, 2), max: round(max, 2) };
};

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * `a`'s view of the in-memory store: once `unreachable` is set, every call fails (renewals, the
 * release at step-down, later acquires), the way a network outage looks to it; `b` talks to the
 * store directly. Also records when `a`'s acquire reached the store: the elector reads its send
 * instant just before calling it, so the term's deadline is `acquireAt + renewDeadlineMs` to within
 * microseconds (a hair late, so the measured lag is, if anything, a hair short).
 * @param {import('../../lib/stores/lease-store.js').LeaseStore} inner
 */
function outageFor(inner) {
  const store = Object.create(inner);
  store.unreachable = false;
  store.acquireAt = 0;
  const fail = async () => {
    throw new TransientLeaseStoreError('store unreachable (bench)');
  };
  /** @param {import('../../lib/stores/lease-store.js').AcquireRequest} request */
  store.acquire = (request) => {
    if (store.unreachable) return fail();
    store.acquireAt = performance.now();
    return inner.acquire(request);
  };
  /** @param {import('../../lib/stores/lease-store.js').Lease} lease @param {import('../../lib/stores/lease-store.js').RenewOptions} options */
  store.renew = (lease, options) => (store.unreachable ? fail() : inner.renew(lease, options));
  /** @param {import('../../lib/stores/lease-store.js').Lease} lease @param {import('../../lib/stores/lease-store.js').ReleaseOptions} options */
  store.release = (lease, options) => (store.unreachable ? fail() : inner.release(lease, options));
  return store;
}

/** @param {{ leaseDurationMs: number, renewDeadlineMs: number, renewIntervalMs: number }} timings */
async function trial(timings) {
  const inner = new InMemoryLeaseStore();
  const storeA = outageFor(inner);
  /** @param {string} identity @param {import('../../lib/stores/lease-store.js').LeaseStore} store */
  const make = (identity, store) =>
    new Elector({ store, election: 'lag', identity, logger: quiet, retryIntervalMs: 50, ...timings });
  const a = make('a', storeA);
  await a.start();
  if (!a.isLeader()) throw new Error('a did not lead');
  storeA.unreachable = true; // from the first renewal on
  const deadline = storeA.acquireAt + timings.renewDeadlineMs;
  const signal = a.signal; // the last read: from here on only the deadline timer can end the term
  const aborted = new Promise((resolve) => signal.addEventListener('abort', () => resolve(performance.now())));
  const revoked = new Promise((resolve) =>
    a.events$.subscribe((e) => e.type === 'revoked' && resolve(performance.now())),
  );
  const b = make('b', inner);
  const bElected = new Promise((resolve) =>
    b.events$.subscribe((e) => e.type === 'elected' && resolve(performance.now())),
  );
  await b.start();
  const [abortAt, revokedAt, electedAt] = /** @type {number[]} */ (await Promise.all([aborted, revoked, bElected]));
  await Promise.all([a.stop({ release: false }), b.stop()]);
  return {
    signalLagMs: abortAt - deadline,
    revokedLagMs: revokedAt - deadline,
    abortedBeforeNextLeaderMs: electedAt - abortAt,
  };
}

// The elector's timers never hold a process (they are unref'd): this one does, until the end.
const keepAlive = setInterval(() => undefined, 1_000);
const startedAt = new Date().toISOString();
const load = loadavg()[0];
const results = [];
for (const timings of SETTINGS) {
  /** @type {Array<Awaited<ReturnType<typeof trial>>>} */
  const runs = [];
  for (let i = 0; i < TRIALS; i++) runs.push(await trial(timings));
  results.push({
    timings,
    trials: TRIALS,
    signalLagMs: summary(runs.map((r) => r.signalLagMs)),
    revokedLagMs: summary(runs.map((r) => r.revokedLagMs)),
    abortedBeforeNextLeaderMs: summary(runs.map((r) => r.abortedBeforeNextLeaderMs)),
    overlaps: runs.filter((r) => r.abortedBeforeNextLeaderMs <= 0).length,
    rawSignalLagMs: runs.map((r) => round(r.signalLagMs, 2)),
  });
}

clearInterval(keepAlive);
const out = {
  bench: 'step-down-lag',
  at: startedAt,
  node: process.version,
  cpus: cpus().length,
  loadAverage1m: round(load, 1),
  note: 'real timers, in-memory store unreachable for the leader after its acquire (renewals, release, acquires fail); b polls every 50 ms; lag = term signal abort (or revoked) minus the deadline (acquire send + renewDeadlineMs); a lag down to -1 ms is the wall-clock deadline (Date.now(), whole ms) ending the term first',
  results,
};
mkdirSync(join(here, '../results'), { recursive: true });
writeFileSync(join(here, 'results/step-down-lag.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log(
  `step-down lag on real timers, ${TRIALS} trials each (load average ${round(load, 1)} on ${cpus().length} CPUs)`,
);
console.log(
  '| lease / deadline / renew | signal lag median | p95 | max | aborted before next leader (min) | overlaps |',
);
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of results) {
  const t = r.timings;
  console.log(
    `| ${t.leaseDurationMs} / ${t.renewDeadlineMs} / ${t.renewIntervalMs} | ${r.signalLagMs.median} ms | ${r.signalLagMs.p95} ms | ${r.signalLagMs.max} ms | ${r.abortedBeforeNextLeaderMs.min} ms | ${r.overlaps} |`,
  );
}
console.log('written: bench/results/step-down-lag.json');
