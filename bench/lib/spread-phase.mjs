// @ts-check
// Phase D of a bench run: several elections per app (figures 10–12). The fleet of figure 12 (3 × 3 on
// PostgreSQL with the library's default timings) is started before phase C and watched for
// leadership changes while phase C and D run (60 s with --quick, 10 min otherwise): its few calls a
// second do not disturb them, and under the defaults a busy machine cannot cost it a lease, so every
// change it shows is spread's. Phase D itself: the cold-start balance runs (10) and the handover
// trials (11), three jobs at a time. Figure 13 (calls) runs in phase B beside figure 5: it counts,
// it does not time.
import { balanceRuns, handoverRuns } from '../figures/spread.mjs';
import { DEFAULTS } from './impls.mjs';
import { fig3Timings } from './jobs.mjs';
import { balanceRow, flappingRow, handoverRow } from './rows/spread.mjs';

/** @typedef {import('./rows/common.mjs').Row} Row */

const FLAP_SIZE = { replicas: 3, elections: 3 };
const CONCURRENCY = 3;

/** @typedef {{ up: Promise<void>, done: Promise<Awaited<ReturnType<typeof balanceRuns>>> }} FlapWatch */

/**
 * Figure 12's fleet: resolves `up` once its processes are up, `done` after the watch.
 * @param {{ stores: string[], quick: boolean, log: (message: string) => void }} run
 * @returns {FlapWatch | undefined}
 */
export function startFlapWatch({ stores, quick, log }) {
  if (!stores.includes('postgres')) return undefined;
  const watchMs = Number(process.env.BENCH_FLAP_WATCH_MS ?? (quick ? 60_000 : 600_000));
  log(`figure 12: a 3×3 PostgreSQL fleet (defaults), watched ${watchMs / 1000} s once balanced…`);
  /** @type {() => void} */
  let onUp = () => undefined;
  const up = new Promise((resolve) => {
    onUp = () => resolve(undefined);
  });
  const done = balanceRuns('postgres', DEFAULTS, FLAP_SIZE, { runs: 1, watchMs, log, onUp });
  // A fleet that never comes up ends `done` with its failure: `up` must not wait for ever.
  return { up: Promise.race([up, done.then(() => undefined)]), done };
}

/**
 * @param {{ stores: string[], quick: boolean, log: (message: string) => void, errors: string[],
 *   flap: FlapWatch | undefined }} run
 * @returns {Promise<Row[]>}
 */
export async function spreadPhase({ stores, quick, log, errors, flap }) {
  /** @type {Row[]} */
  const rows = [];
  // Azure's 15 s lease makes a balance run take minutes: full runs only.
  const balanceStores = ['postgres', 'redis', ...(quick ? [] : ['azure'])].filter((s) => stores.includes(s));
  const sizes = quick ? [FLAP_SIZE] : [FLAP_SIZE, { replicas: 5, elections: 10 }];
  const runs = quick ? 2 : 5;
  const handovers = quick ? 3 : 10;

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
  for (const { store, size, r } of balanced) rows.push(balanceRow(store, fig3Timings(store), size, r));
  const watched = await flap?.done;
  // The watched fleet's own cold start: the same figure with the default timings.
  if (watched) {
    const row = balanceRow('postgres', DEFAULTS, FLAP_SIZE, watched);
    rows.push({ ...row, subject: `${row.subject}, defaults` });
  }
  if (watched?.watch) rows.push(flappingRow('postgres', DEFAULTS, FLAP_SIZE, watched.watch, errors));
  else if (watched) errors.push(`figure 12 FAILED: the watched fleet never balanced: ${watched.failures.join('; ')}`);
  return rows.sort((a, b) => a.figure - b.figure);
}
