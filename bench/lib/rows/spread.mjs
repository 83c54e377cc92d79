// @ts-check
// Rows of figures 10–13 (issue 14: several elections, spread, handover on request):
//   10 time to balance from a cold start (bench/figures/spread.mjs balanceRuns)
//   11 directed handover → the named replica elected (handoverRuns)
//   12 leadership changes in a balanced cluster (balanceRuns' watch): must be 0
//   13 store calls the handover capability costs (bench/apps/handover-calls.ts)
import { DEFAULTS } from '../impls.mjs';
import { summarize } from '../stats.mjs';
import { sum } from './calls.mjs';
import { failRow, rowFrom, seconds, settingsText, single } from './common.mjs';

/** @typedef {import('./common.mjs').Row} Row */
/** @typedef {import('../impls.mjs').Timings} Timings */
/** @typedef {Awaited<ReturnType<typeof import('../../figures/spread.mjs').balanceRuns>>} Balance */
/** @typedef {Awaited<ReturnType<typeof import('../../figures/spread.mjs').handoverRuns>>} Handovers */

/**
 * @param {string} store
 * @param {Timings} t
 * @param {{ replicas: number, elections: number }} size
 * @param {Balance} r
 * @returns {Row}
 */
export function balanceRow(store, t, { replicas, elections }, r) {
  const share = Math.ceil(elections / replicas);
  return failRow(
    rowFrom(
      10,
      'cold start: all up → balanced',
      `ours/${store}, ${replicas} replicas × ${elections} elections`,
      `${settingsText(t)}; balanced = one leader per election, none leads > ⌈E/N⌉ = ${share}, unchanged for ${seconds(r.stableMs)}`,
      'ms',
      summarize(r.samples),
      null,
      'spread moves one election per replica per renew + 2 retries',
    ),
    r.failures,
  );
}

/**
 * @param {string} store
 * @param {Timings} t
 * @param {Handovers} r
 * @returns {Row}
 */
export function handoverRow(store, t, r) {
  const stats = summarize(r.samples);
  const p90 = percentile(r.samples, 0.9);
  return {
    ...failRow(
      rowFrom(
        11,
        'handover request → named replica elected',
        `ours/${store}`,
        `${settingsText(t)}; 3 replicas, asked by the one that neither leads nor is named`,
        'ms',
        stats,
        t.renewMs + t.retryMs,
        'renew interval + retry interval',
      ),
      r.failures,
    ),
    note: `p90 ${p90 === null ? '—' : Math.round(p90)} ms`,
    ...(p90 === null ? {} : { detail: { p90, min: /** @type {number} */ (stats.min) } }),
  };
}

/**
 * Figure 12, and a loud error when any leadership changed.
 * @param {string} store
 * @param {Timings} t
 * @param {{ replicas: number, elections: number }} size
 * @param {NonNullable<Balance['watch']>} watch
 * @param {string[]} errors
 * @returns {Row}
 */
export function flappingRow(store, t, { replicas, elections }, watch, errors) {
  // A handover is one revoked and one elected; a lost lease nobody took yet, a revoked alone.
  const changes = Math.max(watch.elected, watch.revoked);
  const reasons = Object.entries(watch.reasons).map(([reason, n]) => `${n}× ${reason}`);
  const failures = [];
  if (changes > 0 || watch.exited.length > 0) {
    failures.push(
      `FLAPPING: ${watch.elected} elected / ${watch.revoked} revoked in a balanced cluster (${reasons.join(', ') || 'no reason'})` +
        (watch.exited.length ? `; exited: ${watch.exited.join(', ')}` : ''),
    );
    errors.push(`figure 12 FAILED: ${failures[0]}`);
    console.error(`\n!!! figure 12 FAILED: ${failures[0]}\n`);
  }
  return {
    ...failRow(
      single(
        12,
        'leadership changes while balanced',
        `ours/${store}, ${replicas} replicas × ${elections} elections`,
        `${settingsText(t)}; watched ${seconds(watch.watchedMs)} from the moment it balanced; leaderships ${watch.loads.join('/')} at the end`,
        'changes',
        changes,
        0,
        'must be 0',
      ),
      failures,
    ),
    digits: 0,
  };
}

