// @ts-check
// Rows of figure 8: what a fleet costs the store. Measured per instance by bench/apps/calls.ts (one
// leader and one follower instance, with 1 and with 20 elections each, calls counted at the LeaseStore
// boundary and for Azure as HTTP requests), then projected: each election has one leader and R − 1
// followers, so a fleet of R replicas with E elections each makes
//   calls/h = L(E) + (R − 1) × F(E)
// where L(E) and F(E) are the measured calls per hour of an instance leading, resp. following, E elections.
// (Which replica leads which election does not change the sum.) Azure's monthly cost applies the list
// price of calls.mjs to the billed requests: cost = billed/h × 730 h × price / 10,000.

import { existsSync, readFileSync } from 'node:fs';
import { DEFAULTS } from '../impls.mjs';
import { AZURE_OTHER_PER_10K, billedOps, HOURS_PER_MONTH, sum } from './calls.mjs';
import { settingsText, single } from './common.mjs';

/** @typedef {import('./common.mjs').Row} Row */
/** @typedef {import('./calls.mjs').StoreCalls & { elections?: number }} Measured */

export const FLEET_REPLICAS = [10, 100, 1_000];
/** Figure 9: the largest contention run this 2-core machine holds, as 20 replicas with 10 electors each. */
export const FLEET_CONTENTION = { figure: 9, electors: 200, perProcess: 10 };

/**
 * @param {string[]} stores
 * @param {{ stores?: Record<string, Measured>, multi?: Record<string, Measured> } | undefined} callsResult
 * @param {string[]} errors
 * @returns {Row[]}
 */
export function fleetRows(stores, callsResult, errors) {
  /** @type {Row[]} */
  const rows = [];
  for (const store of stores) {
    const one = callsResult?.stores?.[store];
    const many = callsResult?.multi?.[store];
    if (!many || many.error) errors.push(`figure 8 ${store}: ${many?.error ?? 'no multi-election result'}`);
    for (const measured of [one, many]) {
      if (!measured || measured.error) continue;
      const elections = measured.elections ?? 1;
      const rate = perHour(measured);
      if (elections > 1 && one && !one.error) rows.push(...linearityRows(store, measured, one));
      const settings = `${elections} election${elections > 1 ? 's' : ''} per replica; defaults (${settingsText(DEFAULTS)})`;
      for (const replicas of FLEET_REPLICAS) {
        const calls = rate.leader + (replicas - 1) * rate.follower;
        rows.push({
          ...single(
            8,
            'store calls per hour, whole fleet',
            `ours/${store}, ${replicas} replicas × ${elections}`,
            settings,
            'calls/h',
            calls,
            null,
            `L + (R−1)·F = ${Math.round(rate.leader)} + ${replicas - 1} × ${Math.round(rate.follower)}`,
          ),
          note: `${round1(calls / 3_600)} calls/s at the store`,
        });
        if (rate.billedLeader === null || rate.billedFollower === null) continue;
        const billed = rate.billedLeader + (replicas - 1) * rate.billedFollower;
        rows.push({
          ...single(
            8,
            'Azure cost per month, whole fleet',
            `ours/azure, ${replicas} replicas × ${elections}`,
            settings,
            'USD',
            (billed * HOURS_PER_MONTH * AZURE_OTHER_PER_10K) / 10_000,
            null,
            `(${Math.round(rate.billedLeader)} + ${replicas - 1} × ${Math.round(rate.billedFollower)}) billed req/h × ${HOURS_PER_MONTH} h × $${AZURE_OTHER_PER_10K}/10k`,
          ),
          digits: 2,
        });
      }
    }
  }
  return rows;
}

/**
 * Figure 8 with standby followers (`activeFollowers`), from bench/experiments/standby.mjs's own run (its window
 * must span several 30 s standby polls, longer than this run's): per store, the fleet's calls per hour
 * with the option next to the same fleet without it (both measured there, in the same run).
 * @param {string} file bench/results/standby.json
 * @param {string[]} errors
 * @returns {Row[]}
 */
export function standbyFleetRows(file, errors) {
  if (!existsSync(file)) {
    errors.push('figure 8 standby: no bench/results/standby.json (run node bench/experiments/standby.mjs)');
    return [];
  }
  const measured = JSON.parse(readFileSync(file, 'utf8'));
  const { activeFollowers, standbyPollMs } = measured.settings;
  const settings = `activeFollowers ${activeFollowers}, standbyPollMs ${standbyPollMs / 1000} s; defaults; measured by bench/experiments/standby.mjs on ${measured.measuredAt.slice(0, 10)}`;
  /** @type {Row[]} */
  const rows = [];
  /** @type {Array<[string, string, string, string]>} */
  const kinds = [
    ['mysqlCalls', 'store calls per hour, whole fleet, standby', 'ours/mysql', 'calls/h'],
    ['azureBilled', 'billed requests per hour, whole fleet, standby', 'ours/azure', 'requests/h'],
  ];
  for (const [key, metric, store, unit] of kinds) {
    for (const p of measured.projection[key] ?? []) {
      rows.push({
        ...single(
          8,
          metric,
          `${store}, ${p.replicas} replicas × ${p.elections}`,
          settings,
          unit,
          p.withStandby.perHour,
          p.without.perHour,
          `without standby (${p.formula})`,
        ),
        note: `${round1(p.withStandby.perSecond)} vs ${round1(p.without.perSecond)} calls/s${p.usdPerMonth ? `; $${p.usdPerMonth.withStandby.toFixed(2)} vs $${p.usdPerMonth.without.toFixed(2)} per month` : ''}`,
      });
    }
  }
  return rows;
}

/**
 * Calls per hour of the measured leader and follower instance (watch subscriptions are not calls).
 * @param {Measured} m
 */
function perHour(m) {
  /** @param {number} count */
  const hourly = (count) => (count * 3_600_000) / m.elapsedMs;
  /** @param {import('./calls.mjs').RoleCalls} role */
  const calls = (role) => hourly(sum(role.calls) - (role.calls.watch ?? 0));
  return {
    leader: calls(m.leader),
    follower: calls(m.follower),
    billedLeader: m.leader.http ? hourly(billedOps(m.leader.http)) : null,
    billedFollower: m.follower.http ? hourly(billedOps(m.follower.http)) : null,
  };
}

/**
 * The measured instance with E elections next to E × the one-election instance: the projection assumes
 * an instance's calls grow linearly with its elections (no sharing, no batching), which this checks.
 * @param {string} store
 * @param {Measured} many
 * @param {Measured} one
 * @returns {Row[]}
 */
function linearityRows(store, many, one) {
  const elections = many.elections ?? 1;
  const m = perHour(many);
  const o = perHour(one);
  return /** @type {const} */ (['leader', 'follower']).map((role) =>
    single(
      8,
      `store calls per instance-hour, ${elections} elections`,
      `ours/${store} ${role}`,
      `${seconds(many.elapsedMs)} window, one store instance shared by the ${elections} electors`,
      'calls/h',
      m[role],
      elections * o[role],
      `${elections} × the 1-election instance`,
    ),
  );
}

/** @param {number} ms */
const seconds = (ms) => `${Math.round(ms / 100) / 10} s`;
/** @param {number} v */
const round1 = (v) => Math.round(v * 10) / 10;
