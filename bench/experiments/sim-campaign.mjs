// Run: npm run bench:sim (SIM_RUNS=100000 SIM_WORKERS=2 node bench/experiments/sim-campaign.mjs)
// @ts-check
// A long deterministic-simulation campaign (test/sim): real Electors over a simulated faulty store,
// and replicas running every feature through the handle layer (the first `SIM_FEATURE_RUNS` runs,
// default all), `SIM_RUNS` schedules (default 100000) from `SIM_SEED`, split over `SIM_WORKERS` processes
// (default 1: the machine is shared). Prints the figures and writes bench/results/sim.json. Any
// violation is listed with the command that replays its run alone. `SIM_BUDGET_S` ends each worker
// after that many seconds (a shared machine can be slower than planned): the result then says how
// many of the requested runs were done, and which ones.
//
//   SIM_RUNS=100000 SIM_WORKERS=2 node bench/experiments/sim-campaign.mjs
//   SIM_CHECKS=lag,overlap SIM_FAULTS=partition,early node bench/experiments/sim-campaign.mjs   (narrowed)
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const register = join(root, 'test/support/swc-register.mjs');

if (process.argv[2] === '--child') {
  // One share of the campaign, in TypeScript through the tests' swc loader; JSON on stdout.
  const [first, count, seed, budgetS, featureShare] = process.argv.slice(3).map(Number);
  const featureRuns = Math.min(count, featureShare);
  const endAt = budgetS > 0 ? Date.now() + budgetS * 1000 : Number.POSITIVE_INFINITY;
  const { campaign } = await import(pathToFileURL(join(root, 'test/sim/campaign.ts')).href);
  const { CHECKS, enabledChecks } = await import(pathToFileURL(join(root, 'test/sim/checker.ts')).href);
  const every = Math.max(1, Math.floor(count / 20));
  const report = await campaign(
    seed,
    count,
    enabledChecks(),
    first,
    (/** @type {number} */ done) => {
      if (done % every === 0) process.stderr.write(`  runs ${first}..${first + done - 1} done\n`);
    },
    () => Date.now() >= endAt,
    featureRuns,
  );
  report.firstRun = first;
  report.checks = CHECKS.filter((/** @type {string} */ c) => enabledChecks().has(c));
  process.stdout.write(JSON.stringify(report));
  process.exit(0);
}

const runs = Number(process.env.SIM_RUNS ?? 100_000);
const seed = Number(process.env.SIM_SEED ?? 20_261_123);
const workers = Math.max(1, Number(process.env.SIM_WORKERS ?? 1));
const budgetS = Number(process.env.SIM_BUDGET_S ?? 0);
// The first SIM_FEATURE_RUNS runs (default all) also simulate the feature world, split like the runs.
const featureRuns = Math.min(runs, Number(process.env.SIM_FEATURE_RUNS ?? runs));
/** @param {number} i */
const featureShare = (i) => Math.floor((featureRuns * (i + 1)) / workers) - Math.floor((featureRuns * i) / workers);
const startedAt = Date.now();
console.log(`sim campaign: ${runs} schedules, seed ${seed}, ${workers} worker(s)`);

/**
 * @typedef {{ count: number, first: { run: number, violation: { message: string } } }} Found
 * @typedef {{ recoveries: number[], byCheck: Record<string, Found>, maxLagMs: number } & Record<string, any>} Report
 */
/** @type {Promise<Report>[]} */
const shares = Array.from({ length: workers }, (_, i) => {
  const first = Math.floor((runs * i) / workers);
  const count = Math.floor((runs * (i + 1)) / workers) - first;
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        register,
        fileURLToPath(import.meta.url),
        '--child',
        first,
        count,
        seed,
        budgetS,
        featureShare(i),
      ].map(String),
      { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`worker exited ${code}`))));
  });
});
const reports = await Promise.all(shares);

const recoveries = reports.flatMap((r) => r.recoveries).sort((a, b) => a - b);
/** @param {number} p */
const q = (p) =>
  Math.round(recoveries[Math.min(recoveries.length - 1, Math.floor(p * recoveries.length))] ?? Number.NaN);
