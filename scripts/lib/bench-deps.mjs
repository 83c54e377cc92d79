#!/usr/bin/env node
// @ts-check
// bench/ has its own dependencies (the peer libraries, autocannon, tinybench; bench/package.json):
// installs them with `npm ci --prefix bench` when missing or older than bench's lockfile. Used by
// `npm run bench` and before `npm run typecheck`, which checks bench/ against them.
//
//   node scripts/lib/bench-deps.mjs
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH = fileURLToPath(new URL('../../bench', import.meta.url));

/**
 * Installs bench/'s dependencies when needed; false when npm failed.
 * @param {string} who prefix of the message, e.g. 'bench'
 */
export function ensureBenchDeps(who) {
  const lockfile = join(BENCH, 'package-lock.json');
  // npm rewrites this hidden lockfile on every install: its age is the age of node_modules.
  const installed = join(BENCH, 'node_modules/.package-lock.json');
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(lockfile).mtimeMs) return true;
  console.log(`${who}: installing bench/'s dependencies (npm ci --prefix bench)…`);
  const result = spawnSync('npm', ['ci', '--prefix', BENCH, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: join(BENCH, '..'),
    stdio: 'inherit',
  });
  return result.status === 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(ensureBenchDeps('typecheck') ? 0 : 1);
