// @ts-check
// The benchmark run behind bench/run.mjs, in three phases:
//   A  CPU-bound figures (1, 2) alone on the machine          rows/overhead.mjs
//   B  leadership changes between real processes (3, 4), all  jobs.mjs, rows/changes.mjs
//      stores in parallel, while figure 5 counts store calls  rows/calls.mjs
//   C  contention (6, and 9 at fleet size), one store at a time rows/contention.mjs
//   D  several elections per app (10–12): balance, handover,    spread-phase.mjs
//      no flapping (its fleet watched from the start of C);       rows/spread.mjs
//      figure 13 counts its calls in phase B
//   (8, the fleet projection, is computed from figure 5's counts: rows/fleet.mjs)
//   E  store traffic per replica-hour (16), alone: counts    figures/store-traffic.mjs
// servers.mjs starts what the stores need; report.mjs writes latest.json / latest.md and the table.
import { join } from 'node:path';
import { storeTraffic, storeTrafficRows, trafficTable } from '../figures/store-traffic.mjs';
import { DEFAULTS, FAST, TICK_MS } from './impls.mjs';
import { changeJobs, fig3Timings, pool, runJobs } from './jobs.mjs';
import { Child, compileApps, killAll } from './proc.mjs';
import { machineInfo, machineText, writeReport } from './report.mjs';
import { callRows, roundTrips } from './rows/calls.mjs';
import { failoverRows, sideBySideRows } from './rows/changes.mjs';
import { contentionRows } from './rows/contention.mjs';
import { FLEET_CONTENTION, fleetRows, standbyFleetRows } from './rows/fleet.mjs';
import { importCostRows } from './rows/import-cost.mjs';
import { metricsOverheadRows } from './rows/metrics.mjs';
import { decoratorRows, guardRows } from './rows/overhead.mjs';
import { handoverCallRows } from './rows/spread.mjs';
import { ALL_STORES, prepareNleSchemas, startServers } from './servers.mjs';
import { spreadPhase, startFlapWatch } from './spread-phase.mjs';

/** @typedef {import('./rows/common.mjs').Row} Row */

/**
 * @param {{ root: string, startedAt: number, quick: boolean }} run
 * @returns {Promise<number>} the exit code
 */
