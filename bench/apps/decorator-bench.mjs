// @ts-check
// Figure 1: ns per call of a plain provider method vs the same method under @LeaderOnly(), on the
// leader and on a follower, in real Nest application contexts (bench/apps/overhead-app.ts), and
// what the leader path cannot avoid, alone: its two clock reads, and entering the leadership context
// (currentLeadership()'s AsyncLocalStorage) around the call.
// tinybench times batches of BATCH calls (a single call is far below the timer's resolution) and
// records each batch's mean. Prints one `@@b {"type":"result",…}` line with every task's samples
// summarized in ns per call.
//
//   node --import ./test/support/swc-register.mjs bench/apps/decorator-bench.mjs
import { Bench } from 'tinybench';
import { runInLeadership } from '../../lib/leadership/leadership-context.js';
import { summarize } from '../lib/stats.mjs';
import { contextApps } from './overhead-app.js';

const BATCH = 1_000;
const TIME_MS = Number(process.env.DECORATOR_TIME_MS ?? 2_000);

const apps = await contextApps();
let sink = 0;

const bench = new Bench({ time: TIME_MS, warmupTime: 500, retainSamples: true });
/**
 * @param {string} name
 * @param {(x: number) => number | undefined} call
 */
function batched(name, call) {
  bench.add(name, () => {
    const start = bench.now();
    for (let i = 0; i < BATCH; i++) sink += call(i & 1) ?? 0;
    const elapsed = bench.now() - start;
    return { overriddenDuration: elapsed / BATCH, overriddenIterationCost: elapsed };
  });
}
batched('plain', (x) => apps.leader.plain(x));
batched('leader', (x) => apps.leader.guarded(x));
batched('follower', (x) => apps.follower.guarded(x));
// What the leader path cannot avoid: its deadline check reads both clocks (monotonic and wall; see
// the timing rules), measured the same way beside it, read as the library reads them (a captured
// `performance`: the global one is an accessor that costs a getter call per read).
const perf = performance;
batched('clocks', (x) => (perf.now() > Date.now() ? x : 0));
// The leader path enters its term's leadership context around every call (one object per term):
// the same AsyncLocalStorage.run, around a call that does nothing.
const context = Object.freeze({
  election: 'overhead',
  identity: 'leader',
  term: 1,
  signal: new AbortController().signal,
});
batched('context', (x) => runInLeadership(context, () => x));

await bench.run();
/** @type {Record<string, object>} */
const tasks = {};
for (const task of bench.tasks) {
  // Only a completed task's result has latency samples.
  const result = /** @type {{ latency?: { samples?: number[] } } | undefined} */ (task.result);
  const samples = result?.latency?.samples ?? [];
  const ns = summarize([...samples].map((ms) => ms * 1e6));
  tasks[task.name] = { ...ns, batches: samples.length, callsPerBatch: BATCH };
}
process.stdout.write(`@@b ${JSON.stringify({ type: 'result', tasks, sink: sink > 0, at: Date.now() })}\n`);
await apps.close();
process.exit(0);
