// @ts-check
// Phase B of a bench run: the leadership-change trial chains of figures 3 and 4 as jobs, run with
// bounded concurrency, their samples collected per figure key (e.g. `3:crash:redis`).
import { changeChain, coldStarts, pauseTrials } from '../figures/failover.mjs';
import { DEFAULTS, etcd3Election, FAST, nle, ours } from './impls.mjs';

/** @typedef {{ key: string, est: number, run: () => Promise<any> }} Job */
/** @typedef {{ samples: number[], library: number[], trials: any[], failures: string[] }} Collected */
/**
 * One implementation of figure 4's side by side and how its trials are spread over parallel chains.
 * @typedef {{ name: string, make: () => any, crashParts: number, pauseParts: number, capMs: number }} Side
 */

/** @param {string} store */
export const fig3Timings = (store) => (store === 'azure' ? DEFAULTS : FAST);

/**
 * `n` split into `parts` near-equal non-zero parts.
 * @param {number} n
 * @param {number} parts
 */
const split = (n, parts) =>
  Array.from({ length: parts }, (_, i) => Math.floor(n / parts) + (i < n % parts ? 1 : 0)).filter(Boolean);

/**
 * The jobs of figures 3 and 4. Cold starts time process boots: they run after the busy phase, two at a time.
 * @param {{ stores: string[], available: Set<string>, trials: number, pauseTrials: number, nleSchemas: string[],
 *   log: (message: string) => void }} plan
 * @returns {{ jobs: Job[], coldJobs: Job[], side: Side[] }}
 */
export function changeJobs({ stores, available, trials: N, pauseTrials: PAUSE_N, nleSchemas, log }) {
  /** @type {Job[]} */
  const jobs = [];
  /** @type {Job[]} */
  const coldJobs = [];
  for (const store of stores) {
    const timings = fig3Timings(store);
    const impl = ours(store, timings);
    const long = store === 'azure';
    for (const n of split(N, long ? 2 : 1)) {
      jobs.push({
        key: `3:crash:${store}`,
        est: n * (timings.leaseMs + 4_000),
        run: () => changeChain(impl, 'crash', n, { timeoutMs: timings.leaseMs * 2 + 10_000, log }),
      });
    }
    jobs.push({
      key: `3:handover:${store}`,
      est: N * 4_000,
      run: () => changeChain(impl, 'handover', N, { timeoutMs: 20_000, log }),
    });
    coldJobs.push({ key: `3:cold:${store}`, est: N * 3_000, run: () => coldStarts(impl, N, { log }) });
  }
  let schema = 0;
  /** @type {Side[]} */
  const side = [
    { name: 'ours-pg', make: () => ours('postgres', DEFAULTS), crashParts: 2, pauseParts: 3, capMs: 40_000 },
    { name: 'ours-etcd', make: () => ours('etcd', DEFAULTS), crashParts: 2, pauseParts: 3, capMs: 40_000 },
    {
      name: 'nle',
      make: () => nle(DEFAULTS, nleSchemas[schema++ % nleSchemas.length]),
      crashParts: 4,
      pauseParts: 5,
      capMs: 75_000,
    },
    { name: 'etcd3', make: () => etcd3Election(DEFAULTS), crashParts: 2, pauseParts: 3, capMs: 40_000 },
  ].filter((s) => available.has(s.name === 'ours-pg' || s.name === 'nle' ? 'postgres' : 'etcd'));
  for (const s of side) {
    const perTrial = s.name === 'nle' ? 42_000 : 20_000;
    for (const n of split(N, s.crashParts)) {
      jobs.push({
        key: `4:crash:${s.name}`,
        est: n * perTrial,
        run: () => changeChain(s.make(), 'crash', n, { timeoutMs: s.capMs + 20_000, log }),
      });
    }
    for (const n of split(N, s.name === 'nle' ? s.crashParts : 1)) {
      jobs.push({
        key: `4:handover:${s.name}`,
        // nle's handover trial waits for its first leader like its crash trials (15 s lease, no
        // push): split like them, or its one chain is the phase's tail (by 40 s in a quick run).
        est: s.name === 'nle' ? n * perTrial : n * 5_000,
        run: () => changeChain(s.make(), 'handover', n, { timeoutMs: 20_000, log }),
      });
    }
    for (const n of split(PAUSE_N, s.pauseParts)) {
      jobs.push({
        key: `4:pause:${s.name}`,
        est: n * (perTrial + 6_000),
        run: () => pauseTrials(s.make(), n, { capMs: s.capMs, log }),
      });
    }
  }
  jobs.sort((a, b) => b.est - a.est);
  return { jobs, coldJobs, side };
}