export async function main({ root, startedAt, quick }) {
  /** @param {string} message */
  const log = (message) => console.log(`[${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)} s] ${message}`);
  // --quick: 2 trials per figure. With 3, phase B's chains booted ~70 Nest processes at once on 2
  // cores and replicas missed their first act within 30 s (failed trials), and the run took ~6 min.
  const N = quick ? 2 : Number(process.env.BENCH_TRIALS ?? 10);
  const PAUSE_N = quick ? 2 : Number(process.env.BENCH_PAUSE_TRIALS ?? 10);
  // --quick trades isolation for time: phase C's contention two stores at a time (a smoke reading;
  // three were no faster: it is CPU-bound), figure 9's 200 electors in 10 processes instead of 20,
  // and no figure 6 (50 electors: figure 9 measures the same at 200; ~30 s of a run that reached
  // 301–329 s on a slow day, over its 5 minutes).
  // Phase B keeps 12 chains at once: 24 were no faster on 2 cores (process boots are CPU-bound)
  // and starved replicas past their 30 s first-act limit, emptying whole rows of figures 3 and 4.
  const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 12);
  const STORES_AT_ONCE = quick ? 2 : 1;
  /** @type {Row[]} */
  const rows = [];
  /** @type {string[]} */
  const errors = [];
  const machine = machineInfo();
  log(`machine: ${machineText(machine)}`);

  const servers = await startServers(log, errors);
  const { available } = servers;
  const STORES = ALL_STORES.filter((store) => available.has(store));
  const apps = await compileApps();
  log(`bench apps compiled: ${apps.files} files in ${apps.ms.toFixed(0)} ms`);
  const stopServers = async () => {
    killAll();
    await servers.stop();
    await apps.dispose();
  };
  process.once('SIGINT', () => void stopServers().finally(() => process.exit(130)));

  /**
   * @param {string} label
   * @param {() => Promise<Row[]>} measure
   */
  const attempt = async (label, measure) => {
    try {
      rows.push(...(await measure()));
    } catch (error) {
      errors.push(`${label}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  try {
    // ---- phase A: CPU-bound figures, alone on the machine (as far as this run goes) ----------
    log('figure 1: decorator overhead (tinybench)…');
    if (quick) process.env.DECORATOR_TIME_MS = '500';
    await attempt('figure 1', decoratorRows);
    log('figure 2: guard overhead (autocannon)…');
    await attempt('figure 2', () => guardRows(quick, errors));
    log('figure 15: metrics overhead (no API, API without SDK, SDK)…');
    await attempt('figure 15', () => metricsOverheadRows(root, quick));
    log('figure 14: cold import cost (fresh processes)…');
    await attempt('figure 14', () => importCostRows(root, quick));

    // ---- phase B: leadership changes between real processes, all stores in parallel ----------
    log(`figures 3–5: ${N} trials per figure, up to ${CONCURRENCY} trial chains at once…`);
    const nleSchemas = available.has('postgres') ? await prepareNleSchemas(10) : [];
    const calls = new Child('calls', 'bench/apps/calls.ts', {
      STORES: STORES.join(','),
      WINDOW_MS: String(quick ? 20_000 : 120_000),
    });
    const handoverCalls = new Child('handover-calls', 'bench/apps/handover-calls.ts', {
      STORES: STORES.join(','),
      WINDOW_MS: String(quick ? 20_000 : 120_000),
      HANDOVERS: String(quick ? 3 : 5),
    });
    const plan = changeJobs({ stores: STORES, available, trials: N, pauseTrials: PAUSE_N, nleSchemas, log });
    // --quick: figure 12's fleet is watched from here (its 60 s must not outlast phases C and D), and
    // the cold starts begin while the last idle peer chains wait out their lease.
    const flap = quick ? startFlapWatch({ stores: STORES, quick, log }) : undefined;
    const results = await runJobs(plan, CONCURRENCY, log, {
      coldWhenLeft: quick ? 3 : 0,
      staggerMs: quick ? 1_000 : 0,
    });
    log('waiting for the calls window…');
    let callsResult;
    await attempt('figure 5', async () => {
      callsResult = await calls.waitFor((e) => e.type === 'result', 300_000, 'calls result');
      return [];
    });
    await calls.kill();
    let handoverCallsResult;
    await attempt('figure 13', async () => {
      handoverCallsResult = await handoverCalls.waitFor((e) => e.type === 'result', 300_000, 'handover calls result');
      return [];
    });
    await handoverCalls.kill();
    const rtt = roundTrips(STORES, callsResult);
    rows.push(...failoverRows(STORES, results, rtt));
    rows.push(...sideBySideRows(plan.side, results, rtt));
    rows.push(...callRows(STORES, callsResult, errors));
    rows.push(...fleetRows(STORES, callsResult, errors));
    rows.push(...standbyFleetRows(join(root, 'bench/results/standby.json'), errors));
    rows.push(...handoverCallRows(STORES, handoverCallsResult, errors));

    // Figure 12's fleet is watched through phases C and D (see spread-phase.mjs); C starts once it is up.
    const watched = flap ?? startFlapWatch({ stores: STORES, quick, log });
    await watched?.up;

    // ---- phase C: contention, one store at a time (figure 6 on every store, then figure 9) ------
    const contention = [
      ...(quick ? [] : STORES.map((store) => ({ store, fleet: undefined }))),
      ...STORES.map((store) => ({
        store,
        fleet: quick ? { ...FLEET_CONTENTION, perProcess: FLEET_CONTENTION.perProcess * 2 } : FLEET_CONTENTION,
      })),
    ];
    await pool(contention, STORES_AT_ONCE, async ({ store, fleet }) => {
      const figure = fleet ? 9 : 6;
      log(`figure ${figure}: ${fleet ? `${fleet.electors}-elector ` : ''}contention on ${store}…`);
      await attempt(`figure ${figure} ${store}`, () =>
        contentionRows(store, fig3Timings(store), { quick, rtt, log }, fleet),
      );
    });

    // ---- phase D: several elections per app ----------------------------------------------------
    const phaseD = Date.now();
    await attempt('figures 10–12', () => spreadPhase({ stores: STORES, quick, log, errors, flap: watched }));
    log(`figures 10–12 took ${((Date.now() - phaseD) / 1000).toFixed(0)} s`);

    // ---- phase E: store traffic, every store at once (counts; ≈ 40 s, 80 s in full) ------------
    log('figure 16: store traffic per replica-hour…');
    await attempt('figure 16', async () => {
      const traffic = await storeTraffic({ stores: STORES, quick, log });
      console.log(`\n${trafficTable(traffic)}\n`);
      return storeTrafficRows(traffic, errors);
    });
  } finally {
    await stopServers();
  }

  await writeReport({
    root,
    startedAt,
    quick,
    machine,
    rows,
    errors,
    timings: { tickMs: TICK_MS, fast: FAST, defaults: DEFAULTS },
  });
  // The one figure with a pass/fail: a balanced cluster must not move leadership.
  return errors.some((e) => e.startsWith('figure 12 FAILED')) ? 1 : 0;
}
