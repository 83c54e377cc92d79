// @ts-check
// Figures 1 and 2: what @LeaderOnly() adds to a call, and what its guard adds to a request.
import autocannon from 'autocannon';
import { Child } from '../lib/proc.mjs';
import { summarize } from '../lib/stats.mjs';

/** Figure 1, in a child of its own (bench/apps/decorator-bench.mjs): ns per call. */
export async function decoratorOverhead() {
  const child = new Child('decorator-bench', 'bench/apps/decorator-bench.mjs', {}, { loader: true });
  try {
    const result = await child.waitFor((e) => e.type === 'result', 180_000, 'decorator result');
    return result.tasks;
  } finally {
    await child.kill();
  }
}

/**
 * Figure 2: requests/s of GET /plain vs GET /guarded (@LeaderOnly, on the leader) in one Nest app
 * (bench/apps/http-app.ts), autocannon in this process, `rounds` alternating rounds of `seconds`
 * per route. Also the follower's refusals (503) per second, for reference.
 */
export async function guardOverhead({ rounds = 4, seconds = 3, connections = 10 } = {}) {
  const server = new Child('http-app', 'bench/apps/http-app.ts');
  const follower = new Child('http-app-follower', 'bench/apps/http-app.ts', { FOLLOWER: '1' });
  try {
    const [{ port }, { port: followerPort }] = await Promise.all([
      server.waitFor((e) => e.type === 'ready', 60_000, 'ready'),
      follower.waitFor((e) => e.type === 'ready', 60_000, 'ready'),
    ]);
    /** @param {string} url */
    const run = async (url) => {
      const result = await autocannon({ url, connections, duration: seconds });
      return { rps: result.requests.average, p50Ms: result.latency.p50, non2xx: result.non2xx, errors: result.errors };
    };
    // Warm-up: JIT and connection setup out of the measurement.
    await run(`http://127.0.0.1:${port}/plain`);
    await run(`http://127.0.0.1:${port}/guarded`);
    /** @type {Array<{ rps: number, p50Ms: number, non2xx: number, errors: number }>} */
    const plain = [];
    /** @type {typeof plain} */
    const guarded = [];
    for (let round = 0; round < rounds; round++) {
      plain.push(await run(`http://127.0.0.1:${port}/plain`));
      guarded.push(await run(`http://127.0.0.1:${port}/guarded`));
    }
    const refused = await run(`http://127.0.0.1:${followerPort}/guarded`);
    const ratios = plain.map((p, i) => guarded[i].rps / p.rps);
    return {
      plain: summarize(plain.map((r) => r.rps)),
      guarded: summarize(guarded.map((r) => r.rps)),
      ratio: summarize(ratios),
      plainP50Ms: summarize(plain.map((r) => r.p50Ms)).median,
      guardedP50Ms: summarize(guarded.map((r) => r.p50Ms)).median,
      followerRefusals: { rps: refused.rps, non2xx: refused.non2xx },
      errors: [...plain, ...guarded].reduce((sum, r) => sum + r.errors, 0),
      non2xx: [...plain, ...guarded].reduce((sum, r) => sum + r.non2xx, 0),
      rounds,
      seconds,
      connections,
    };
  } finally {
    await Promise.all([server.kill(), follower.kill()]);
  }
}
