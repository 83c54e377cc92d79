// @ts-check
// Figure 15: what the OpenTelemetry metrics add per @LeaderOnly call and per renewal, with
// @opentelemetry/api absent (`none`), installed without an SDK (`api`) and with the SDK recording
// (`sdk`). Runs bench/metrics-overhead.mjs (three fresh processes) in phase A, CPU-bound.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { single } from './common.mjs';

/** What a call may add without an SDK: the decorator's own bound (figure 1). */
const NO_SDK_BOUND_NS = 100;

const SUBJECTS = /** @type {const} */ ([
  ['leaderOnlyLeaderOverheadNs', '@LeaderOnly() on the leader, over a plain call'],
  ['leaderOnlyFollowerOverheadNs', '@LeaderOnly() on a follower (skip), over a plain call'],
  ['renewOverheadNs', 'renewal through the metrics view, over the bare store'],
]);

/**
 * @param {string} root
 * @param {boolean} quick
 * @returns {Promise<import('./common.mjs').Row[]>}
 */
export async function metricsOverheadRows(root, quick) {
  const run = spawnSync(process.execPath, [join(root, 'bench/metrics-overhead.mjs'), ...(quick ? ['--quick'] : [])], {
    cwd: root,
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (run.status !== 0) throw new Error(`bench/metrics-overhead.mjs failed: ${run.stderr.slice(-500)}`);
  /** @type {{ summary: Record<string, Record<string, number>> }} */
  const result = JSON.parse(readFileSync(join(root, 'bench/results/metrics-overhead.json'), 'utf8'));
  return SUBJECTS.flatMap(([key, subject]) =>
    ['none', 'api', 'sdk'].map((mode) => {
      const onCall = key !== 'renewOverheadNs' && mode !== 'sdk';
      return single(
        15,
        'ns added',
        `${subject} (${mode})`,
        `${mode === 'none' ? 'no @opentelemetry/api' : mode === 'api' ? 'API, no SDK' : 'SDK + Prometheus exporter'}; median of batches`,
        'ns',
        result.summary[key][mode],
        onCall ? NO_SDK_BOUND_NS : null,
        onCall ? `≤ ${NO_SDK_BOUND_NS} ns without an SDK` : '—',
      );
    }),
  );
}
