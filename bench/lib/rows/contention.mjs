// @ts-check
// Rows of figure 6 (50 electors on one lease) and figure 9 (the largest run this machine holds: 200
// electors in 20 processes), one store at a time (phase C).
import { contention } from '../../figures/contention.mjs';
import { seconds, settingsText, single } from './common.mjs';

/** @typedef {import('./common.mjs').Row} Row */

/** The built-in stores that push (watch) and give the expiry hint, so followers poll as a safety net. */
const EXPIRY_HINT_STORES = new Set(['postgres', 'redis']);
/** contention()'s default: the leader resigns this often, and the others race again. */
const RESIGN_EVERY_MS = 2_500;

/**
 * @param {string} store
 * @param {{ leaseMs: number, renewDeadlineMs: number, renewMs: number, retryMs: number }} t
 * @param {{ quick: boolean, rtt: Record<string, number>, log: (message: string) => void }} context
 * @param {{ figure: number, electors: number, perProcess: number }} [size]
 * @returns {Promise<Row[]>}
 */
export async function contentionRows(store, t, { quick, rtt, log }, size = { figure: 6, electors: 50, perProcess: 5 }) {
  const { figure, electors, perProcess } = size;
  const c = await contention(store, t, { electors, perProcess, runMs: quick ? 5_000 : 10_000, log });
  const settings = `${c.electors} electors in ${c.processes} processes; ${settingsText(t)}; leader resigns every 2.5 s`;
  // Stores that push and tell the holder's expiry (AcquireResult.expiresInMs): followers try about
  // once per lease, and every follower once more at each handover (the release wakes them all).
  const hinted = EXPIRY_HINT_STORES.has(store);
  const theoretical = hinted
    ? (c.electors - 1) * (1000 / t.leaseMs) + c.electors * (1000 / RESIGN_EVERY_MS) + 1000 / t.renewMs
    : (c.electors - 1) * (1000 / t.retryMs) + 1000 / t.renewMs;
  return [
    single(
      figure,
      'time to the first leader',
      `ours/${store}`,
      settings,
      'ms',
      c.firstLeaderMs,
      rtt[store],
      '1 round trip',
    ),
    {
      ...single(
        figure,
        'most leaders at once',
        `ours/${store}`,
        `${c.terms} terms in ${seconds(c.runMs)}`,
        'leaders',
        c.maxSimultaneous,
        1,
        'must be 1',
      ),
      n: c.terms,
      max: c.maxSimultaneous,
    },
    single(
      figure,
      'store calls per second (all electors)',
      `ours/${store}`,
      `${c.calls} calls in ${seconds(c.runMs)}`,
      'calls/s',
      c.callsPerSecond,
      theoretical,
      hinted ? '(n−1)/lease + n/handover + 1/renew (watch + expiry hint)' : '(n−1)/retry + 1/renew',
    ),
  ];
}
