#!/usr/bin/env node
// @ts-check
// `npm run test:mutants [-- --quick] [-- --only id,id] [-- --json path]`: plants each safety mutant
// of test/mutants/mutants.mjs, one at a time, in a scratch copy of the repository, runs the tests
// named for it (only those matching its name pattern, if it has one; the simulation under its
// campaign, if it has one) and fails unless every mutant is killed. The copy is checked first
// without any mutant: a test that fails on clean code would "kill" everything and prove nothing.
// Azurite and etcd are started once for every run, not by each run's Jest global setup.
//
// Outcomes: `killed` (a test failed on an assertion: its name is recorded), `survived` (every test
// passed), `error` (the run crashed, a suite failed to run, the run timed out, or the only failures
// are Jest test timeouts): an error proves nothing about the tests, so it fails the run like a
// survivor. The full list writes bench/results/mutants.json (`--json` picks another path) and, for
// the mutants that reintroduce a finding of #11 against the simulation alone, which simulation
// check caught each, in which run and under which seed: bench/results/sim-findings.json
// (`--findings-json`).
//
// Why a curated list and not a mutation tool: TypeScript 7 ships no compiler API, which the
// TypeScript-aware tools (StrykerJS's checker and instrumenter) need; and a safety mutant is a
// specific wrong idea (deadline from the answer, no re-arm, …), which a generic operator rarely plants.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAzurite } from '../../scripts/lib/azurite.mjs';
import { startEtcd } from '../../scripts/lib/etcd.mjs';
import { editsOf, mutants, SIM_SEED } from './mutants.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyIndex = args.indexOf('--only');
const only = onlyIndex >= 0 ? new Set(args[onlyIndex + 1].split(',')) : undefined;
const jsonIndex = args.indexOf('--json');
const jsonPath =
  jsonIndex >= 0 ? args[jsonIndex + 1] : !quick && !only ? join(root, 'bench/results/mutants.json') : undefined;
const findingsIndex = args.indexOf('--findings-json');
const findingsPath =
  findingsIndex >= 0
    ? args[findingsIndex + 1]
    : !quick && !only
      ? join(root, 'bench/results/sim-findings.json')
      : undefined;
const selected = mutants.filter((m) => (only ? only.has(m.id) : !quick || m.quick));
if (only && selected.length !== only.size) {
  const known = new Set(mutants.map((m) => m.id));
  console.error(`mutants: unknown id(s) ${[...only].filter((id) => !known.has(id)).join(', ')}`);
  process.exit(2);
}
/** A whole run's bound: the slowest spec files (conformance on Azure, the simulation) take minutes. */
const RUN_TIMEOUT_MS = 10 * 60_000;

const started = Date.now();
const scratch = mkdtempSync(join(tmpdir(), 'nle-mutants-'));
for (const entry of ['lib', 'test', 'scripts', '.swcrc', 'jest.config.js', 'package.json', 'tsconfig.json']) {
  cpSync(join(root, entry), join(scratch, entry), {
    recursive: true,
    // Other apps' installs are large and no mutant test needs them.
    filter: (source) => !source.includes('/node_modules') && !source.includes('/test/apps/'),
  });
}
symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'), 'dir');
/** Jest's globalSetup and globalTeardown of every run: a no-op (the config's would start Azurite and etcd each time). */
const NO_GLOBAL_SETUP = join(scratch, 'no-global-setup.mjs');
writeFileSync(NO_GLOBAL_SETUP, 'export default async function noGlobalSetup() {}\n');

/**
 * Azurite and etcd, started once for all the runs (a few seconds each time otherwise), with the
 * variables test/setup/global-setup.ts would hand the workers (test/setup/azurite.ts, etcd.ts).
 */
const services = await (async () => {
  const [azurite, etcd] = await Promise.all([startAzurite(), startEtcd()]);
  return {
    env: {
      AZURITE_CONNECTION_STRING: azurite.connectionString,
      AZURITE_BLOB_PORT: String(azurite.port),
      ETCD_ENDPOINT: etcd.endpoint,
    },
    stop: () => Promise.all([azurite.stop(), etcd.stop()]),
  };
})();
/** Ends the shared services and removes the scratch copy. */
async function cleanUp() {
  await services.stop();
  rmSync(scratch, { recursive: true, force: true });
}

