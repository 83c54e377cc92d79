// @ts-check
// Figure 16 in the report of `npm run bench` and on the console: its rows (per store, each
// configuration's roles and fleet) and the table the figure prints (bench/figures/store-traffic.mjs
// measures; projection.mjs turns the counts into the figures read here).
import { single } from '../rows/common.mjs';
import { FLEET } from './projection.mjs';

/** @typedef {Awaited<ReturnType<typeof import('../../figures/store-traffic.mjs').storeTraffic>>} TrafficOutput */

export const FIGURE = 16;
export const FEATURES = ['plain', 'handover', 'state', 'once-per-tick', 'job-commands'];
export const RESULTS = 'bench/results/store-traffic.json';
const ROLES = ['leader', 'follower', 'active', 'standby'];

/**
 * The figure's rows for the report of `npm run bench`: per store, each feature's leader, and each
 * follower role measured; the fleet per feature.
 * @param {TrafficOutput} output
 * @param {string[]} errors
 * @returns {import('../rows/common.mjs').Row[]}
 */
export function storeTrafficRows(output, errors) {
  /** @type {import('../rows/common.mjs').Row[]} */
  const rows = [];
  const { windowMs, scale, leaseScale } = output.settings;
  const settings = `defaults; measured with renew and retry ÷ ${scale}, lease ÷ ${leaseScale}, over ${windowMs / 1000} s (≙ ${(windowMs * scale) / 1000} s of renewals)`;
  for (const [store, s] of Object.entries(output.stores)) {
    if (s.error || !s.features) {
      errors.push(`figure ${FIGURE} ${store}: ${s.error ?? 'no result'}`);
      continue;
    }
    for (const f of s.features) {
      const variant = f.activeFollowers ? `, activeFollowers ${f.activeFollowers}` : '';
      if (f.error) errors.push(`figure ${FIGURE} ${store} ${f.feature}${variant}: ${f.error}`);
      // Counts, not timings: a leadership change in the window leaves them off steady state; a failed
      // call was still made (and counted), so a few of them only say the server had trouble.
      if (!f.stable) errors.push(`figure ${FIGURE} ${store} ${f.feature}${variant}: leadership changed in the window`);
      if (f.failedCalls) {
        errors.push(
          `figure ${FIGURE} ${store} ${f.feature}${variant}: ${f.failedCalls} store call(s) failed in the window (see ${RESULTS})`,
        );
      }
      for (const role of ROLES) {
        const r = f.roles[role];
        if (!r || (role === 'leader' && f.activeFollowers)) continue;
        // The projection keeps a poll cycle's measured excess over the library's nominal delay unscaled:
        // beyond the poll's own time, a large one means the followers did not poll as the schedule
        // says, or the timers ran late (a loaded machine), or too few polls were seen.
        const excess = r.poll ? r.poll.cycleMs - r.poll.nominalMs - r.poll.callMs : 0;
        if (r.poll && Math.abs(excess) > Math.max(100, r.poll.nominalMs / 4)) {
          errors.push(
            `figure ${FIGURE} ${store} ${role}, ${f.feature}${variant}: mean poll cycle ${Math.round(r.poll.cycleMs)} ms, nominal ${Math.round(r.poll.nominalMs)} ms + ${Math.round(r.poll.callMs)} ms per poll`,
          );
        }
        rows.push({
          ...single(
            FIGURE,
            'store calls per replica-hour',
            `ours/${store} ${role}, ${f.feature}${variant}`,
            settings,
            'calls/h',
            r.calls,
            null,
            '—',
          ),
          note: `wire ${Math.round(r.wire)} round trips/h${r.azure ? ` (${Math.round(r.azure.billedOther)} billed as other)` : ''}`,
          detail: r.byMethod,
        });
      }
      if (f.fleet.callsPerSecond === null) continue;
      rows.push({
        ...single(
          FIGURE,
          `store calls per second, ${FLEET.replicas} replicas × ${FLEET.elections}`,
          `ours/${store}, ${f.feature}${variant}`,
          settings,
          'calls/s',
          f.fleet.callsPerSecond,
          null,
          f.activeFollowers ? 'E × (L + A·active + (R−1−A)·standby)' : 'E × (L + (R−1)·F)',
        ),
        note: `wire ${Math.round(f.fleet.wirePerSecond ?? 0)} round trips/s${f.fleet.usdPerMonth === undefined ? '' : `; $${Math.round(f.fleet.usdPerMonth)}/month for the "other" operations`}`,
      });
    }
  }
  return rows;
}

/**
 * The figure as one table: per store and role, calls per replica-hour (store object / wire) per feature.
 * @param {TrafficOutput} output
 */
export function trafficTable(output) {
  const header = ['store', 'role', ...FEATURES];
  /** @type {string[][]} */
  const lines = [];
  /** @param {number | null | undefined} v */
  const n = (v) => (v === null || v === undefined || Number.isNaN(v) ? '—' : Math.round(v).toLocaleString('en-US'));
  for (const [store, s] of Object.entries(output.stores)) {
    const features = s.features;
    if (s.error || !features) {
      lines.push([store, 'error', (s.error ?? 'no result').slice(0, 80)]);
      continue;
    }
    for (const role of ROLES) {
      const cells = FEATURES.map((feature) => {
        const f = features.find(
          (x) =>
            x.feature === feature && (role === 'active' || role === 'standby' ? x.activeFollowers : !x.activeFollowers),
        );
        const r = f?.roles[role];
        return r ? `${n(r.calls)} / ${n(r.wire)}` : '—';
      });
      if (cells.some((c) => c !== '—')) lines.push([store, role, ...cells]);
    }
    const fleet = FEATURES.map((feature) => {
      const f = features.find((x) => x.feature === feature && !x.activeFollowers);
      return f?.fleet.callsPerSecond === null || !f
        ? '—'
        : `${n(f.fleet.callsPerSecond)} / ${n(f.fleet.wirePerSecond)}`;
    });
    lines.push([store, `fleet/s`, ...fleet]);
    const extra = FEATURES.map((feature) => {
      const per20s = features.find((x) => x.feature === feature && !x.activeFollowers)?.leaderBeyond?.per20s;
      return per20s === undefined ? '—' : per20s.toFixed(1);
    });
    lines.push([store, 'beyond/20s', ...extra]);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  /** @param {string[]} cells */
  const fmt = (cells) =>
    cells.map((c, i) => (i < 2 ? (c ?? '').padEnd(widths[i]) : (c ?? '').padStart(widths[i]))).join('  ');
  return [
    `Figure ${FIGURE}: store calls per replica-hour at the defaults, store object / wire round trips (Azure: HTTP requests);`,
    `fleet/s: ${FLEET.replicas} replicas × ${FLEET.elections} elections, calls per second at the store;`,
    "beyond/20s: the leader's calls per 20 s beyond one per renewal (and one per tick of a once-per-tick job)",
    fmt(header),
    ...lines.map(fmt),
  ].join('\n');
}