/** @typedef {Record<string, number>} Counts */
/** @typedef {{ calls: Counts, http?: Counts }} RoleCalls */
/**
 * @typedef {{ error?: string, elapsedMs: number, stillLeaders: boolean, window: Record<string, RoleCalls>,
 *   handovers: Array<{ ok: boolean, ms: number, calls: Record<string, Counts>, http?: Record<string, Counts | undefined> }> }} Measured
 */

/**
 * @param {string[]} stores
 * @param {{ stores?: Record<string, Measured> } | undefined} result
 * @param {string[]} errors
 * @returns {Row[]}
 */
export function handoverCallRows(stores, result, errors) {
  /** @type {Row[]} */
  const rows = [];
  for (const store of stores) {
    const r = result?.stores?.[store];
    if (!r || r.error) {
      errors.push(`figure 13 ${store}: ${r?.error ?? 'no result'}`);
      continue;
    }
    /** @param {number} count */
    const perHour = (count) => (count * 3_600_000) / r.elapsedMs;
    /** @param {Counts} calls */
    const callsOf = (calls) => sum(calls) - (calls.watch ?? 0);
    const settings = `defaults (${settingsText(DEFAULTS)}); ${seconds(r.elapsedMs)} window${r.stillLeaders ? '' : '; a leader lost its lease'}`;
    for (const role of /** @type {const} */ (['leader', 'follower'])) {
      const base = r.window[`base-${role}`];
      const withCapability = r.window[role];
      if (!base || !withCapability) continue;
      const added = perHour(callsOf(withCapability.calls) - callsOf(base.calls));
      rows.push({
        ...single(
          13,
          'store calls per instance-hour, with handover',
          `ours/${store} ${role}`,
          settings,
          'calls/h',
          perHour(callsOf(withCapability.calls)),
          perHour(callsOf(base.calls)),
          'baseline: capability hidden',
        ),
        note: `${added >= 0 ? '+' : ''}${Math.round(added)} calls/h (readHandover ${perHourText(perHour, withCapability.calls.readHandover)})`,
        detail: withCapability.calls,
      });
      if (withCapability.http && base.http) {
        rows.push({
          ...single(
            13,
            'Azure requests per instance-hour, with handover',
            `ours/azure ${role} (HTTP)`,
            settings,
            'req/h',
            perHour(sum(withCapability.http)),
            perHour(sum(base.http)),
            'baseline: capability hidden',
          ),
          detail: withCapability.http,
        });
      }
    }
    const done = r.handovers.filter((h) => h.ok);
    // What exists only because of the handover: the requester's calls, the old leader's release (and
    // a clear), the new leader's winning acquire. Renewals and polls inside the window are steady-state.
    const oneTime = done.map(
      (h) => sum(h.calls.requester ?? {}) + (h.calls.old?.release ?? 0) + (h.calls.old?.clearHandover ?? 0) + 1,
    );
    const windowCalls = done.map((h) => Object.values(h.calls).reduce((a, c) => a + callsOf(c), 0));
    rows.push({
      ...failRow(
        rowFrom(
          13,
          'one-time store calls per handover',
          `ours/${store}`,
          `requester: read + request; old leader: release (reserved); new leader: its winning acquire. All calls of the 3 instances from request to elected: median ${summarize(windowCalls).median ?? '—'}`,
          'calls',
          summarize(oneTime),
          4,
          'read + request + release + acquire',
        ),
        r.handovers.length > done.length ? [`${r.handovers.length - done.length} handovers did not complete`] : [],
      ),
      digits: 0,
      detail: done[0] ? flatten(done[0].calls) : undefined,
    });
  }
  return rows;
}

/**
 * @param {(count: number) => number} perHour
 * @param {number | undefined} count
 */
const perHourText = (perHour, count) => (count === undefined ? 'n/a' : `${Math.round(perHour(count))}/h`);

/** @param {Record<string, Counts>} calls */
function flatten(calls) {
  /** @type {Record<string, number>} */
  const flat = {};
  for (const [who, counts] of Object.entries(calls)) {
    for (const [method, n] of Object.entries(counts)) if (n) flat[`${who}.${method}`] = n;
  }
  return flat;
}

/**
 * Nearest-rank percentile, as stats.mjs does.
 * @param {number[]} values
 * @param {number} p
 */
function percentile(values, p) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!sorted.length) return null;
  return /** @type {number} */ (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]);
}