/**
 * `spawnSync`'s result, without blocking the event loop.
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd: string, timeout: number, env: NodeJS.ProcessEnv }} options
 * @returns {Promise<{ status: number | null, signal: NodeJS.Signals | null, error: Error | undefined, stdout: string, stderr: string }>}
 */
function spawnAsync(command, args, options) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, killSignal: 'SIGTERM' });
    let stdout = '';
    let stderr = '';
    /** @type {Error | undefined} */
    let error;
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', (e) => {
      error = e;
    });
    child.on('close', (status, signal) => resolve({ status, signal, error, stdout, stderr }));
  });
}

/**
 * @typedef {object} Failure
 * @property {string} test `suite › test`
 * @property {string | undefined} message the first line of its message
 */

/**
 * @typedef {object} JestRun
 * @property {'passed' | 'failed' | 'error'} status
 * @property {number} seconds
 * @property {string[]} failing failing tests, in Jest's order (`suite › test`)
 * @property {Failure[]} failures
 * @property {string | undefined} detail the first line of the first failure's message
 * @property {string | undefined} error why the run counts as an error
 * @property {string} output
 */

/** @typedef {NonNullable<import('./mutants.mjs').Mutant['campaign']>} Campaign */
/**
 * The environment of a run of the simulation under `campaign` (test/sim/simulation.spec.ts reads
 * it): the default seed, every check and fault, the campaign's size; no `SIM_*` of this process.
 * @param {Campaign} campaign
 */
function campaignEnv(campaign) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SIM_')));
  return {
    ...env,
    SIM_SEED: String(SIM_SEED),
    SIM_FIRST_RUN: String(campaign.from ?? 0),
    SIM_RUNS: String(campaign.runs),
    SIM_FEATURE_RUNS: String(campaign.featureRuns),
    ...(campaign.fold ? { SIM_FOLD: campaign.fold } : {}),
  };
}

/** @param {Campaign} c */
const describeCampaign = (c) =>
  `runs ${c.from ?? 0}–${(c.from ?? 0) + c.runs - 1}${c.featureRuns > 0 ? ` (features in ${c.featureRuns})` : ''}`;

/**
 * @param {string[]} tests
 * @param {string} [testNamePattern]
 * @param {Campaign} [campaign] the simulation's, in place of any `SIM_*` variable of this process
 * @returns {Promise<JestRun>}
 */
async function jest(tests, testNamePattern, campaign) {
  const at = Date.now();
  // Not spawnSync: this process's event loop must keep running, to drain the shared services' pipes.
  const result = await spawnAsync(
    process.execPath,
    [
      '--experimental-vm-modules',
      'node_modules/jest/bin/jest.js',
      '--bail',
      '--silent',
      '--ci',
      // The runner started the services once for every run (see `services` below).
      '--globalSetup',
      NO_GLOBAL_SETUP,
      '--globalTeardown',
      NO_GLOBAL_SETUP,
      ...(testNamePattern ? ['--testNamePattern', testNamePattern] : []),
      ...tests,
    ],
    {
      cwd: scratch,
      timeout: RUN_TIMEOUT_MS,
      env: { ...(campaign ? campaignEnv(campaign) : process.env), ...services.env },
    },
  );
  const output = `${result.stdout}${result.stderr}`;
  const seconds = Math.round((Date.now() - at) / 100) / 10;
  const { failures, failing, detail, timeouts, suiteErrors } = failuresOf(output);
  /** @type {Omit<JestRun, 'seconds' | 'output'>} */
  let verdict;
  if (result.error || result.signal)
    verdict = {
      status: 'error',
      failures,
      failing,
      detail,
      error: `runner: ${result.signal ?? result.error?.message} after ${seconds} s`,
    };
  else if (result.status === 0) verdict = { status: 'passed', failures, failing, detail, error: undefined };
  else if (suiteErrors > 0 || failing.length === 0)
    verdict = {
      status: 'error',
      failures,
      failing,
      detail,
      error: suiteErrors > 0 ? 'a suite failed to run' : 'no failing test',
    };
  else if (timeouts === failing.length)
    verdict = { status: 'error', failures, failing, detail, error: 'only Jest test timeouts' };
  else verdict = { status: 'failed', failures, failing, detail, error: undefined };
  return { ...verdict, seconds, output };
}

