#!/usr/bin/env node
// @ts-check
// Figures 10–13 of `npm run bench` alone (several elections per app: time to balance, handover on
// request, no flapping, what the handover capability costs), for a run of just these: the same
// code as phase D (and figure 13 of phase B) of bench/run.mjs. Prints the rows and writes
// bench/results/spread.json. Exit code 1 when figure 12 saw a leadership change.
//
//   node bench/spread.mjs [--quick]        (full: 5 cold starts per size, 10 handovers, a 10 min watch)
//   BENCH_FLAP_WATCH_MS=120000 node bench/spread.mjs   (a shorter watch)
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
await import('../test/support/swc-register.mjs');
const { Child, killAll } = await import('./lib/proc.mjs');
const { formatJson, machineInfo, machineText } = await import('./lib/report.mjs');
const { handoverCallRows } = await import('./lib/rows/spread.mjs');
const { ALL_STORES, startServers } = await import('./lib/servers.mjs');
const { spreadPhase, startFlapWatch } = await import('./lib/spread-phase.mjs');

const startedAt = Date.now();
/** @param {string} message */
const log = (message) => console.log(`[${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)} s] ${message}`);
/** @type {string[]} */
const errors = [];
/** @type {import('./lib/rows/common.mjs').Row[]} */
const rows = [];
const machine = machineInfo();
log(`machine: ${machineText(machine)}`);
const servers = await startServers(log, errors);
const stores = ALL_STORES.filter((store) => servers.available.has(store));
try {
  const calls = new Child('handover-calls', 'bench/apps/handover-calls.ts', {
    STORES: stores.join(','),
    WINDOW_MS: String(quick ? 20_000 : 120_000),
    HANDOVERS: String(quick ? 3 : 5),
  });
  const flap = startFlapWatch({ stores, quick, log });
  await flap?.up;
  rows.push(...(await spreadPhase({ stores, quick, log, errors, flap })));
  const result = await calls.waitFor((e) => e.type === 'result', 300_000, 'handover calls result');
  rows.push(...handoverCallRows(stores, /** @type {any} */ (result), errors));
} catch (error) {
  errors.push(error instanceof Error ? error.message : String(error));
} finally {
  killAll();
  await servers.stop();
}
const output = {
  machine,
  node: process.version,
  date: new Date(startedAt).toISOString(),
  runtimeSec: Math.round((Date.now() - startedAt) / 1000),
  command: `node bench/spread.mjs${quick ? ' --quick' : ''}`,
  quick,
  figures: rows,
  errors,
};
await mkdir(join(root, 'bench/results'), { recursive: true });
await writeFile(join(root, 'bench/results/spread.json'), `${JSON.stringify(output, null, 2)}\n`);
formatJson(root, join(root, 'bench/results/spread.json'));
for (const r of rows) {
  const value = (/** @type {number | null} */ v) => (v === null || v === undefined ? '—' : Math.round(v).toString());
  console.log(
    `${r.figure}  ${r.metric} · ${r.subject}: n ${r.n}, median ${value(r.median)}, p95 ${value(r.p95)}, max ${value(r.max)} ${r.unit}` +
      ` (bound ${value(r.bound)}: ${r.boundText})${r.note ? `; ${r.note}` : ''}${r.failures?.length ? `; FAILED ${r.failures.join('; ')}` : ''}`,
  );
}
if (errors.length) console.log(`\nErrors:\n${errors.map((e) => `  - ${e}`).join('\n')}`);
console.log(`\nWrote bench/results/spread.json in ${output.runtimeSec} s.`);
process.exit(errors.some((e) => e.startsWith('figure 12 FAILED')) ? 1 : 0);
