// Run: node bench/experiments/store-failover.mjs [--runs=5] [--only=etcd|postgres]
// @ts-check
// The store's own failover (issue #30), repeated: the chaos specs test/chaos/store-failover-etcd.spec.ts
// (a 3-member etcd: Raft leader killed, a follower member frozen, a majority lost and brought back)
// and test/chaos/store-failover-postgres.spec.ts (a primary + streaming standby, asynchronous and
// synchronous: the primary crashes, the standby is promoted), each run `--runs` times through Jest.
// Collects every run's table rows (the chaos harness writes them to <tmp>/leaderlease-chaos/) and
// writes bench/results/store-failover.json: per measure, each run's value, min and max, overlaps,
// and how many runs passed. No pass/fail of its own.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (/** @type {string} */ name) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const RUNS = Number(arg('runs') ?? 5);
const ONLY = arg('only');
const SPECS = ['etcd', 'postgres'].filter((s) => ONLY === undefined || s === ONLY);
const RESULTS_DIR = join(tmpdir(), 'leaderlease-chaos');

/** @typedef {{ scenario: string, measure: string, value: string, bound: string, overlaps: number }} Row */
/** @type {Map<string, { scenario: string, measure: string, bound: string, values: string[], overlaps: number }>} */
const measures = new Map();
/** @type {Record<string, { runs: number, passed: number }>} */
const outcome = {};

for (const spec of SPECS) {
  outcome[spec] = { runs: 0, passed: 0 };
  for (let run = 1; run <= RUNS; run++) {
    const file = join(RESULTS_DIR, `store-failover-${spec}.json`);
    rmSync(file, { force: true });
    const started = Date.now();
    const jest = spawnSync(
      process.execPath,
      ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', `test/chaos/store-failover-${spec}.spec.ts`],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
    );
    outcome[spec].runs += 1;
    if (jest.status === 0) outcome[spec].passed += 1;
    else process.stderr.write(`${spec} run ${run} failed:\n${jest.stderr.slice(-3_000)}\n`);
    if (!existsSync(file)) continue;
    const { rows } = /** @type {{ rows: Row[] }} */ (JSON.parse(readFileSync(file, 'utf8')));
    for (const row of rows) {
      const key = `${row.scenario} | ${row.measure}`;
      const entry = measures.get(key) ?? { ...row, values: [], overlaps: 0 };
      entry.values.push(row.value);
      entry.overlaps += row.overlaps;
      measures.set(key, entry);
    }
    console.log(
      `${spec} run ${run}/${RUNS}: ${jest.status === 0 ? 'passed' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s`,
    );
  }
}

/** The millisecond figures of a value such as `401 ms` or `13 ms / 10 ms`. */
const numbers = (/** @type {string} */ value) =>
  [...value.matchAll(/(-?\d+(?:\.\d+)?|Infinity) ms/g)].map((m) => Number(m[1]));
const table = [...measures.values()].map((m) => {
  const all = m.values.flatMap(numbers);
  return {
    scenario: m.scenario,
    measure: m.measure,
    bound: m.bound,
    runs: m.values.length,
    minMs: all.length ? Math.min(...all) : null,
    maxMs: all.length ? Math.max(...all) : null,
    overlaps: m.overlaps,
    values: m.values,
  };
});
for (const row of table) {
  console.log(
    `${row.scenario} | ${row.measure}: ${row.minMs}–${row.maxMs} ms over ${row.runs} runs (bound ${row.bound}), overlaps ${row.overlaps}`,
  );
}
const out = join(root, 'bench/results/store-failover.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify({ at: new Date().toISOString(), machine: { cpus: cpus().length, loadavg: loadavg() }, runs: RUNS, outcome, measures: table }, null, 2)}\n`,
);
console.log(`written ${out}`);