/**
 * Jest's failure report: `  ● suite › test` headers, each followed by its message. Suites that
 * failed to run and tests that failed only by exceeding their timeout are counted apart.
 * @param {string} output
 */
function failuresOf(output) {
  const lines = output.split('\n');
  /** @type {Failure[]} */
  const failures = [];
  /** @type {string | undefined} */
  let detail;
  let timeouts = 0;
  let suiteErrors = 0;
  for (let i = 0; i < lines.length; i++) {
    const header = /^\s{2}● (.+)$/.exec(lines[i]);
    if (!header) continue;
    const name = header[1].trim();
    const message = lines
      .slice(i + 1, i + 12)
      .map((line) => line.trim())
      .find((line) => line !== '');
    if (name === 'Test suite failed to run') {
      suiteErrors++;
      detail ??= message;
      continue;
    }
    if (name.startsWith('Console') || failures.some((f) => f.test === name)) continue;
    failures.push({ test: name, message });
    if (message?.startsWith('thrown: "Exceeded timeout') || message?.startsWith('Exceeded timeout')) timeouts++;
    detail ??= message;
  }
  return { failures, failing: failures.map((f) => f.test), detail, timeouts, suiteErrors };
}

/**
 * The simulation's failure message: `<check>: <n> violation(s); first in run <r> (replay:
 * SIM_SEED=<seed> SIM_RUN=<r>, <world> world): <what> at <ms> ms` (test/sim/simulation.spec.ts).
 * @param {Failure} failure
 */
function simulationCheckOf(failure) {
  const found =
    /^(\w+): (\d+) violation\(s\); first in run (\d+) \(replay: SIM_SEED=(\d+) SIM_RUN=\d+(?:, (\w+) world)?\): (.*)$/.exec(
      failure.message ?? '',
    );
  if (!found) return { test: failure.test, message: failure.message };
  const [, check, count, run, seed, world, what] = found;
  return { check, violations: Number(count), firstRun: Number(run), seed: Number(seed), world, first: what };
}

/** @param {string} text @param {string} from */
function occurrences(text, from) {
  return text.split(from).length - 1;
}

/** @param {number} seconds */
const fmt = (seconds) => `${seconds.toFixed(0)} s`;

// Clean runs, before any mutant: every test that will judge a mutant must pass on clean code, each
// judged by one clean run at most.
// - The mutants without a name pattern or campaign share one run of all their files.
// - Those with a name pattern share one run per set of files, of the patterns' union (a whole store
//   spec would only add load-sensitive tests nobody needs) — none if the shared run had those files.
// - Those with a campaign of the simulation share one run per set of files, of the longest campaign
//   from run 0 (each schedule has its own seed, so a shorter one is a prefix of it); a campaign
//   from a later run gets a run of its own, unless that one holds it.
const plain = [...new Set(selected.filter((m) => !m.testNamePattern && !m.campaign).flatMap((m) => m.tests))];
/** @param {string} test */
const inPlain = (test) => plain.some((path) => test === path || test.startsWith(`${path}/`));
/** @type {Map<string, { tests: string[], patterns: Set<string> }>} */
const byPattern = new Map();
for (const m of selected.filter((m) => m.testNamePattern && !m.campaign)) {
  if (m.tests.every(inPlain)) continue;
  const key = m.tests.join(' ');
  const group = byPattern.get(key) ?? { tests: m.tests, patterns: new Set() };
  group.patterns.add(/** @type {string} */ (m.testNamePattern));
  byPattern.set(key, group);
}
/**
 * Campaigns from run 0 are prefixes of one another: the longest stands for all. A campaign that
 * starts later needs a run of its own unless that prefix holds it.
 * @type {Map<string, { tests: string[], pattern: string | undefined, campaigns: Campaign[] }>}
 */
