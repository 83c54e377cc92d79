// @ts-check
// Figures 3 and 4: leadership changes between real processes, timed with each child's own
// Date.now() stamps against the runner's (one machine, one clock).
//
// - crash:    kill -9 the leader → the next leader's first leader-only act.
// - handover: SIGTERM the leader → the next leader's first act.
// - cold:     two replicas spawned at once on a fresh election → the first act (from the spawn,
//             and from the winner's first acquire to its `elected`: the library's share).
// - pause:    SIGSTOP the leader until another replica acts, SIGCONT it, and watch it for 3 s:
//             does it still believe it leads (isLeader()/amILeader() true), does it act, how long.

import { uniqueElection } from '../lib/impls.mjs';
import { sleep } from '../lib/proc.mjs';

const RESUME_WINDOW_MS = 3_000;
let sequence = 0;
const nextId = () => `r${++sequence}`;

/** @typedef {import('../lib/impls.mjs').Impl} Impl */
/** @typedef {import('../lib/proc.mjs').BenchEvent} BenchEvent */
/** @typedef {import('../lib/proc.mjs').Child} Child */
/** @typedef {(message: string) => void} Log */

/** @param {BenchEvent} event */
const isAct = (event) => event.type === 'act';
/** @param {BenchEvent} event */
const isReady = (event) => event.type === 'ready';
/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/**
 * A leader (acting) and a standing follower (ready, not leading) on `election`.
 * @param {Impl} impl
 * @param {string} election
 * @param {Log} [log]
 * @returns {Promise<{ leader: Child, follower: Child }>}
 */
async function pair(impl, election, log) {
  const leader = impl.spawn(nextId(), election);
  try {
    await leader.waitFor(isAct, impl.bootTimeoutMs, 'first act');
  } catch (error) {
    await leader.kill();
    throw error;
  }
  const follower = await standingFollower(impl, election);
  log?.(`${impl.short}: pair up (${leader.name} leads)`);
  return { leader, follower };
}

/**
 * @param {Impl} impl
 * @param {string} election
 * @returns {Promise<Child>}
 */
async function standingFollower(impl, election) {
  const follower = impl.spawn(nextId(), election);
  try {
    const ready = await follower.waitFor(isReady, impl.bootTimeoutMs, 'ready');
    if (ready.leader) throw new Error(`${follower.name} came up as leader: the old leader was not holding the lease`);
    // Let its loops reach a random phase, as a follower that has been running for a while.
    await sleep(impl.timings.retryMs * (0.5 + Math.random()) + Math.random() * (impl.followerPhaseMs ?? 0));
    return follower;
  } catch (error) {
    await follower.kill();
    throw error;
  }
}

/**
 * `n` leadership changes in a chain: each trial ends the current leader with `end` ('crash' or
 * 'handover') and times the follower's first act; a fresh follower is then started.
 * Resolves `{ samples, failures, notes }` (ms); a trial that times out counts as a failure and the
 * chain starts over with a new pair.
 * @param {Impl} impl
 * @param {'crash' | 'handover'} kind
 * @param {number} n
 * @param {{ timeoutMs: number, log?: Log }} options
 */
export async function changeChain(impl, kind, n, { timeoutMs, log }) {
  /** @type {number[]} */
  const samples = [];
  /** @type {string[]} */
  const failures = [];
  let election = uniqueElection(`${kind}-${impl.store}`);
  /** @type {{ leader: Child, follower: Child } | undefined} */
  let current;
  try {
    for (let trial = 0; trial < n; trial++) {
      current ??= await pair(impl, election, log);
      const { leader, follower } = current;
      // A random point in the leader's renew cycle.
      await sleep(Math.random() * impl.timings.renewMs);
      const from = follower.events.length;
      const t0 = Date.now();
      if (kind === 'crash') leader.hardKill();
      else leader.signal('SIGTERM');
      try {
        const act = await follower.waitFor(isAct, timeoutMs, 'takeover', from);
        samples.push(act.at - t0);
      } catch (error) {
        failures.push(messageOf(error));
        log?.(`${impl.short} ${kind} trial ${trial + 1}: ${messageOf(error)}`);
        await Promise.all([leader.kill(), follower.kill()]);
        current = undefined;
        election = uniqueElection(`${kind}-${impl.store}`);
        continue;
      }
      const exit = await leader.stop(10_000);
      if (kind === 'handover' && exit.signal === 'SIGKILL')
        failures.push(`${leader.name} did not exit within 10 s of SIGTERM`);
      current = { leader: follower, follower: await standingFollower(impl, election) };
    }
  } finally {
    if (current) await Promise.all([current.leader.kill(), current.follower.kill()]);
  }
  return { samples, failures };
}

