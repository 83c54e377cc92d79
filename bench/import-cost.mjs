// @ts-check
// Cold import time of the package's entries, each in a fresh Node process (nothing cached but the
// OS's file cache), next to `@nestjs/core` alone: what a user pays at startup for importing us.
// Also says whether `@azure/storage-blob` was loaded, which only building an AzureBlobLeaseStore
// should do. Runs against the built package (`npm run build` first): ESM `import()` and CommonJS
// `require()`. Prints a table and writes bench/results/import-cost.json.
//
//   node bench/import-cost.mjs [--runs N]
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 7;

/** @typedef {{ label: string, esm?: string, cjs?: string, 'esm+core'?: string }} Entry */

/** @type {Entry[]} */
const ENTRIES = [
  { label: '@nestjs/core alone', esm: '@nestjs/core', cjs: '@nestjs/core' },
  {
    label: '@leaderlease/nestjs',
    esm: 'dist/esm/index.js',
    cjs: 'dist/commonjs/index.js',
    'esm+core': 'dist/esm/index.js',
  },
  ...['postgres', 'mysql', 'redis', 'etcd', 'terminus', 'testing'].map((sub) => ({
    label: `@leaderlease/nestjs/${sub}`,
    esm: `dist/esm/${sub}.js`,
    cjs: `dist/commonjs/${sub}.js`,
  })),
];

// The child: imports `reflect-metadata` first (every Nest app does, and it is not what we measure),
// then times the one import and reports whether the Azure SDK is now in the module graph.
const CHILD = `
const { performance } = require('node:perf_hooks');
const Module = require('node:module');
let azure = false;
const load = Module._load;
Module._load = function (request, ...rest) { if (request.startsWith('@azure/storage-blob')) azure = true; return load.call(this, request, ...rest); };
const [kind, target] = process.argv.slice(-2);
require('reflect-metadata');
(async () => {
  // 'esm+core': what our entry adds once Nest is loaded, in one process (less noisy than a difference
  // of two processes' medians on a busy machine).
  if (kind === 'esm+core') await import('@nestjs/core');
  const t0 = performance.now();
  if (kind === 'cjs') require(target); else await import(target);
  const ms = performance.now() - t0;
  const loaded = Object.keys(require.cache).some((f) => f.includes('@azure/storage-blob'));
  process.stdout.write(JSON.stringify({ ms, azure: azure || loaded }));
})();
`;

// ESM imports do not pass through Module._load: this resolve hook (in the loader thread) marks on
// stderr any module resolved inside the SDK's package. Never in a timed process: with a hook
// registered every ESM resolution crosses to the loader's thread, which made a cold
// `import('@nestjs/core')` ≈ 300 ms (60 %) slower here and blurred every ESM row.
const HOOK = `
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (result.url.includes('/@azure/storage-blob/')) process.stderr.write('AZURE-SDK-LOADED\\n');
  return result;
}`;
const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(
  `data:text/javascript,${encodeURIComponent(HOOK)}`,
)});`;

/** @param {string} target */
const esmSpecifier = (target) => (target.startsWith('dist/') ? pathToFileURL(join(ROOT, target)).href : target);

/**
 * One timed import in a fresh process (no loader hook). `azure`: the SDK went through CommonJS's
 * loader (ESM loads are found by {@link esmLoadsAzure}).
 * @param {'esm' | 'cjs' | 'esm+core'} kind
 * @param {string} target
 * @returns {{ ms: number, azure: boolean }}
 */
function once(kind, target) {
  const resolved = kind === 'cjs' && target.startsWith('dist/') ? join(ROOT, target) : esmSpecifier(target);
  const child = spawnSync(process.execPath, ['-e', CHILD, kind, resolved], { cwd: ROOT, encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`${kind} ${target}: exit ${child.status}\n${child.stderr}`);
  const result = JSON.parse(child.stdout);
  return { ms: result.ms, azure: result.azure };
}

/**
 * Whether importing `targets` (ESM, in one process with the resolve hook) resolves anything inside
 * the SDK. Untimed.
 * @param {string[]} targets
 */
function esmLoadsAzure(targets) {
  const script = `require('reflect-metadata'); (async () => { for (const t of ${JSON.stringify(targets.map(esmSpecifier))}) await import(t); })();`;
  const child = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, '-e', script],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (child.status !== 0) throw new Error(`ESM import of ${targets.join(', ')}: exit ${child.status}\n${child.stderr}`);
  return child.stderr.includes('AZURE-SDK-LOADED');
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** @type {Array<{ entry: string, kind: string, target: string }>} */
const cases = [];
for (const entry of ENTRIES) {
  for (const kind of /** @type {const} */ (['esm', 'cjs', 'esm+core'])) {
    const target = entry[kind];
    if (target) cases.push({ entry: entry.label, kind, target });
  }
}
// Round robin, so that a busy spell of the machine spreads over every entry alike.
/** @type {Array<Array<{ ms: number, azure: boolean }>>} */
const samples = cases.map(() => []);
for (let run = 0; run < RUNS; run++) {
  cases.forEach((c, i) => {
    samples[i].push(once(/** @type {'esm' | 'cjs' | 'esm+core'} */ (c.kind), c.target));
  });
}
// The SDK in the ESM graph: every ESM entry in one hooked process; only if that finds it, each
// entry alone (a module already loaded by one entry would not be resolved again for the next).
const esmCases = cases.filter((c) => c.kind !== 'cjs');
const esmAnyAzure = esmLoadsAzure(esmCases.map((c) => c.target));
/** @param {{ kind: string, target: string }} c */
const esmAzure = (c) => c.kind !== 'cjs' && esmAnyAzure && esmLoadsAzure([c.target]);
const rows = cases.map((c, i) => {
  const times = samples[i].map((s) => s.ms);
  return {
    entry: c.entry,
    kind: c.kind,
    medianMs: Math.round(median(times) * 10) / 10,
    minMs: Math.round(Math.min(...times) * 10) / 10,
    runs: RUNS,
    loadsAzureSdk: samples[i].some((s) => s.azure) || esmAzure(c),
  };
});

/** @param {string} kind */
const base = (kind) => rows.find((r) => r.entry === '@nestjs/core alone' && r.kind === kind)?.medianMs ?? 0;
console.log(`cold import, median of ${RUNS} fresh processes (reflect-metadata preloaded), node ${process.version}`);
console.log('entry'.padEnd(36), 'kind    ', 'median ms'.padStart(10), 'over core'.padStart(10), ' loads Azure SDK');
for (const r of rows) {
  // 'esm+core' rows time our import after Nest's: the figure is itself what we add.
  const delta = r.kind === 'esm+core' ? r.medianMs : r.medianMs - base(r.kind);
  const over = r.entry === '@nestjs/core alone' ? '' : `${delta >= 0 ? '+' : ''}${delta.toFixed(1)}`;
  console.log(
    r.entry.padEnd(36),
    r.kind.padEnd(8),
    r.medianMs.toFixed(1).padStart(10),
    over.padStart(10),
    ` ${r.loadsAzureSdk ? 'yes' : 'no'}`,
  );
}
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
const out = join(ROOT, 'bench/results/import-cost.json');
writeFileSync(
  out,
  `${JSON.stringify({ node: process.version, runs: RUNS, measuredAt: new Date().toISOString(), rows }, null, 2)}\n`,
);
// Loaded here, in the parent only: the measured processes import nothing of the bench's own.
const { formatJson } = await import('./lib/report.mjs');
formatJson(ROOT, out);
