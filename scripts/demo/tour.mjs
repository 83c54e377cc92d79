// @ts-check
// `--tour`: kill -9 the leader, then SIGTERM its successor, and print both measured takeover times.
import { exitOf } from '../lib/child-process.mjs';
import { rule, say, seconds, style } from './output.mjs';
import { CRASH_EXPECTED, GRACEFUL_EXPECTED, LEASE_S, RETRY_S } from './timings.mjs';

/** @param {import('./cluster.mjs').Cluster} cluster */
export async function tour(cluster) {
  const { state } = cluster;
  /** @param {string} line */
  const tourSay = (line) => say('tour', style.bold(line));
  /** @type {Array<[string, number, string]>} */
  const results = [];
  // Let the cluster settle: everyone up, a leader elected and seen working.
  await waitUntil(() => state.introduced && state.leader !== undefined, 60_000, 'the cluster to elect a leader');
  const lastReport = await cluster.nextEvent(
    (e) => e.event === 'job' && e.instance === state.leader?.instance,
    30_000,
    'the leader to run its cron job',
  );

  // 1. A crash: the lease stays in the store until it expires.
  const crashed = /** @type {NonNullable<typeof state.leader>} */ (state.leader).instance;
  tourSay(
    `1/2 kill -9 ${crashed.name} (pid ${crashed.pid}), the leader. Its lease stays until it expires: expect ${CRASH_EXPECTED}.`,
  );
  crashed.expectedExit = true;
  const crashAt = Date.now();
  crashed.child.kill('SIGKILL');
  const failover = await cluster.nextEvent(
    (e) => e.event === 'elected' && e.instance !== crashed,
    90_000,
    'a new leader after the crash',
  );
  const jobMoved = await cluster.nextEvent(
    (e) => e.event === 'job' && e.instance === failover.instance,
    30_000,
    'the new leader to run the cron job',
  );
  results.push(
    [
      'crash failover (kill -9 → new leader elected)',
      failover.at - crashAt,
      `expected ${CRASH_EXPECTED}: lease ${LEASE_S} s, renewed every 2.5 s, polled every ~${RETRY_S} s`,
    ],
    ['  … and the cron job runs there', jobMoved.at - crashAt, '+ up to one 5 s cron period'],
  );
  tourSay(
    `→ ${failover.instance.name} leads after ${seconds(failover.at - crashAt)}; its first cron run came ${seconds(jobMoved.at - crashAt)} after the crash.`,
  );
  // The report counter lives in leader state: the new leader continues the crashed one's numbering.
  tourSay(
    `→ its report is #${jobMoved.fields.report}; ${crashed.name} wrote #${lastReport.fields.report} (or later) before the crash: the counter lives in leader state, so numbering continues.`,
  );

  // 2. A graceful stop: drain, release, and a follower wins at its next try.
  const stopped = failover.instance;
  tourSay(
    `2/2 SIGTERM ${stopped.name} (pid ${stopped.pid}), the new leader. It drains and releases its lease: expect ${GRACEFUL_EXPECTED}.`,
  );
  stopped.expectedExit = true;
  const stopAt = Date.now();
  stopped.child.kill('SIGTERM');
  const handover = await cluster.nextEvent(
    (e) => e.event === 'elected' && e.instance !== stopped,
    60_000,
    'a new leader after the graceful stop',
  );
  results.push([
    'graceful handover (SIGTERM → new leader elected)',
    handover.at - stopAt,
    `expected ${GRACEFUL_EXPECTED}: until a follower's next poll`,
  ]);
  tourSay(`→ ${handover.instance.name} leads after ${seconds(handover.at - stopAt)}.`);
  await exitOf(stopped.child);

  console.log(rule());
  console.log(style.bold('Measured:'));
  for (const [label, ms, expected] of results)
    console.log(`  ${label.padEnd(50)} ${seconds(ms).padStart(7)}   ${style.dim(`(${expected})`)}`);
  console.log(rule());
  tourSay('done; stopping the cluster.');
}

/**
 * @param {() => boolean} condition
 * @param {number} timeoutMs
 * @param {string} what
 */
async function waitUntil(condition, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds(timeoutMs)} waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