/**
 * `n` cold starts: two replicas at once on a fresh election each time.
 * @param {Impl} impl
 * @param {number} n
 * @param {{ log?: Log }} [options]
 */
export async function coldStarts(impl, n, { log } = {}) {
  /** @type {number[]} */
  const fromSpawn = [];
  /** @type {number[]} */
  const library = [];
  /** @type {string[]} */
  const failures = [];
  for (let trial = 0; trial < n; trial++) {
    const election = uniqueElection(`cold-${impl.store}`);
    const t0 = Date.now();
    const replicas = [impl.spawn(nextId(), election), impl.spawn(nextId(), election)];
    try {
      const act = await Promise.any(replicas.map((r) => r.waitFor(isAct, impl.bootTimeoutMs, 'first act')));
      fromSpawn.push(act.at - t0);
      const winner = /** @type {Child} */ (replicas.find((r) => r.events.includes(act)));
      const [ready, elected] = await Promise.all([
        winner.waitFor(isReady, 10_000, 'ready'),
        winner.waitFor((e) => e.type === 'elected', 10_000, 'elected'),
      ]);
      if (ready.firstAcquireAt) library.push(elected.at - ready.firstAcquireAt);
    } catch (error) {
      failures.push(error instanceof AggregateError ? error.errors.map(messageOf).join('; ') : messageOf(error));
      log?.(`${impl.short} cold trial ${trial + 1}: ${failures.at(-1)}`);
    } finally {
      await Promise.all(replicas.map((r) => r.kill()));
    }
  }
  return { fromSpawn, library, failures };
}

/**
 * `n` pause trials. Per trial: takeover (ms from SIGSTOP to the other replica's first act), then
 * after SIGCONT: staleMs (last moment the resumed replica still believed it led or acted, from
 * SIGCONT; 0 = never), acts (leader-only runs after SIGCONT), resumed at all.
 * @param {Impl} impl
 * @param {number} n
 * @param {{ capMs: number, log?: Log }} options
 */
export async function pauseTrials(impl, n, { capMs, log }) {
  /** @type {Array<{ pausedMs: number, takeover: number | null, staleMs: number, acts: number, resumed: boolean }>} */
  const trials = [];
  /** @type {string[]} */
  const failures = [];
  for (let trial = 0; trial < n; trial++) {
    const election = uniqueElection(`pause-${impl.store}`);
    /** @type {{ leader: Child, follower: Child } | undefined} */
    let current;
    try {
      current = await pair(impl, election, log);
      const { leader, follower } = current;
      await sleep(Math.random() * impl.timings.renewMs);
      const fromFollower = follower.events.length;
      const t0 = Date.now();
      leader.signal('SIGSTOP');
      let takeover = null;
      try {
        const act = await follower.waitFor(isAct, capMs, 'takeover', fromFollower);
        takeover = act.at - t0;
      } catch (error) {
        if (!(/** @type {{ timeout?: boolean }} */ (error).timeout)) throw error;
      }
      await sleep(1_000);
      const fromLeader = leader.events.length;
      const t1 = Date.now();
      leader.signal('SIGCONT');
      await sleep(RESUME_WINDOW_MS + 500);
      const after = leader.events.slice(fromLeader).filter((e) => e.at >= t1);
      const stale = after
        .filter((e) => isAct(e) || e.type === 'believes-true' || (e.type === 'believes' && e.value === true))
        .map((e) => e.at);
      trials.push({
        pausedMs: t1 - t0,
        takeover,
        staleMs: stale.length ? Math.max(...stale) - t1 : 0,
        acts: after.filter(isAct).length,
        resumed: after.some((e) => e.type === 'resumed'),
      });
    } catch (error) {
      failures.push(messageOf(error));
      log?.(`${impl.short} pause trial ${trial + 1}: ${messageOf(error)}`);
    } finally {
      if (current) await Promise.all([current.leader.kill(), current.follower.kill()]);
    }
  }
  return { trials, failures };
}
