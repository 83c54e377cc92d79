#!/usr/bin/env node
// @ts-check
// What the OpenTelemetry metrics cost: ns per @LeaderOnly call (leader runs it, follower skips it)
// and per lease renewal, in three separate processes:
//   none  @opentelemetry/api cannot be resolved (test/fixtures/block-otel.mjs), as in an app that never installed it
//   api   the API is installed but no SDK is registered (every instrument would be a no-op)
//   sdk   @opentelemetry/sdk-metrics with the Prometheus exporter registered, recording everything
// Real Nest application contexts over the in-memory store (no network: the figures isolate what the
// metrics add). Prints a table and writes bench/results/metrics-overhead.json. No pass/fail.
//
//   node bench/metrics-overhead.mjs [--quick]
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const quick = process.argv.includes('--quick');
const MODES = ['none', 'api', 'sdk'];

if (process.env.METRICS_BENCH_MODE) {
  await measure(process.env.METRICS_BENCH_MODE);
} else {
  /** @typedef {{ median: number, p90: number }} Figure */
  /** @type {Record<string, Record<string, Figure>>} */
  const results = {};
  // The machine is shared: a figure means little without the load it was measured under.
  const loadAtStart = loadavg().map((load) => Number(load.toFixed(2)));
  for (const mode of MODES) {
    const imports = ['--import', join(root, 'test/support/swc-register.mjs')];
    if (mode === 'none') imports.push('--import', join(root, 'test/fixtures/block-otel.mjs'));
    const child = spawnSync(process.execPath, [...imports, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
      cwd: root,
      env: { ...process.env, METRICS_BENCH_MODE: mode },
      encoding: 'utf8',
      timeout: 300_000,
    });
    const line = child.stdout.split('\n').find((l) => l.startsWith('@@m '));
    if (child.status !== 0 || !line) throw new Error(`mode ${mode} failed (${child.status}):\n${child.stderr}`);
    results[mode] = JSON.parse(line.slice(4));
  }
  const rows = [
    ['plain method (baseline)', 'plain'],
    ['@LeaderOnly on the leader', 'leader'],
    ['@LeaderOnly on a follower (skip)', 'follower'],
    ['renew, store as given', 'renewRaw'],
    ['renew, through the metrics view', 'renewViewed'],
  ];
  /** @param {Figure} v */
  const cell = (v) => `${v.median.toFixed(1)} (p90 ${v.p90.toFixed(1)})`.padEnd(24);
  console.log(`ns per call, median of batches (p90)   ${MODES.map((m) => m.padEnd(24)).join('')}`);
  for (const [label, key] of rows)
    console.log(`${label.padEnd(39)}${MODES.map((m) => cell(results[m][key])).join('')}`);
  /** @param {string} mode @param {string} key @param {string} base */
  const delta = (mode, key, base) => results[mode][key].median - results[mode][base].median;
  const summary = {
    leaderOnlyLeaderOverheadNs: Object.fromEntries(MODES.map((m) => [m, delta(m, 'leader', 'plain')])),
    leaderOnlyFollowerOverheadNs: Object.fromEntries(MODES.map((m) => [m, delta(m, 'follower', 'plain')])),
    renewOverheadNs: Object.fromEntries(MODES.map((m) => [m, delta(m, 'renewViewed', 'renewRaw')])),
  };
  console.log('\nadded by metrics (sdk − none), ns per call:');
  console.log(`  @LeaderOnly leader   ${(results.sdk.leader.median - results.none.leader.median).toFixed(1)}`);
  console.log(`  @LeaderOnly follower ${(results.sdk.follower.median - results.none.follower.median).toFixed(1)}`);
  console.log(
    `  renew                ${(results.sdk.renewViewed.median - results.none.renewViewed.median).toFixed(1)}`,
  );
  mkdirSync(join(here, 'results'), { recursive: true });
  const out = join(here, 'results/metrics-overhead.json');
  const machine = {
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    loadAverage: { atStart: loadAtStart, atEnd: loadavg().map((load) => Number(load.toFixed(2))) },
  };
  writeFileSync(
    out,
    `${JSON.stringify({ at: new Date().toISOString(), quick, machine, results, summary }, null, 2)}\n`,
  );
  // Loaded here, in the parent only: the measured processes import nothing of the bench's own.
  const { formatJson } = await import('./lib/report.mjs');
  formatJson(join(here, '..'), out);
  console.log(`\nwritten to ${out}`);
}

/** @typedef {ReturnType<typeof summarize>} Summary */
/** @typedef {import('../lib/store.js').LeaseStore} LeaseStore */
/** @typedef {import('../lib/metrics/instrumented.store.js').StoreCallSink} StoreCallSink */

