// @ts-check
// Figure 16: store traffic per replica-hour at the default timings, by role (leader, follower, and
// with activeFollowers an active follower and a standby one) and by feature (plain, handover
// capability, leader state, once-per-tick, job commands), per store; and the 1,000 × 20 fleet.
// Issue 29's yardstick: before and after the leader's calls are folded into its renewal.
//
//   node bench/figures/store-traffic.mjs [--quick] [--stores=postgres,redis]   (alone: starts Azurite and etcd;
//                                                                          run scripts/ensure-services.sh first)
//
// One child per store (bench/lib/traffic/traffic-run.ts, compiled once with the tests' swc options),
// all at once: each runs every feature configuration as one election of 3 Nest replicas (4 with
// activeFollowers: 2), every replica with its own store, connections and counting proxy. Counted: every
// method call on the store object (a Proxy), and the wire's round trips (a TCP proxy cutting the
// protocol's messages; Azure: HTTP requests). The renew and retry intervals are the defaults ÷ 5 (the
// lease ÷ 2.5) so a 30 s window (60 s in the full run) holds 60 renewals; bench/lib/traffic/projection.mjs
// puts the counts back on the default clock. Writes bench/results/store-traffic.json.
import { rm, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { precompile } from '../lib/precompile.mjs';
import { Child, killAll, ROOT } from '../lib/proc.mjs';
import { formatJson, machineInfo } from '../lib/report.mjs';
import { AZURE_OTHER_PER_10K } from '../lib/rows/calls.mjs';
import { round } from '../lib/stats.mjs';
import { azureMonthlyUsd, FLEET, fleetPerHour, projectStore } from '../lib/traffic/projection.mjs';
import { FIGURE, RESULTS, storeTrafficRows, trafficTable } from '../lib/traffic/traffic-report.mjs';

export { storeTrafficRows, trafficTable };

/**
 * @typedef {ReturnType<typeof projectStore>[number] & { fleet: ReturnType<typeof fleetOf>, leaderBeyond: ReturnType<typeof beyond> }} FeatureTraffic
 * @typedef {{ error?: string, wireCounts?: string, runSeconds?: number, features?: FeatureTraffic[], measured?: unknown }} StoreTraffic
 */

/** The configurations whose job is `once: 'per-tick'`: issue 29 allows their leader one store call per tick. */
const PER_TICK = new Set(['once-per-tick', 'job-commands']);
const ENTRY = 'bench/lib/traffic/traffic-run.ts';
/** The run's periods ÷ SCALE, its lease and deadline ÷ LEASE_SCALE (traffic-run.ts). */
const SCALE = 5;
const LEASE_SCALE = 2.5;
/** What the results file's figures are, in its own words (the docs say the same). */
const METHOD = {
  calls:
    "every method call on the store object, through a Proxy around each replica's store (watch subscriptions and close included when made; none in the window)",
  wire: "round trips a counting proxy in front of the server saw on the replica's own connections (per store: stores.<store>.wireCounts); Azure: HTTP requests",
  scaling:
    "renew and retry intervals, standby poll and the app state period ÷ scale, lease and deadline ÷ leaseScale (Azure keeps 15 s / 10 s); per replica-hour at the defaults: leader calls of the election loop per renewal × 1,440, once-per-tick calls per tick × 3,600 (a 1-s cron, unscaled), job history per min(renewals, ticks) × 1,440, follower polls at the library's nominal delay at the defaults plus the unscaled part of the measured cycle, slot renewals ÷ (slot lease at the defaults ÷ measured), background wire per hour unscaled",
  roles:
    'leader, follower (3 replicas); with activeFollowers 2 (4 replicas): active (holds a candidate slot) and standby',
  fields:
    'per replica in stores.<store>.measured: spanMs (a leader: whole renewal cycles), calls per class and method, wire.requests per label, wire.costs (round trips per call of each kind, least squares over the window), wire.unanswered (messages with no answer: PostgreSQL Parse/Bind/Describe/Execute, HTTP/2 control frames…), bytes (each way, per connection total); failed/failures/silent: calls that rejected or sent nothing',
  features:
    'cumulative: plain (handover, state and records capabilities hidden; a @LeaderOnly() 1-s cron job), handover (+ the handover capability), state (+ the app writes leader state every 5 s), once-per-tick (the job becomes once: per-tick), job-commands (+ the records capability: job control on)',
};

/**
 * Runs the figure on `stores` (their servers' addresses in process.env) and writes its results file.
 * @param {{ stores: string[], quick: boolean, log: (message: string) => void }} options
 */
export async function storeTraffic({ stores, quick, log }) {
  const startedAt = Date.now();
  const machine = machineInfo();
  const settings = {
    SCALE: String(SCALE),
    LEASE_SCALE: String(LEASE_SCALE),
    WINDOW_MS: String(quick ? 30_000 : 60_000),
    WARMUP_MS: '3000',
    STATE_EVERY_S: '5',
    // The standby roles with the handover capability (an app's built-in store, nothing else) and with
    // every feature (followers do not depend on the features); --quick with every feature only: each
    // repeat is 4 more replicas and their connections.
    STANDBY: quick ? 'job-commands' : 'handover,job-commands',
  };
  const dir = join(ROOT, '.tmp', `store-traffic-${process.pid}`);
  await precompile(ROOT, [ENTRY], dir);
  const entry = join(dir, ENTRY.replace(/\.ts$/, '.js'));
  /** @type {Record<string, any>} */
  const measured = {};
  await Promise.all(
    stores.map(async (store) => {
      const child = new Child(`traffic:${store}`, entry, { ...settings, STORE: store }, { loader: false });
      try {
        const event = await child.waitFor((e) => e.type === 'result', 180_000, `${store} traffic result`);
        measured[store] = event;
        log(`figure ${FIGURE}: ${store} measured in ${event.runSeconds.toFixed(0)} s`);
      } catch (error) {
        measured[store] = { error: error instanceof Error ? error.message : String(error) };
      } finally {
        await child.kill();
      }
    }),
  );
  await rm(dir, { recursive: true, force: true });

  /** @type {Record<string, StoreTraffic>} */
  const byStore = {};
  for (const store of stores) {
    const m = measured[store];
    if (!m || m.error) {
      byStore[store] = { error: m?.error ?? 'no result' };
      continue;
    }
    const features = projectStore(m);
    byStore[store] = {
      wireCounts: m.wireCounts,
      runSeconds: m.runSeconds,
      features: features.map((f) => ({ ...f, fleet: fleetOf(store, f.roles), leaderBeyond: beyond(f, m.defaults) })),
      measured: compactRuns(m.runs),
    };
  }
  const output = {
    figure: FIGURE,
    command: `node bench/figures/store-traffic.mjs${quick ? ' --quick' : ''} (or npm run bench)`,
    date: new Date(startedAt).toISOString(),
    runtimeSec: round((Date.now() - startedAt) / 1000, 1),
    node: process.version,
    machine: { ...machine, loadAverageAtEnd: loadavg().map((v) => round(v, 2)) },
    quick,
    method: METHOD,
    settings: {
      scale: SCALE,
      leaseScale: LEASE_SCALE,
      windowMs: Number(settings.WINDOW_MS),
      warmupMs: Number(settings.WARMUP_MS),
      measuredTimings: Object.values(measured).find((m) => m?.timings)?.timings,
      defaults: Object.values(measured).find((m) => m?.defaults)?.defaults,
      fleet: FLEET,
      azureOtherPer10kUsd: AZURE_OTHER_PER_10K,
    },
    stores: byStore,
  };
  const file = join(ROOT, RESULTS);
  await writeFile(file, `${JSON.stringify(output, roundNumbers, 2)}\n`);
  formatJson(ROOT, file);
  return output;
}

/**
 * Issue 29's "done when" at the defaults: the leader's calls beyond one per renewal and one per
 * once-per-tick tick, per 20 s.
 * @param {ReturnType<typeof projectStore>[number]} feature
 * @param {{ renewIntervalMs: number, tickMs: number }} defaults
 */
function beyond(feature, defaults) {
  const leader = feature.roles.leader;
  if (!leader) return null;
  const allowed =
    3_600_000 / defaults.renewIntervalMs + (PER_TICK.has(feature.feature) ? 3_600_000 / defaults.tickMs : 0);
  return { per20s: ((leader.calls - allowed) * 20) / 3_600, allowedPerHour: allowed };
}

/**
 * @param {string} store
 * @param {Record<string, import('../lib/traffic/projection.mjs').RoleHour>} roles
 */
function fleetOf(store, roles) {
  const calls = fleetPerHour(roles, (r) => r.calls);
  const wire = fleetPerHour(roles, (r) => r.wire);
  const billed = store === 'azure' ? fleetPerHour(roles, (r) => r.azure?.billedOther ?? 0) : null;
  return {
    callsPerSecond: calls === null ? null : calls / 3_600,
    wirePerSecond: wire === null ? null : wire / 3_600,
    ...(billed === null ? {} : { billedOtherPerHour: billed, usdPerMonth: azureMonthlyUsd(billed) }),
  };
}

/**
 * The window's counts as the results file keeps them: per replica its role, window, calls, round
 * trips (each kind of call's estimated cost included) and bytes; empty entries left out.
 * @param {Array<{ feature: string, activeFollowers: number | null, error?: string,
 *   replicas: Array<Record<string, any>> }>} runs
 */
function compactRuns(runs) {
  /** @param {Record<string, unknown>} object */
  const nonEmpty = (object) =>
    Object.fromEntries(
      Object.entries(object).filter(
        ([, v]) => v !== undefined && !(typeof v === 'object' && v !== null && Object.keys(v).length === 0),
      ),
    );
  return runs.map((run) => ({
    ...run,
    replicas: run.replicas.map((r) =>
      nonEmpty({
        role: r.role,
        spanMs: r.spanMs,
        renewals: r.renewals,
        ticks: r.ticks,
        leaseCallMs: r.leaseCallMs,
        leadershipChanges: r.leadershipChanges,
        calls: r.calls,
        failed: r.failed,
        failures: r.failures,
        silent: r.silent,
        wire: nonEmpty({
          requests: r.wire.requests,
          background: r.wire.background,
          costs: r.wire.costs,
          unanswered: Object.values(r.wire.unanswered).reduce((a, b) => a + b, 0),
        }),
        bytes: r.bytes,
      }),
    ),
  }));
}

/** JSON numbers to 3 decimals (fractional wire counts, per-hour figures). @param {string} _key @param {unknown} value */
function roundNumbers(_key, value) {
  return typeof value === 'number' && !Number.isInteger(value) ? Number(value.toFixed(3)) : value;
}

// Alone: start what the stores need, run, print.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await import('../../test/support/swc-register.mjs');
  const { ALL_STORES, startServers } = await import('../lib/servers.mjs');
  const quick = process.argv.includes('--quick');
  const only = process.argv.find((a) => a.startsWith('--stores='))?.slice('--stores='.length);
  const startedAt = Date.now();
  /** @param {string} message */
  const log = (message) => console.log(`[${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)} s] ${message}`);
  /** @type {string[]} */
  const errors = [];
  const servers = await startServers(log, errors);
  try {
    const stores = ALL_STORES.filter((s) => servers.available.has(s) && (!only || only.split(',').includes(s)));
    const output = await storeTraffic({ stores, quick, log });
    storeTrafficRows(output, errors);
    console.log(`\n${trafficTable(output)}`);
    if (errors.length) console.log(`\nErrors:\n${errors.map((e) => `  - ${e}`).join('\n')}`);
    console.log(`\nWrote ${RESULTS} in ${((Date.now() - startedAt) / 1000).toFixed(0)} s.`);
  } finally {
    killAll();
    await servers.stop();
  }
}