const byCampaign = new Map();
for (const m of selected.filter((m) => m.campaign)) {
  const campaign = /** @type {Campaign} */ (m.campaign);
  // Runs of another store shape (`fold`) are other schedules: never merged with the default's.
  const key = `${m.tests.join(' ')} -t ${m.testNamePattern} fold ${campaign.fold ?? 'by seed'}`;
  const group = byCampaign.get(key) ?? { tests: m.tests, pattern: m.testNamePattern, campaigns: [] };
  const prefix = group.campaigns.find((c) => !c.from);
  if (!campaign.from && prefix) {
    prefix.runs = Math.max(prefix.runs, campaign.runs);
    prefix.featureRuns = Math.max(prefix.featureRuns, campaign.featureRuns);
  } else group.campaigns.push({ ...campaign });
  byCampaign.set(key, group);
}
for (const group of byCampaign.values()) {
  const prefix = group.campaigns.find((c) => !c.from);
  /** @param {Campaign} c */
  const held = (c) =>
    prefix !== undefined &&
    (c.from ?? 0) + c.runs <= prefix.runs &&
    (c.featureRuns === 0 || (c.from ?? 0) + c.featureRuns <= prefix.featureRuns);
  group.campaigns = group.campaigns.filter(
    (c, i) =>
      c === prefix || (!held(c) && group.campaigns.findIndex((d) => JSON.stringify(d) === JSON.stringify(c)) === i),
  );
}
const union = (/** @type {Set<string>} */ patterns) =>
  patterns.size === 1 ? [...patterns][0] : [...patterns].map((p) => `(?:${p})`).join('|');
/** @type {Array<{ label: string, tests: string[], pattern: string | undefined, campaign: Campaign | undefined }>} */
const cleanRuns = [
  ...(plain.length > 0
    ? [{ label: `${plain.length} test path(s)`, tests: plain, pattern: undefined, campaign: undefined }]
    : []),
  ...[...byPattern.values()].map(({ tests, patterns }) => ({
    label: `${tests.join(' ')} -t ${union(patterns)}`,
    tests,
    pattern: union(patterns),
    campaign: undefined,
  })),
  ...[...byCampaign.values()].flatMap(({ tests, pattern, campaigns }) =>
    campaigns.map((campaign) => ({
      label: `${tests.join(' ')}${pattern ? ` -t ${pattern}` : ''}, ${describeCampaign(campaign)}`,
      tests,
      pattern,
      campaign,
    })),
  ),
];
console.log(`mutants: ${selected.length} to plant; ${cleanRuns.length} clean run(s) first`);
let cleanSeconds = 0;
for (const { label, tests, pattern, campaign } of cleanRuns) {
  const clean = await jest(tests, pattern, campaign);
  cleanSeconds += clean.seconds;
  console.log(`mutants: clean run of ${label}: ${clean.status} (${fmt(clean.seconds)})`);
  if (clean.status !== 'passed') {
    console.error(clean.output.slice(-4000));
    console.error('mutants: the tests fail WITHOUT any mutant: fix them first');
    await cleanUp();
    process.exit(2);
  }
}

/**
 * @typedef {object} Row
 * @property {string} id
 * @property {'killed' | 'survived' | 'error' | 'stale'} outcome
 * @property {string | undefined} killedBy the first failing test
 * @property {Failure[]} failures every failing test (the simulation fails one per check), with the first line of its message
 * @property {string | undefined} detail
 * @property {number} seconds
 * @property {string} rule
 * @property {string[]} tests
 * @property {string | undefined} testNamePattern
 * @property {Campaign | undefined} campaign
 * @property {{ number: number, text: string } | undefined} finding
 */
