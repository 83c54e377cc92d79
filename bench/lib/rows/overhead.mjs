// @ts-check
// Rows of figures 1 (decorator overhead, tinybench) and 2 (guard overhead, autocannon): phase A,
// CPU-bound, alone on the machine as far as this run goes.
import { decoratorOverhead, guardOverhead } from '../../figures/overhead.mjs';
import { rowFrom, single } from './common.mjs';

/** @typedef {import('./common.mjs').Row} Row */

/** @returns {Promise<Row[]>} */
export async function decoratorRows() {
  const tasks = await decoratorOverhead();
  const base = tasks.plain;
  /** @type {Row[]} */
  const rows = [];
  for (const [key, label] of [
    ['plain', 'plain method (no decorator)'],
    ['leader', '@LeaderOnly() method, on the leader'],
    ['follower', '@LeaderOnly() method, on a follower (skipped)'],
    ['clocks', 'the two clock reads alone (performance.now() + Date.now())'],
  ]) {
    if (!tasks[key]) continue;
    const t = tasks[key];
    rows.push({
      figure: 1,
      metric: 'ns per call',
      subject: label,
      settings: `batches of ${t.callsPerBatch} calls`,
      unit: 'ns',
      n: t.n,
      median: t.median,
      p95: t.p95,
      max: t.max,
      bound: key === 'plain' ? null : base.median,
      boundText: key === 'plain' ? '—' : 'the plain call',
      added: key === 'plain' ? null : t.median - base.median,
      note:
        key === 'plain'
          ? undefined
          : key === 'clocks'
            ? `the floor of the leader path's deadline check: ${Math.round(t.median - base.median)} ns of its added cost`
            : `adds ${Math.round(t.median - base.median)} ns per call`,
    });
  }
  return rows;
}

/**
 * @param {boolean} quick
 * @param {string[]} errors
 * @returns {Promise<Row[]>}
 */
export async function guardRows(quick, errors) {
  const g = await guardOverhead(quick ? { rounds: 2, seconds: 2 } : {});
  const settings = `${g.connections} connections, ${g.rounds} × ${g.seconds} s per route`;
  if (g.errors || g.non2xx) errors.push(`figure 2: ${g.errors} errors, ${g.non2xx} non-2xx answers on the leader`);
  return [
    rowFrom(2, 'requests/s', 'GET /plain (no guard)', settings, 'req/s', g.plain, null, '—'),
    rowFrom(
      2,
      'requests/s',
      'GET /guarded (@LeaderOnly, leader)',
      settings,
      'req/s',
      g.guarded,
      g.plain.median,
      'the plain route',
    ),
    {
      ...rowFrom(2, 'guarded ÷ plain', 'throughput ratio (per round)', settings, '×', g.ratio, 1, 'no cost'),
      digits: 3,
    },
    single(
      2,
      'requests/s',
      'GET /guarded on a follower (503 refusals)',
      '1 round',
      'req/s',
      g.followerRefusals.rps,
      null,
      '—',
    ),
  ];
}
