#!/usr/bin/env node
// @ts-check
// Runs the in-process e2e suite against Nest 11: installs test/nest11's pinned packages when
// node_modules is missing or older than the lockfile (`npm ci`), then runs Jest with
// test/nest11/jest.config.js. Extra arguments go to Jest. Exit code: Jest's.
//
//   node test/nest11/run.mjs [jest args…]
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const lockfile = join(here, 'package-lock.json');
// npm rewrites this hidden lockfile on every install: its age is the age of node_modules.
const installed = join(here, 'node_modules/.package-lock.json');

/**
 * @param {string} command
 * @param {string[]} args
 * @param {string} cwd
 */
function run(command, args, cwd, env = process.env) {
  const result = spawnSync(command, args, { cwd, env, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lockfile).mtimeMs) {
  console.log('test/nest11: installing Nest 11 (npm ci)…');
  const status = run('npm', ['ci', '--no-audit', '--no-fund'], here);
  if (status !== 0) process.exit(status);
}

const jest = join(root, 'node_modules/jest/bin/jest.js');
process.exit(
  run(
    process.execPath,
    ['--experimental-vm-modules', jest, '--config', join(here, 'jest.config.js'), ...process.argv.slice(2)],
    root,
    // test/e2e/nest-version.spec.ts checks that the mapping really loaded Nest 11.
    { ...process.env, EXPECT_NEST_MAJOR: '11' },
  ),
);