/** @type {Row[]} */
const rows = [];
for (const mutant of selected) {
  const edits = editsOf(mutant);
  /** @type {Map<string, string>} */
  const originals = new Map();
  let stale;
  for (const edit of edits) {
    const file = join(scratch, edit.file);
    const text = originals.get(file) ?? readFileSync(file, 'utf8');
    originals.set(file, text);
    const count = occurrences(text, edit.from);
    if (count !== 1) stale = `pattern found ${count} times in ${edit.file}`;
  }
  const base = {
    id: mutant.id,
    rule: mutant.rule,
    tests: mutant.tests,
    testNamePattern: mutant.testNamePattern,
    campaign: mutant.campaign,
    finding: mutant.finding,
  };
  if (stale) {
    rows.push({ ...base, outcome: 'stale', killedBy: undefined, failures: [], detail: stale, seconds: 0 });
    console.log(`STALE    ${mutant.id}: ${stale}`);
    continue;
  }
  /** @type {Map<string, string>} */
  const planted = new Map(originals);
  for (const edit of edits) {
    const file = join(scratch, edit.file);
    planted.set(file, /** @type {string} */ (planted.get(file)).replace(edit.from, edit.to));
  }
  for (const [file, text] of planted) writeFileSync(file, text);
  const run = await jest(mutant.tests, mutant.testNamePattern, mutant.campaign);
  for (const [file, text] of originals) writeFileSync(file, text);
  const outcome = run.status === 'failed' ? 'killed' : run.status === 'passed' ? 'survived' : 'error';
  rows.push({
    ...base,
    outcome,
    killedBy: outcome === 'killed' ? run.failing[0] : undefined,
    failures: run.failures,
    detail: outcome === 'error' ? `${run.error}${run.detail ? `: ${run.detail}` : ''}` : run.detail,
    seconds: run.seconds,
  });
  const label = outcome.toUpperCase().padEnd(8);
  const why = outcome === 'killed' ? `by "${run.failing[0]}"` : outcome === 'error' ? rows.at(-1)?.detail : mutant.rule;
  console.log(`${label} ${mutant.id} (${fmt(run.seconds)}): ${why}`);
  if (outcome === 'error') console.log(run.output.slice(-2000));
}
await cleanUp();

const wallSeconds = Math.round((Date.now() - started) / 1000);
const killed = rows.filter((r) => r.outcome === 'killed').length;
console.table(rows.map((r) => ({ id: r.id, outcome: r.outcome, seconds: r.seconds, killedBy: r.killedBy })));
console.log(`mutants: ${killed} of ${rows.length} killed; wall time ${wallSeconds} s (clean runs included)`);
if (jsonPath) {
  const report = {
    at: new Date().toISOString(),
    command: `node test/mutants/run.mjs ${args.join(' ')}`.trim(),
    wallSeconds,
    cleanRunSeconds: Math.round(cleanSeconds * 10) / 10,
    mutants: rows.length,
    killed,
    survived: rows.filter((r) => r.outcome === 'survived').length,
    errors: rows.filter((r) => r.outcome === 'error').length,
    stale: rows.filter((r) => r.outcome === 'stale').length,
    results: rows,
  };
  writeFileSync(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`mutants: results written to ${jsonPath}`);
}
const findings = rows.filter((r) => r.finding);
if (findingsPath && findings.length > 0) {
  const report = {
    at: new Date().toISOString(),
    spec:
      `test/sim/simulation.spec.ts, SIM_SEED ${SIM_SEED}: each finding under its campaign, 'runs' schedules ` +
      "of the default campaign from run 'from' (default 0), of which the first 'featureRuns' also in the feature world",
    findings: findings.map((r) => ({
      finding: r.finding?.number,
      text: r.finding?.text,
      mutant: r.id,
      outcome: r.outcome,
      seconds: r.seconds,
      campaign: r.campaign,
      // One Jest test per simulation check: every check that failed, with its first run.
      checks: r.failures.map(simulationCheckOf),
    })),
  };
  writeFileSync(findingsPath, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`mutants: simulation findings written to ${findingsPath}`);
}
process.exit(killed === rows.length ? 0 : 1);
