// @ts-check
// Rows of figure 5: store calls per instance-hour (counted at the LeaseStore boundary by
// bench/apps/calls.ts), Azure's billed requests and their monthly cost, and each store's round trip.

import { DEFAULTS } from '../impls.mjs';
import { summarize } from '../stats.mjs';
import { seconds, settingsText, single } from './common.mjs';

/**
 * Azure Blob Storage list price of "All other operations" (Hot tier, LRS, US East, USD per 10,000),
 * used for the per-instance-month cost. Lease Blob (acquire/renew/release), Get Blob Properties and
 * Set Blob Metadata are all billed as "Other" on general-purpose v2 accounts (Microsoft Learn, "Map
 * each REST operation to a price", ms.date 2025-05-14). Override with BENCH_AZURE_OTHER_PER_10K.
 */
export const AZURE_OTHER_PER_10K = Number(process.env.BENCH_AZURE_OTHER_PER_10K ?? 0.0044);
export const AZURE_PRICE_SOURCE =
  'azure.microsoft.com/pricing/details/storage/blobs (Hot, LRS, US East, "All other operations"), list price as of 2025; ' +
  'operation categories: learn.microsoft.com/azure/storage/blobs/map-rest-apis-transaction-categories (2025-05-14)';
export const HOURS_PER_MONTH = 730;

/** @typedef {import('./common.mjs').Row} Row */
/** @typedef {Record<string, number>} Counts */
/** @typedef {{ calls: Counts, http?: Counts }} RoleCalls */
/** @typedef {{ error?: string, elapsedMs: number, rttMs: number[], leader: RoleCalls, follower: RoleCalls }} StoreCalls */

/** @param {Counts} counts */
export const sum = (counts) => Object.values(counts).reduce((a, b) => a + b, 0);

/**
 * Azure's requests billed as "All other operations": Lease Blob, Set Blob Metadata, Get Blob Properties.
 * @param {Counts} http requests per operation
 */
export const billedOps = (http) =>
  sum(
    Object.fromEntries(
      Object.entries(http).filter(([op]) => op.startsWith('lease:') || op === 'metadata' || op === 'read:HEAD'),
    ),
  );

/**
 * The median read round trip per store (1 ms when unmeasured): the push bounds of figures 3 and 4.
 * @param {string[]} stores
 * @param {{ stores?: Record<string, StoreCalls> } | undefined} callsResult
 * @returns {Record<string, number>}
 */
export function roundTrips(stores, callsResult) {
  /** @type {Record<string, number>} */
  const rtt = {};
  for (const store of stores) {
    const r = callsResult?.stores?.[store];
    // An empty sample list gives null, as it always did (the bounds then read as 0).
    rtt[store] = r?.rttMs ? /** @type {number} */ (summarize(r.rttMs).median) : 1;
  }
  return rtt;
}

/**
 * @param {string[]} stores
 * @param {{ stores?: Record<string, StoreCalls> } | undefined} callsResult
 * @param {string[]} errors
 * @returns {Row[]}
 */
export function callRows(stores, callsResult, errors) {
  /** @type {Row[]} */
  const rows = [];
  for (const store of stores) {
    const r = callsResult?.stores?.[store];
    if (!r || r.error) {
      errors.push(`figure 5 ${store}: ${r?.error ?? 'no result'}`);
      continue;
    }
    /** @param {number} count */
    const perHour = (count) => (count * 3_600_000) / r.elapsedMs;
    const settings = `defaults (${settingsText(DEFAULTS)}); ${seconds(r.elapsedMs)} window`;
    for (const role of /** @type {const} */ (['leader', 'follower'])) {
      const calls = r[role].calls;
      const theoretical = role === 'leader' ? 3_600_000 / DEFAULTS.renewMs : 3_600_000 / DEFAULTS.retryMs;
      rows.push({
        ...single(
          5,
          'store calls per instance-hour',
          `ours/${store} ${role}`,
          settings,
          'calls/h',
          perHour(sum(calls) - (calls.watch ?? 0)),
          theoretical,
          role === 'leader' ? '3600 s / renew interval' : '3600 s / retry interval',
        ),
        detail: calls,
      });
      const http = r[role].http;
      if (http) rows.push(...azureRows(role, http, r.elapsedMs, perHour));
    }
    rows.push({
      figure: 5,
      metric: 'store round trip (read)',
      subject: `ours/${store}`,
      settings: 'loopback; used for the push bounds above',
      unit: 'ms',
      ...summarize(r.rttMs),
      bound: null,
      boundText: '—',
      digits: 2,
    });
  }
  return rows;
}

/**
 * Azure's HTTP requests of one role, and what the billed ones cost per instance-month.
 * @param {string} role
 * @param {Counts} http requests per operation
 * @param {number} elapsedMs
 * @param {(count: number) => number} perHour
 * @returns {Row[]}
 */
function azureRows(role, http, elapsedMs, perHour) {
  const other = billedOps(http);
  const monthly = (perHour(other) * HOURS_PER_MONTH * AZURE_OTHER_PER_10K) / 10_000;
  return [
    single(
      5,
      'Azure requests per instance-hour',
      `ours/azure ${role} (HTTP, billed)`,
      `${Object.entries(http)
        .map(([op, v]) => `${op} ${v}`)
        .join(', ')} in ${seconds(elapsedMs)}`,
      'req/h',
      perHour(sum(http)),
      null,
      '—',
    ),
    {
      ...single(
        5,
        'Azure cost per instance-month',
        `ours/azure ${role}`,
        `${Math.round(perHour(other))} "other" ops/h × ${HOURS_PER_MONTH} h × $${AZURE_OTHER_PER_10K}/10k`,
        'USD',
        monthly,
        null,
        '—',
      ),
      digits: 2,
    },
  ];
}