/** @type {Record<string, Found>} */
const byCheck = {};
for (const report of reports) {
  for (const [check, found] of Object.entries(report.byCheck)) {
    byCheck[check] ??= { count: 0, first: found.first };
    const entry = byCheck[check];
    entry.count += found.count;
    if (found.first.run < entry.first.run) entry.first = found.first;
  }
}
/** @param {string} key */
const sum = (key) => reports.reduce((total, r) => total + r[key], 0);
const figures = {
  at: new Date().toISOString(),
  seed,
  runs: sum('runs'),
  // Every run simulates the electors alone, and (the first SIM_FEATURE_RUNS) the feature world too.
  featureRuns: sum('featureRuns'),
  ...(sum('runs') < runs
    ? {
        requestedRuns: runs,
        stoppedBy: `SIM_BUDGET_S=${budgetS}`,
        runsDone: reports.map((r) => `${r.firstRun}..${r.firstRun + r.runs - 1}`),
      }
    : {}),
  workers,
  wallSeconds: Math.round((Date.now() - startedAt) / 1000),
  simulatedHours: Math.round((sum('simulatedMs') / 3_600_000) * 10) / 10,
  events: sum('events'),
  elections: sum('elections'),
  maxStepDownLagMs: Math.round(Math.max(...reports.map((r) => r.maxLagMs)) * 100) / 100,
  // The stated exception: after a resume, a term's signal may outlive its store lease for at most one
  // deadline slice. How often that happened, and the longest (ms of the node's running time).
  resumeOverlaps: sum('resumeOverlaps'),
  maxResumeOverlapMs: Math.round(Math.max(...reports.map((r) => r.maxResumeOverlapMs)) * 100) / 100,
  // Orphaned leases the orphan check excused: owner frozen, or its release of that lease id failed.
  orphanExcused: {
    frozen: reports.reduce((total, r) => total + r.orphanExcused.frozen, 0),
    releaseFailed: reports.reduce((total, r) => total + r.orphanExcused.releaseFailed, 0),
  },
  healedToOneLeaderMs: { p50: q(0.5), p99: q(0.99), max: q(1) },
  // Every check, 0 included: a check that never ran is absent, one that held reads 0.
  violations: Object.fromEntries(
    (reports[0]?.checks ?? Object.keys(byCheck)).map((/** @type {string} */ check) => {
      const found = byCheck[check];
      if (!found) return [check, { count: 0 }];
      const { count, first } = found;
      return [
        check,
        {
          count,
          firstRun: first.run,
          world: /** @type {any} */ (first).world,
          message: first.violation.message,
          replay: `SIM_SEED=${seed} SIM_RUN=${first.run} npm test -- test/sim`,
        },
      ];
    }),
  ),
};
console.log(JSON.stringify(figures, null, 2));
mkdirSync(join(here, '../results'), { recursive: true });
// `SIM_OUT=sim-before` keeps a campaign beside the others (default bench/results/sim.json and .md).
const out = process.env.SIM_OUT ?? 'sim';
writeFileSync(join(here, `../results/${out}.json`), `${JSON.stringify(figures, null, 2)}\n`);
const rows = Object.entries(figures.violations).map(
  ([check, v]) => `| ${check} | ${v.count} | ${v.count > 0 ? `run ${v.firstRun} (${v.world}): ${v.message}` : ''} |`,
);
writeFileSync(
  join(here, `../results/${out}.md`),
  [
    `# Simulation campaign (${figures.at})`,
    '',
    `Seed ${seed}: ${figures.runs} schedules of the electors alone and ${figures.featureRuns} of the feature world ` +
      `(handles, spread, standby, once-per-tick, operators, add/remove, stop), ${figures.simulatedHours} simulated ` +
      `hours, ${figures.events} events, ${figures.elections} elections, ${figures.wallSeconds} s of wall time.`,
    '',
    '| check | violations | first |',
    '|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
console.log(`written: bench/results/${out}.json, bench/results/${out}.md`);
