// @ts-check
// The report of a bench run: bench/results/latest.json (every figure with p95 and max),
// latest.md (the tables of docs/design/performance.md, as this run measured them) and the table
// printed at the end.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { AZURE_OTHER_PER_10K, AZURE_PRICE_SOURCE, HOURS_PER_MONTH } from './rows/calls.mjs';
import { round } from './stats.mjs';

/** @typedef {import('./rows/common.mjs').Row} Row */
/** @typedef {ReturnType<typeof machineInfo>} Machine */

const FIGURE_TITLES = {
  1: 'Decorator overhead: ns per call, in a Nest application context (tinybench)',
  2: 'Guard overhead: requests/s of the same app, guarded vs unguarded route (autocannon)',
  3: 'Failover and handover per store: real processes, a leader-only job every 20 ms counts as "acting"',
  4: 'Side by side: same run, same lease settings',
  5: 'Store calls per instance-hour (counted at the LeaseStore boundary) and Azure cost',
  6: 'Contention: 50 electors on one lease',
  8: 'Fleet scale: store calls per hour and Azure cost per month, measured per instance and projected',
  9: 'Contention at fleet size: 200 electors in 20 processes on one lease',
  10: 'Several elections: time to balance from a cold start (spread), N replica processes × E elections',
  11: 'Handover on request: requested from a third replica → the named replica elected',
  12: 'No flapping: leadership changes in a balanced cluster (must be 0)',
  13: 'What the handover capability costs: store calls per instance-hour vs the capability hidden, and per handover',
  14: 'Cold import of each entry, fresh processes, next to @nestjs/core alone (and whether the Azure SDK loads)',
  15: 'What OpenTelemetry metrics add: ns per @LeaderOnly call and per renewal, no API / API without SDK / SDK',
  16: 'Store traffic per replica-hour at the defaults, by role and feature (store-object calls; wire round trips in the notes)',
};

export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model?.trim() ?? 'unknown',
    cpus: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((v) => round(v, 2)),
  };
}

/** @param {Machine} machine */
export const machineText = (machine) =>
  `${machine.cpuModel} ×${machine.cpus}, ${machine.memoryGiB} GiB, ${machine.os}; Node ${process.version}`;

/**
 * Writes latest.json and latest.md under bench/results and prints the table.
 * @param {{ root: string, startedAt: number, quick: boolean, machine: Machine, rows: Row[], errors: string[],
 *   timings: { tickMs: number, fast: object, defaults: object } }} run
 */
export async function writeReport({ root, startedAt, quick, machine, rows, errors, timings }) {
  const runtimeSec = (Date.now() - startedAt) / 1000;
  const output = {
    machine: { ...machine, loadAverageAtEnd: os.loadavg().map((v) => round(v, 2)) },
    node: process.version,
    date: new Date(startedAt).toISOString(),
    runtimeSec: round(runtimeSec),
    command: 'npm run bench',
    quick,
    tickMs: timings.tickMs,
    timings: { fast: timings.fast, defaults: timings.defaults },
    azurePrice: {
      otherOperationsPer10k: AZURE_OTHER_PER_10K,
      currency: 'USD',
      hoursPerMonth: HOURS_PER_MONTH,
      source: AZURE_PRICE_SOURCE,
    },
    figures: rows.map((r) => ({
      ...r,
      median: round(r.median, 3),
      p95: round(r.p95, 3),
      max: round(r.max, 3),
      bound: round(r.bound, 3),
      failures: r.failures?.length ? r.failures : undefined,
    })),
    errors,
  };
  const dir = join(root, 'bench/results');
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `latest.${randomBytes(3).toString('hex')}.tmp.json`);
  await writeFile(tmp, `${JSON.stringify(output, null, 2)}\n`);
  await rename(tmp, join(dir, 'latest.json'));
  formatJson(root, join(dir, 'latest.json'));
  await writeFile(join(dir, 'latest.md'), markdown(rows, output));
  console.log(`\n${table(rows)}`);
  console.log(`\nMachine: ${machineText(machine)}; ${output.date}`);
  console.log(`Azure price: $${AZURE_OTHER_PER_10K} per 10,000 "other" operations — ${AZURE_PRICE_SOURCE}`);
  if (errors.length) console.log(`\nErrors:\n${errors.map((e) => `  - ${e}`).join('\n')}`);
  console.log(`\nWrote bench/results/latest.json in ${runtimeSec.toFixed(0)} s.`);
}

