// @ts-check
// Figure 14: cold import time of the package's entries over `@nestjs/core` alone, and whether the
// Azure SDK loads (it must not, until an AzureBlobLeaseStore is built). Runs bench/import-cost.mjs
// against a fresh build of the package, in phase A (CPU-bound: alone on the machine).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { failRow, single } from './common.mjs';

/** The goal: what the root entry adds over `@nestjs/core` when no Azure store is built. */
const ROOT_BOUND_MS = 30;

/**
 * @param {string} root
 * @param {boolean} quick
 * @returns {Promise<import('./common.mjs').Row[]>}
 */
export async function importCostRows(root, quick) {
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`npm run build failed: ${build.stderr.slice(-500)}`);
  const runs = quick ? 3 : 9;
  const measured = spawnSync(process.execPath, [join(root, 'bench/import-cost.mjs'), '--runs', String(runs)], {
    cwd: root,
    encoding: 'utf8',
  });
  if (measured.status !== 0) throw new Error(`bench/import-cost.mjs failed: ${measured.stderr.slice(-500)}`);
  /** @type {{ rows: Array<{ entry: string, kind: string, medianMs: number, loadsAzureSdk: boolean }> }} */
  const result = JSON.parse(readFileSync(join(root, 'bench/results/import-cost.json'), 'utf8'));
  return result.rows.map((r) => {
    // 'esm+core' times our import after Nest's own, in one process: what we add to an app (the
    // goal); the other rows are a whole cold import of the entry alone, next to Nest's own row.
    const added = r.kind === 'esm+core';
    const row = single(
      14,
      added ? 'cold import added to an app that has imported @nestjs/core' : 'cold import of the entry alone',
      `${r.entry} (${r.kind})`,
      `median of ${runs} fresh processes; Azure SDK loaded: ${r.loadsAzureSdk ? 'yes' : 'no'}`,
      'ms',
      r.medianMs,
      added ? ROOT_BOUND_MS : null,
      added ? `≤ +${ROOT_BOUND_MS} ms, no Azure SDK` : '—',
    );
    return r.loadsAzureSdk ? failRow(row, ['loads @azure/storage-blob without an AzureBlobLeaseStore']) : row;
  });
}