/** @param {string} mode */
async function measure(mode) {
  const BATCH = 10_000;
  const BATCHES = quick ? 20 : 100;
  const RENEWS = quick ? 2_000 : 20_000;
  if (mode === 'sdk') {
    const { metrics } = await import('@opentelemetry/api');
    const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
    const { PrometheusExporter } = await import('@opentelemetry/exporter-prometheus');
    metrics.setGlobalMeterProvider(
      new MeterProvider({ readers: [new PrometheusExporter({ preventServerStart: true })] }),
    );
  } else if (mode === 'api') {
    await import('@opentelemetry/api');
  }
  await import('reflect-metadata');
  const { Injectable, Module } = await import('@nestjs/common');
  const { NestFactory } = await import('@nestjs/core');
  const lib = await import('../lib/index.js');
  const { ElectionMetrics } = await import('../lib/metrics/election.metrics.js');
  const { instrumentLeaseStore } = await import('../lib/metrics/instrumented.store.js');
  const { resolveMetrics } = await import('../lib/metrics/otel-api.js');

  class Target {
    total = 0;
    /** @param {number} x */
    plain(x) {
      this.total += x;
      return this.total;
    }
    /** @param {number} x */
    guarded(x) {
      this.total += x;
      return this.total;
    }
  }
  // What TypeScript's decorator helper does: the decorator edits the descriptor, which is put back.
  const descriptor = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(Target.prototype, 'guarded'));
  Object.defineProperty(
    Target.prototype,
    'guarded',
    lib.LeaderOnly()(Target.prototype, 'guarded', descriptor) ?? descriptor,
  );
  Injectable()(Target);

  const store = new lib.InMemoryLeaseStore();
  /** @param {string} identity */
  const context = async (identity) => {
    class BenchModule {}
    Module({
      imports: [
        lib.LeaderElectionModule.forRoot({
          store,
          election: 'metrics-bench',
          identity,
          // No renewal inside a measurement.
          leaseDurationMs: 600_000,
          renewIntervalMs: 60_000,
          closeStoreOnShutdown: false,
        }),
      ],
      providers: [Target],
    })(BenchModule);
    // Levels set, debug off, as in production and in figure 1 (bench/apps/overhead-app.ts): with
    // `logger: false` Nest reports no levels, so a skip formats its debug line (~200 ns) for nothing.
    return NestFactory.createApplicationContext(BenchModule, { logger: ['error'] });
  };
  const leader = await context('leader');
  const follower = await context('follower');
  const leaderTarget = leader.get(Target);
  const followerTarget = follower.get(Target);
  if (!leader.get(lib.LeaderElectionService).isLeader()) throw new Error('the first context should lead');
  if (followerTarget.guarded(1) !== undefined) throw new Error('@LeaderOnly is not applied: the follower ran it');

  let sink = 0;
  /** @param {(x: number) => number | undefined} call */
  const batches = (call) => {
    for (let i = 0; i < BATCH * 5; i++) sink += call(i & 1) ?? 0; // warm-up
    /** @type {number[]} */
    const ns = [];
    for (let b = 0; b < BATCHES; b++) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < BATCH; i++) sink += call(i & 1) ?? 0;
      ns.push(Number(process.hrtime.bigint() - start) / BATCH);
    }
    return summarize(ns);
  };
  /**
   * @type {{ mode: string, metricsActive: boolean, plain: Summary, leader: Summary, follower: Summary,
   *   renewRaw?: Summary, renewViewed?: Summary, sinkUsed?: boolean }}
   */
  const result = {
    mode,
    metricsActive: (await resolveMetrics()).meter !== undefined,
    plain: batches((x) => leaderTarget.plain(x)),
    leader: batches((x) => leaderTarget.guarded(x)),
    follower: batches((x) => followerTarget.guarded(x)),
  };

  // A renewal through the view the elector gets (recording into real instruments when an SDK is
  // registered), against the same store called directly.
  const renewStore = new lib.InMemoryLeaseStore();
  /** @type {StoreCallSink} */
  const sink2 = {};
  const { meter } = await resolveMetrics();
  if (meter)
    sink2.recorder = new ElectionMetrics(
      meter,
      leader.get(lib.LeaderElectionService).runtimes.default,
      renewStore.name,
    );
  const viewed = instrumentLeaseStore(renewStore, sink2);
  const signal = new AbortController().signal;
  const won = await renewStore.acquire({ election: 'renew-bench', identity: 'r', leaseDurationMs: 600_000, signal });
  if (!won.acquired) throw new Error('the renew bench could not acquire its lease');
  const renewOptions = { leaseDurationMs: 600_000, signal };
  /** @param {LeaseStore} target */
  const renews = async (target) => {
    for (let i = 0; i < RENEWS / 10; i++) await target.renew(won.lease, renewOptions);
    /** @type {number[]} */
    const ns = [];
    for (let b = 0; b < 20; b++) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < RENEWS / 20; i++) await target.renew(won.lease, renewOptions);
      ns.push(Number(process.hrtime.bigint() - start) / (RENEWS / 20));
    }
    return summarize(ns);
  };
  result.renewRaw = await renews(renewStore);
  result.renewViewed = await renews(viewed);
  result.sinkUsed = sink > 0;
  await Promise.all([leader.close(), follower.close()]);
  process.stdout.write(`@@m ${JSON.stringify(result)}\n`);
  process.exit(0);
}

/** @param {number[]} values */
function summarize(values) {
  const sorted = [...values].sort((a, b) => a - b);
  /** @param {number} q */
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p90: at(0.9), min: sorted[0], samples: sorted.length };
}
