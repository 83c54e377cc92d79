// @ts-check
// `--tour`: once the elections have spread, hand one over to a named instance (through the sample
// app's POST /leader/handover), kill -9 the leader of the default election, then SIGTERM its
// successor; print the three measured times.
import { exitOf, isRunning } from '../lib/child-process.mjs';
import { rule, say, seconds, style } from './output.mjs';
import { CRASH_EXPECTED, DIRECTED_EXPECTED, GRACEFUL_EXPECTED, LEASE_S, RENEW_S, RETRY_S } from './timings.mjs';

/** @typedef {import('./cluster.mjs').Cluster} Cluster */
/** @typedef {import('./cluster.mjs').Instance} Instance */

/** @param {Cluster} cluster */
export async function tour(cluster) {
  const { state, options } = cluster;
  const [main, moved] = /** @type {[string, string]} */ (options.elections);
  /** @param {string} line */
  const tourSay = (line) => say('tour', style.bold(line));
  /** @type {Array<[string, number, string]>} */
  const results = [];
  /** @param {string} election */
  const leaderOf = (election) => {
    const leader = state.leaders.get(election);
    if (!leader) throw new Error(`nobody leads ${election}`);
    return leader.instance;
  };
  // Let the cluster settle: everyone up, the elections spread, the default election's job seen.
  await waitUntil(() => state.introduced && cluster.balanced(), 60_000, 'the elections to spread over the instances');
  const lastReport = await cluster.nextEvent(
    (e) => e.event === 'job' && e.fields.job === 'report' && e.instance === state.leaders.get(main)?.instance,
    30_000,
    `the leader of ${main} to run its cron job`,
  );

  // 1. A directed handover: any instance takes the request; the leader drains and hands over.
  const from = leaderOf(moved);
  const target = handoverTarget(cluster, from, main);
  const via = cluster.instances.find((i) => isRunning(i.child) && i !== from && i !== target) ?? target;
  tourSay(
    `1/3 ask ${via.name} (POST /leader/handover) to hand ${moved} from ${from.name} over to ${target.name}: expect ${DIRECTED_EXPECTED}.`,
  );
  const directed = cluster.nextEvent(
    (e) => e.event === 'elected' && e.fields.election === moved && e.instance === target,
    30_000,
    `${target.name} to lead ${moved}`,
  );
  directed.catch(() => undefined); // awaited below; a failed request must not leave it unhandled
  const requestAt = Date.now();
  const answer = await postHandover(via, { election: moved, to: target.name });
  const answeredMs = Date.now() - requestAt;
  const taken = await directed;
  results.push([
    `directed handover (POST → ${target.name} leads ${moved})`,
    taken.at - requestAt,
    `expected ${DIRECTED_EXPECTED}: the leader's next renewal (every ${RENEW_S} s), its drain, then ${target.name}'s next poll`,
  ]);
  tourSay(
    `→ ${via.name} answered ${answer} in ${answeredMs} ms; ${target.name} leads ${moved} ${seconds(taken.at - requestAt)} after the request.`,
  );
  await waitUntil(() => cluster.balanced(), 30_000, 'spread to even the elections out again');
  tourSay(`→ spread evened the rest out around it (a directed handover is pinned: ${target.name} keeps ${moved}).`);

  // 2. A crash: the lease stays in the store until it expires.
  const crashed = leaderOf(main);
  const led = cluster.ledBy(crashed);
  tourSay(
    `2/3 kill -9 ${crashed.name} (pid ${crashed.pid}), the leader of ${led.join(', ')}. ${led.length > 1 ? 'Its leases stay until they expire' : 'Its lease stays until it expires'}: expect ${CRASH_EXPECTED}.`,
  );
  const failoverNext = cluster.nextEvent(
    (e) => e.event === 'elected' && e.fields.election === main && e.instance !== crashed,
    90_000,
    `a new leader of ${main} after the crash`,
  );
  // Registered now: the new leader catches up on the missed tick right after its election.
  const jobNext = cluster.nextEvent(
    (e) => e.event === 'job' && e.fields.job === 'report' && e.instance !== crashed,
    120_000,
    `the new leader of ${main} to run the cron job`,
  );
  for (const pending of [failoverNext, jobNext]) pending.catch(() => undefined);
  crashed.expectedExit = true;
  const crashAt = Date.now();
  crashed.child.kill('SIGKILL');
  const failover = await failoverNext;
  const jobMoved = await jobNext;
  results.push(
    [
      'crash failover (kill -9 → new leader elected)',
      failover.at - crashAt,
      `expected ${CRASH_EXPECTED}: lease ${LEASE_S} s, renewed every ${RENEW_S} s, polled every ~${RETRY_S} s`,
    ],
    ['  … and the cron job runs there', jobMoved.at - crashAt, '+ up to one 5 s cron period'],
  );
  tourSay(
    `→ ${failover.instance.name} leads ${main} after ${seconds(failover.at - crashAt)}; its first cron run came ${seconds(jobMoved.at - crashAt)} after the crash.`,
  );
  // The report counter lives in leader state: the new leader continues the crashed one's numbering.
  tourSay(
    `→ its report is #${jobMoved.fields.report}; ${crashed.name} wrote #${lastReport.fields.report} (or later) before the crash: the counter lives in leader state, so numbering continues.`,
  );

  // 3. A graceful stop: drain, release every lease, and a follower wins each at its next try.
  const stopped = failover.instance;
  tourSay(
    `3/3 SIGTERM ${stopped.name} (pid ${stopped.pid}), now the leader of ${cluster.ledBy(stopped).join(', ')}. It drains and releases its leases: expect ${GRACEFUL_EXPECTED}.`,
  );
  const handoverNext = cluster.nextEvent(
    (e) => e.event === 'elected' && e.fields.election === main && e.instance !== stopped,
    60_000,
    `a new leader of ${main} after the graceful stop`,
  );
  handoverNext.catch(() => undefined);
  stopped.expectedExit = true;
  const stopAt = Date.now();
  stopped.child.kill('SIGTERM');
  const handover = await handoverNext;
  results.push([
    'graceful handover (SIGTERM → new leader elected)',
    handover.at - stopAt,
    `expected ${GRACEFUL_EXPECTED}: until a follower's next poll`,
  ]);
  tourSay(`→ ${handover.instance.name} leads ${main} after ${seconds(handover.at - stopAt)}.`);
  await exitOf(stopped.child);

  console.log(rule());
  console.log(style.bold('Measured:'));
  for (const [label, ms, expected] of results)
    console.log(`  ${label.padEnd(50)} ${seconds(ms).padStart(7)}   ${style.dim(`(${expected})`)}`);
  console.log(rule());
  tourSay('done; stopping the cluster.');
}

/**
 * Who should get the election: another running instance, preferably one that does not lead the
 * default election (so the crash step still finds its leader where it was) and leads the fewest.
 * @param {Cluster} cluster
 * @param {Instance} from
 * @param {string} main
 * @returns {Instance}
 */
function handoverTarget(cluster, from, main) {
  const candidates = cluster.instances.filter((i) => isRunning(i.child) && i !== from);
  const rank = (/** @type {Instance} */ i) =>
    (cluster.state.leaders.get(main)?.instance === i ? 100 : 0) + cluster.ledBy(i).length;
  const [best] = candidates.sort((a, b) => rank(a) - rank(b));
  if (!best) throw new Error('no other instance to hand over to');
  return best;
}

/**
 * POST /leader/handover on `instance`; resolves with the status line once the request is recorded.
 * @param {Instance} instance
 * @param {{ election: string, to: string }} body
 */
async function postHandover(instance, body) {
  const response = await fetch(`http://127.0.0.1:${instance.port}/leader/handover`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (response.status !== 202) throw new Error(`POST /leader/handover answered ${response.status}: ${text}`);
  return `${response.status} ${response.statusText}`;
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
