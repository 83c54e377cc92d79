// @ts-check
// Phase D of a bench run: several elections per app (figures 10–12). A balanced PostgreSQL fleet is
// started first and watched for leadership changes (figure 12: 60 s with --quick, 10 min otherwise);
// meanwhile the cold-start balance runs (10) and the handover trials (11) run, three jobs at a time.
// Figure 13 (calls) runs in phase B beside figure 5: it counts, it does not time.
import { balanceRuns, handoverRuns } from '../figures/spread.mjs';
import { fig3Timings } from './jobs.mjs';
import { balanceRow, flappingRow, handoverRow } from './rows/spread.mjs';

/** @typedef {import('./rows/common.mjs').Row} Row */

const FLAP_SIZE = { replicas: 3, elections: 3 };
const CONCURRENCY = 3;

/**
 * @param {{ stores: string[], quick: boolean, log: (message: string) => void, errors: string[] }} run
 * @returns {Promise<Row[]>}
 */
export async function spreadPhase({ stores, quick, log, errors }) {
  /** @type {Row[]} */
  const rows = [];
  const watchMs = Number(process.env.BENCH_FLAP_WATCH_MS ?? (quick ? 60_000 : 600_000));
  // Azure's 15 s lease makes a balance run take minutes: full runs only.
  const balanceStores = ['postgres', 'redis', ...(quick ? [] : ['azure'])].filter((s) => stores.includes(s));
  const sizes = quick ? [FLAP_SIZE] : [FLAP_SIZE, { replicas: 5, elections: 10 }];
  const runs = quick ? 2 : 5;
  const handovers = quick ? 3 : 10;

  const flap = stores.includes('postgres')
    ? balanceRuns('postgres', fig3Timings('postgres'), FLAP_SIZE, { runs: 1, watchMs, log })
    : undefined;
  /** @type {Array<() => Promise<void>>} */
  const jobs = [];
  /** @type {Array<{ store: string, size: typeof FLAP_SIZE, r: Awaited<ReturnType<typeof balanceRuns>> }>} */
  const balanced = [];
  for (const store of balanceStores) {
    for (const size of sizes) {
      jobs.push(async () => {
        log(`figure 10: ${store} ${size.replicas}×${size.elections}, ${runs} cold starts…`);
        balanced.push({ store, size, r: await balanceRuns(store, fig3Timings(store), size, { runs, log }) });
      });
    }
  }
  for (const store of ['postgres', 'mysql', 'redis', 'etcd', 'azure'].filter((s) => stores.includes(s))) {
    jobs.push(async () => {
      log(`figure 11: ${handovers} directed handovers on ${store}…`);
      rows.push(
        handoverRow(store, fig3Timings(store), await handoverRuns(store, fig3Timings(store), { n: handovers, log })),
      );
    });
  }
  const queue = [...jobs];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let job = queue.shift(); job; job = queue.shift()) {
        await job().catch((error) => errors.push(`figures 10/11: ${error instanceof Error ? error.message : error}`));
      }
    }),
  );
  const watched = await flap;
  for (const { store, size, r } of balanced) {
    // The watched fleet's own cold start is one more sample of the same figure.
    if (watched && store === 'postgres' && size === FLAP_SIZE) r.samples.push(...watched.samples);
    rows.push(balanceRow(store, fig3Timings(store), size, r));
  }
  if (watched?.watch) rows.push(flappingRow('postgres', fig3Timings('postgres'), FLAP_SIZE, watched.watch, errors));
  else if (watched) errors.push(`figure 12 FAILED: the watched fleet never balanced: ${watched.failures.join('; ')}`);
  return rows.sort((a, b) => a.figure - b.figure);
}
