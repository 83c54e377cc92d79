// @ts-check
// Rows of figures 3 (failover and handover per store) and 4 (side by side with the peer libraries),
// from the trial chains of jobs.mjs, each next to its theoretical bound.

import { DEFAULTS, JITTER, PUSH_STORES, TICK_MS } from '../impls.mjs';
import { fig3Timings } from '../jobs.mjs';
import { summarize } from '../stats.mjs';
import { failRow, rowFrom, seconds, settingsText } from './common.mjs';

/** @typedef {import('./common.mjs').Row} Row */
/** @typedef {import('../jobs.mjs').Results} Results */

/**
 * @param {string[]} stores
 * @param {Results} results
 * @param {Record<string, number>} rtt median read round trip per store (figure 5), for the push bounds
 * @returns {Row[]}
 */
export function failoverRows(stores, results, rtt) {
  /** @type {Row[]} */
  const rows = [];
  for (const store of stores) {
    const t = fig3Timings(store);
    const settings = settingsText(t);
    const push = PUSH_STORES.has(store);
    const crash = results.get(`3:crash:${store}`);
    const handover = results.get(`3:handover:${store}`);
    const cold = results.get(`3:cold:${store}`);
    rows.push(
      failRow(
        rowFrom(
          3,
          'kill -9 → next leader acting',
          `ours/${store}`,
          settings,
          'ms',
          summarize(crash.samples),
          t.leaseMs + t.retryMs * (1 + JITTER) + TICK_MS,
          'lease + retry (+jitter, +tick)',
        ),
        crash.failures,
      ),
      failRow(
        rowFrom(
          3,
          'SIGTERM → next leader acting',
          `ours/${store}`,
          settings,
          'ms',
          summarize(handover.samples),
          push ? 3 * rtt[store] + TICK_MS : t.retryMs * (1 + JITTER) + TICK_MS,
          push ? '1 round trip: release→notify→acquire (+tick)' : 'one retry interval (+jitter, +tick)',
        ),
        handover.failures,
      ),
      failRow(
        rowFrom(
          3,
          'cold start → first leader acting',
          `ours/${store}`,
          `2 processes at once; ${settings}`,
          'ms',
          summarize(cold.samples),
          null,
          'process + Nest boot (no bound)',
        ),
        cold.failures,
      ),
      rowFrom(
        3,
        'cold start: first acquire sent → elected',
        `ours/${store}`,
        "the library's share of the above",
        'ms',
        summarize(cold.library),
        rtt[store],
        '1 round trip (cold: + connect, table/container setup)',
      ),
    );
  }
  return rows;
}

/**
 * What figure 4 says of each implementation, and its bounds.
 * @param {Record<string, number>} rtt
 * @returns {Record<string, { subject: string, crashBound: number, crashText: string, handBound: number, handText: string }>}
 */
function sideInfo(rtt) {
  return {
    'ours-pg': {
      subject: '@leaderlease/nestjs (PostgreSQL)',
      crashBound: DEFAULTS.leaseMs + DEFAULTS.retryMs * (1 + JITTER) + TICK_MS,
      crashText: 'lease + retry',
      handBound: 3 * rtt.postgres + TICK_MS,
      handText: '1 round trip (NOTIFY)',
    },
    'ours-etcd': {
      subject: '@leaderlease/nestjs (etcd)',
      crashBound: DEFAULTS.leaseMs + DEFAULTS.retryMs * (1 + JITTER) + TICK_MS,
      crashText: 'lease + retry (watch: ≈ lease + 0.5 s)',
      handBound: 3 * rtt.etcd + TICK_MS,
      handText: '1 round trip (watch)',
    },
    nle: {
      subject: 'nest-leader-election 1.1.2 (PostgreSQL)',
      // From its code: SQL lease fixed at 15 s; a dead holder's row is deleted only by a cleanup job
      // (every 2 × leaseDuration ± jitter/2) once expired for 5 s; then the next poll takes it.
      crashBound:
        15_000 + 5_000 + 2 * DEFAULTS.leaseMs + DEFAULTS.retryMs * JITTER + DEFAULTS.retryMs * (1 + JITTER) + TICK_MS,
      crashText: 'its code: 15 s + 5 s + cleanup period 2×lease + poll',
      handBound: DEFAULTS.retryMs * (1 + JITTER) + TICK_MS,
      handText: 'its poll interval (no push)',
    },
    etcd3: {
      subject: 'etcd3 1.1.2 Election (etcd)',
      // etcd revokes expired leases in a 500 ms loop; its watch then wakes the next candidate.
      crashBound: DEFAULTS.leaseMs + 500 + rtt.etcd + TICK_MS,
      crashText: 'TTL + 0.5 s (etcd expiry loop) + 1 round trip',
      handBound: 3 * rtt.etcd + TICK_MS,
      handText: '1 round trip (watch)',
    },
  };
}

/**
 * @param {import('../jobs.mjs').Side[]} side
 * @param {Results} results
 * @param {Record<string, number>} rtt
 * @returns {Row[]}
 */
export function sideBySideRows(side, results, rtt) {
  const infos = sideInfo(rtt);
  const settings4 = `same for all: lease/TTL ${seconds(DEFAULTS.leaseMs)}, poll/retry ${seconds(DEFAULTS.retryMs)} ±15 %`;
  /** @type {Row[]} */
  const rows = [];
  for (const s of side) {
    const info = infos[s.name];
    const crash = results.get(`4:crash:${s.name}`);
    const handover = results.get(`4:handover:${s.name}`);
    const pause = results.get(`4:pause:${s.name}`);
    rows.push(
      failRow(
        rowFrom(
          4,
          'kill -9 → next leader acting',
          info.subject,
          settings4,
          'ms',
          summarize(crash.samples),
          info.crashBound,
          info.crashText,
        ),
        crash.failures,
      ),
      failRow(
        rowFrom(
          4,
          'SIGTERM → next leader acting',
          info.subject,
          settings4,
          'ms',
          summarize(handover.samples),
          info.handBound,
          info.handText,
        ),
        handover.failures,
      ),
    );
    const trials = pause.trials;
    const took = trials.filter((t) => t.takeover !== null);
    rows.push(
      failRow(
        {
          ...rowFrom(
            4,
            'SIGSTOP (> lease): another leader acting after',
            info.subject,
            settings4,
            'ms',
            summarize(took.map((t) => t.takeover)),
            info.crashBound,
            info.crashText,
          ),
          note:
            took.length < trials.length
              ? `${trials.length - took.length} of ${trials.length} trials: no takeover within ${s.capMs / 1000} s`
              : undefined,
        },
        pause.failures,
      ),
      rowFrom(
        4,
        'SIGCONT: still believes it leads, for',
        info.subject,
        'after another took over; isLeader()/amILeader() polled every 20 ms',
        'ms',
        summarize(took.map((t) => t.staleMs)),
        0,
        'deadline-checked: 0',
      ),
      {
        ...rowFrom(
          4,
          'SIGCONT: leader-only runs while another leads',
          info.subject,
          `job every ${TICK_MS} ms`,
          'runs',
          summarize(took.map((t) => t.acts)),
          0,
          '0',
        ),
        note: `${took.filter((t) => t.acts > 0).length} of ${took.length} resumed processes acted at least once`,
      },
    );
  }
  return rows;
}
