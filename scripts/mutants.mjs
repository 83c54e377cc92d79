#!/usr/bin/env node
// @ts-check
// `npm run test:mutants [-- --quick] [-- --only id,id]`: plants each safety mutant of
// test/mutants/mutants.mjs, one at a time, in a scratch copy of the repository, runs the tests named
// for it and fails unless every mutant is killed. The copy is checked first without any mutant: a
// test that fails on clean code would "kill" everything and prove nothing.
//
// Why a curated list and not a mutation tool: TypeScript 7 ships no compiler API, which the
// TypeScript-aware tools (StrykerJS's checker and instrumenter) need; and a safety mutant is a
// specific wrong idea (deadline from the answer, no re-arm, …), which a generic operator rarely plants.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mutants } from '../test/mutants/mutants.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyIndex = args.indexOf('--only');
const only = onlyIndex >= 0 ? new Set(args[onlyIndex + 1].split(',')) : undefined;
const selected = mutants.filter((m) => (only ? only.has(m.id) : !quick || m.quick));

const scratch = mkdtempSync(join(tmpdir(), 'nle-mutants-'));
for (const entry of ['lib', 'test', 'scripts', '.swcrc', 'jest.config.js', 'package.json', 'tsconfig.json']) {
  cpSync(join(root, entry), join(scratch, entry), {
    recursive: true,
    // Other apps' installs are large and no mutant test needs them.
    filter: (source) => !source.includes('/node_modules') && !source.includes('/test/apps/'),
  });
}
symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'), 'dir');

/** @param {string[]} tests */
function jest(tests) {
  const started = Date.now();
  const result = spawnSync(
    process.execPath,
    ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', '--bail', '--silent', ...tests],
    { cwd: scratch, encoding: 'utf8', timeout: 10 * 60_000 },
  );
  return {
    passed: result.status === 0,
    seconds: (Date.now() - started) / 1000,
    output: `${result.stdout}${result.stderr}`,
  };
}

/** @param {string} text @param {string} from */
function occurrences(text, from) {
  return text.split(from).length - 1;
}

const allTests = [...new Set(selected.flatMap((m) => m.tests))];
console.log(`mutants: ${selected.length} to plant; clean run of ${allTests.length} test file(s) first`);
const clean = jest(allTests);
if (!clean.passed) {
  console.error(clean.output.slice(-4000));
  console.error('mutants: the tests fail WITHOUT any mutant: fix them first');
  rmSync(scratch, { recursive: true, force: true });
  process.exit(2);
}

const rows = [];
for (const mutant of selected) {
  const file = join(scratch, mutant.file);
  const original = readFileSync(file, 'utf8');
  const count = occurrences(original, mutant.from);
  if (count !== 1) {
    rows.push({ id: mutant.id, outcome: `STALE (pattern found ${count} times)`, seconds: 0 });
    continue;
  }
  writeFileSync(file, original.replace(mutant.from, mutant.to));
  const run = jest(mutant.tests);
  writeFileSync(file, original);
  rows.push({ id: mutant.id, outcome: run.passed ? 'SURVIVED' : 'killed', seconds: run.seconds });
  console.log(`${run.passed ? 'SURVIVED' : 'killed  '} ${mutant.id} (${run.seconds.toFixed(0)} s): ${mutant.rule}`);
}
rmSync(scratch, { recursive: true, force: true });

const survivors = rows.filter((r) => r.outcome !== 'killed');
console.table(rows);
console.log(`mutants: ${rows.length - survivors.length} of ${rows.length} killed`);
process.exit(survivors.length === 0 ? 0 : 1);