/**
 * The tables of docs/design/performance.md as this run measured them, one per figure.
 * @param {Row[]} rows
 * @param {{ machine: Machine, node: string, date: string, runtimeSec: number | null,
 *   azurePrice: { otherOperationsPer10k: number, source: string } }} output
 */
function markdown(rows, output) {
  const m = output.machine;
  const lines = [
    `Measured with \`npm run bench\` on ${m.cpuModel} ×${m.cpus}, ${m.memoryGiB} GiB, ${m.os}, Node ${output.node}, ` +
      `${output.date.slice(0, 10)} (run took ${Math.round((output.runtimeSec ?? 0) / 60)} min; load average ${m.loadAverageAtStart.join(' / ')} at start). ` +
      'Medians of n trials; every figure with p95 and max is in `bench/results/latest.json`.',
    '',
  ];
  for (const figure of /** @type {const} */ ([1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16])) {
    const group = rows.filter((r) => r.figure === figure);
    if (!group.length) continue;
    lines.push(`**${figure}. ${FIGURE_TITLES[figure]}**`, '');
    lines.push(
      '| subject | measure | n | median | p95 | max | bound | settings |',
      '|---|---|--:|--:|--:|--:|---|---|',
    );
    for (const r of group) {
      const unit = r.unit === '×' ? '×' : ` ${r.unit}`;
      /** @param {number | null | undefined} v */
      const cell = (v) => (v === null || v === undefined ? '—' : `${format(v, r.digits)}${unit}`);
      const bound = r.bound === null || r.bound === undefined ? r.boundText : `${cell(r.bound)} (${r.boundText})`;
      const notes = [r.settings, r.note, r.failures?.length ? `${r.failures.length} failed trials` : undefined];
      lines.push(
        `| ${r.subject} | ${r.metric} | ${r.n ?? '—'} | ${cell(r.median)} | ${cell(r.p95)} | ${cell(r.max)} | ${bound} | ${notes.filter(Boolean).join('; ')} |`,
      );
    }
    lines.push('');
  }
  lines.push(
    `Azure price used: $${output.azurePrice.otherOperationsPer10k} per 10,000 "other" operations (${output.azurePrice.source}).`,
    '',
  );
  return lines.join('\n');
}

/**
 * The repo's formatter (biome) lays the file out as it would, so `biome check` stays clean. Best effort.
 * @param {string} root
 * @param {string} file
 */
export function formatJson(root, file) {
  const biome = join(root, 'node_modules/@biomejs/biome/bin/biome');
  if (!existsSync(biome)) return;
  spawnSync(process.execPath, [biome, 'format', '--write', file], { cwd: root, stdio: 'ignore' });
}

/**
 * @param {number | null | undefined} value
 * @param {number} [digits]
 */
function format(value, digits) {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  const d = digits ?? (Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
  return value.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

/** @param {Row[]} rows */
function table(rows) {
  const header = ['fig', 'figure', 'subject', 'n', 'median', 'p95', 'max', 'unit', 'bound', 'settings / notes'];
  const lines = rows.map((r) => [
    String(r.figure),
    r.metric,
    r.subject,
    String(r.n ?? '—'),
    format(r.median, r.digits),
    format(r.p95, r.digits),
    format(r.max, r.digits),
    r.unit,
    r.bound === null || r.bound === undefined ? r.boundText : `${format(r.bound, r.digits)} (${r.boundText})`,
    [r.settings, r.note, r.failures?.length ? `${r.failures.length} failed: ${r.failures[0]}` : undefined]
      .filter(Boolean)
      .join('; '),
  ]);
  const widths = header.map((h, i) =>
    Math.min(i === 9 ? 200 : 60, Math.max(h.length, ...lines.map((l) => l[i].length))),
  );
  /** @param {string[]} cells */
  const fmt = (cells) =>
    cells
      .map((c, i) => {
        const text = c.length > widths[i] ? `${c.slice(0, widths[i] - 1)}…` : c;
        return [3, 4, 5, 6].includes(i) ? text.padStart(widths[i]) : text.padEnd(widths[i]);
      })
      .join('  ')
      .trimEnd();
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}
