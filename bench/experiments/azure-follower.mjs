// Run: npm run build && node bench/experiments/azure-follower.mjs [--runs N] [--window-s S] [--dist DIR] [--out FILE]
// @ts-check
// AzureBlobLeaseStore on Azurite at the library's default timings: the HTTP requests a leader and a
// follower send per hour (counted at a proxy in front of Azurite), and the two takeover figures the
// follower's polling decides — crash failover (the leader stops without releasing, as on kill -9)
// and graceful handover (stop(), which releases). Runs against the built package (`npm run build`
// first), or another build's dist/esm given with --dist (e.g. the previous commit's, for a
// before/after). Prints a table and writes bench/results/azure-follower.json (--out to change).
//
//   node bench/experiments/azure-follower.mjs [--runs N] [--window-s S] [--dist DIR] [--out FILE]
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AZURITE_ACCOUNT, AZURITE_ACCOUNT_KEY, startAzurite } from '../../scripts/lib/azurite.mjs';
import { countingProxy } from '../lib/azure-proxy.mjs';
import { arg } from '../lib/cli-args.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const RUNS = Number(arg('--runs', '3'));
const WINDOW_MS = Number(arg('--window-s', '30')) * 1_000;
const DIST = resolve(arg('--dist', join(ROOT, 'dist/esm')));
const OUT = resolve(arg('--out', join(ROOT, 'bench/results/azure-follower.json')));

/** @type {typeof import('../../lib/index.js')} */
const lib = await import(pathToFileURL(join(DIST, 'index.js')).href);

/** @param {() => boolean} check @param {number} timeoutMs */
async function until(check, timeoutMs) {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error('timed out');
    await new Promise((done) => setTimeout(done, 5));
  }
}

/** @param {Record<string, number>} counts */
const total = (counts) => Object.values(counts).reduce((a, b) => a + b, 0);

const azurite = await startAzurite();
const silent = { log() {}, warn() {}, error() {} };
try {
  const leaderProxy = await countingProxy(azurite.port);
  const followerProxy = await countingProxy(azurite.port);
  /** @param {number} port */
  const through = (port) =>
    `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_ACCOUNT_KEY};BlobEndpoint=http://127.0.0.1:${port}/${AZURITE_ACCOUNT};`;
  const container = 'bench-follower';
  /** @param {number} port @param {string} election @param {string} identity */
  const elector = (port, election, identity) =>
    new lib.Elector({
      store: new lib.AzureBlobLeaseStore({ connectionString: through(port), container }),
      election,
      identity,
      logger: silent,
    });

  // Requests per hour at defaults: one leader, one follower, over the window.
  const steady = `steady-${randomBytes(3).toString('hex')}`;
  const leader = elector(leaderProxy.port, steady, 'leader');
  await leader.start();
  const follower = elector(followerProxy.port, steady, 'follower');
  await follower.start();
  const from = performance.now();
  await new Promise((done) => setTimeout(done, WINDOW_MS));
  const to = performance.now();
  const perHour = (/** @type {Record<string, number>} */ c) => Math.round((total(c) * 3_600_000) / (to - from));
  const leaderCounts = leaderProxy.counts(from, to);
  const followerCounts = followerProxy.counts(from, to);
  await Promise.all([leader.stop(), follower.stop()]);

  // Takeover: crash (no release) and graceful (release), RUNS each.
  /** @type {{ crash: number[], graceful: number[] }} */
  const takeover = { crash: [], graceful: [] };
  for (const kind of /** @type {const} */ (['graceful', 'crash'])) {
    for (let run = 0; run < RUNS; run++) {
      const election = `${kind}-${randomBytes(3).toString('hex')}`;
      const a = elector(leaderProxy.port, election, 'a');
      const b = elector(followerProxy.port, election, 'b');
      await a.start();
      await b.start();
      // A random phase of b's polling against the stop.
      await new Promise((done) => setTimeout(done, 500 + Math.random() * 2_000));
      const stoppedAt = performance.now();
      await a.stop(kind === 'crash' ? { release: false } : {});
      await until(() => b.isLeader(), 60_000);
      takeover[kind].push(Math.round(performance.now() - stoppedAt));
      await b.stop();
    }
  }
  await Promise.all([leaderProxy.close(), followerProxy.close()]);

  const median = (/** @type {number[]} */ v) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)];
  const result = {
    dist: DIST,
    measuredAt: new Date().toISOString(),
    timings: lib.DEFAULT_TIMINGS,
    windowMs: Math.round(to - from),
    requestsPerHour: { leader: perHour(leaderCounts), follower: perHour(followerCounts) },
    requestsInWindow: { leader: leaderCounts, follower: followerCounts },
    takeoverMs: {
      crash: { runs: takeover.crash, median: median(takeover.crash) },
      graceful: { runs: takeover.graceful, median: median(takeover.graceful) },
    },
  };
  console.log(JSON.stringify(result, null, 2));
  writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await azurite.stop();
}