/** What the jobs measured, per key. */
export class Results {
  /** @type {Map<string, Collected>} */
  #byKey = new Map();

  /**
   * @param {string} key
   * @returns {Collected}
   */
  get(key) {
    let result = this.#byKey.get(key);
    if (!result) {
      result = { samples: [], library: [], trials: [], failures: [] };
      this.#byKey.set(key, result);
    }
    return result;
  }
}

/**
 * Runs the chains (at most `concurrency` at once, longest first), then the cold starts two at a time.
 * With `coldWhenLeft`, the cold starts begin as soon as no chain is queued and at most that many
 * still run (--quick: the last ones are a peer's crash trials, idle while its lease expires).
 * @param {{ jobs: Job[], coldJobs: Job[] }} plan
 * @param {number} concurrency
 * @param {(message: string) => void} log
 * With `staggerMs`, the i-th parallel chain starts i × staggerMs late, so their first process boots
 * do not all land at once (--quick: a boot storm made replicas miss their first act).
 * @param {{ coldWhenLeft?: number, staggerMs?: number }} [options]
 * @returns {Promise<Results>}
 */
export async function runJobs({ jobs, coldJobs }, concurrency, log, { coldWhenLeft = 0, staggerMs = 0 } = {}) {
  const results = new Results();
  const phaseStart = Date.now();
  let done = 0;
  /** @param {Job} job */
  const runJob = async (job) => {
    const result = results.get(job.key);
    try {
      const r = await job.run();
      result.samples.push(...(r.samples ?? r.fromSpawn ?? []));
      result.library.push(...(r.library ?? []));
      result.trials.push(...(r.trials ?? []));
      result.failures.push(...(r.failures ?? []));
    } catch (error) {
      result.failures.push(error instanceof Error ? error.message : String(error));
    }
    done += 1;
    log(`  ${job.key} done (${done}/${jobs.length + coldJobs.length})`);
  };
  let running = 0;
  /** @type {() => void} */
  let onFewLeft = () => undefined;
  const fewLeft = new Promise((resolve) => {
    onFewLeft = () => resolve(undefined);
  });
  const chains = pool(
    jobs,
    concurrency,
    async (job) => {
      running += 1;
      await runJob(job);
      running -= 1;
      if (done >= jobs.length - coldWhenLeft && running <= coldWhenLeft) onFewLeft();
    },
    staggerMs,
  ).then(() => log(`chains took ${((Date.now() - phaseStart) / 1000).toFixed(0)} s`));
  await (coldWhenLeft > 0 ? Promise.race([fewLeft, chains]) : chains);
  log(`cold starts (${running} chains still running)…`);
  await pool(coldJobs, 2, runJob);
  await chains;
  return results;
}

/**
 * Runs `worker(item)` for every item, at most `limit` at once, in the given order; the i-th of the
 * parallel lanes starts `staggerMs` × i late.
 * @template T
 * @param {T[]} items
 * @param {number} limit
 * @param {(item: T) => Promise<void>} worker
 * @param {number} [staggerMs]
 */
export async function pool(items, limit, worker, staggerMs = 0) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: Math.min(limit, queue.length) }, async (_, lane) => {
      if (staggerMs > 0) await new Promise((resolve) => setTimeout(resolve, lane * staggerMs));
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await worker(item);
    }),
  );
}
