// @ts-check
// The implementations the benchmarks run as real processes: this library over each store
// (bench/apps/replica.ts) and the two peers (bench/apps/peer-*.mjs). Each `spawn(identity, election)`
// starts one replica; all print the same `@@b` events (ready, elected, act, revoked, believes…).
import { randomBytes } from 'node:crypto';
import { Child } from './proc.mjs';

/** Timings per scenario. `tickMs`: period of the leader-only job whose runs count as "acting". */
/**
 * @typedef {{ leaseMs: number, renewDeadlineMs: number, renewMs: number, retryMs: number }} Timings
 * @typedef {object} Impl one implementation, as the figures start it
 * @property {string} label
 * @property {string} short
 * @property {string} store
 * @property {Timings} timings
 * @property {boolean} push
 * @property {number} bootTimeoutMs
 * @property {number} [followerPhaseMs]
 * @property {(identity: string, election: string) => Child} spawn one replica
 */

export const TICK_MS = 20;
export const JITTER = 0.15;

/** Short leases where the store allows them (figure 3, contention). etcd counts whole seconds, from 2 s. */
export const FAST = { leaseMs: 2_000, renewDeadlineMs: 1_400, renewMs: 400, retryMs: 500 };
/** The library's defaults; Azure leases are 15–60 s (figure 3 on Azure, figure 5, side by side). */
export const DEFAULTS = { leaseMs: 15_000, renewDeadlineMs: 10_000, renewMs: 2_500, retryMs: 2_000 };

export const PUSH_STORES = new Set(['postgres', 'redis', 'etcd']);

/** @param {string} prefix */
export function uniqueElection(prefix) {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

/**
 * This library over `store`, with `timings`.
 * @param {string} store
 * @param {Timings} timings
 * @returns {Impl}
 */
export function ours(store, timings) {
  return {
    label: `@leaderlease/nestjs (${store})`,
    short: `ours/${store}`,
    store,
    timings,
    push: PUSH_STORES.has(store),
    bootTimeoutMs: 30_000,
    spawn(identity, election) {
      return new Child(`${this.short}:${identity}`, 'bench/apps/replica.ts', {
        STORE: store,
        ELECTION: election,
        IDENTITY: identity,
        LEASE_MS: String(timings.leaseMs),
        RENEW_DEADLINE_MS: String(timings.renewDeadlineMs),
        RENEW_MS: String(timings.renewMs),
        RETRY_MS: String(timings.retryMs),
        TICK_MS: String(TICK_MS),
      });
    },
  };
}

/**
 * The npm package `nest-leader-election` (TypeORM + PostgreSQL). Its options: leaseDuration,
 * renewalInterval (its renew *and* poll period), jitterRange (total spread). `schema` keeps
 * parallel chains apart: its cleanup job deletes every expired row of its table.
 * @param {Timings} timings
 * @param {string} schema
 * @returns {Impl}
 */
export function nle(timings, schema) {
  return {
    label: 'nest-leader-election (npm, PostgreSQL)',
    short: 'nest-leader-election',
    store: 'postgres',
    timings,
    push: false,
    bootTimeoutMs: 30_000,
    // Its takeover waits for a cleanup job that runs every 2 × leaseDuration from each process's
    // start: a follower must have run for a random part of that period, as in production.
    followerPhaseMs: 2 * timings.leaseMs,
    spawn(identity, election) {
      return new Child(`nle:${identity}`, 'bench/apps/peer-nle.mjs', {
        SCHEMA: schema,
        LOCK_ID: String(lockIdOf(election)),
        IDENTITY: identity,
        LEASE_MS: String(timings.leaseMs),
        POLL_MS: String(timings.retryMs),
        JITTER_MS: String(Math.round(2 * JITTER * timings.retryMs)),
        TICK_MS: String(TICK_MS),
      });
    },
  };
}

/**
 * The `etcd3` package's own Election (campaign / elected / error → campaign again after retryMs).
 * @param {Timings} timings
 * @returns {Impl}
 */
export function etcd3Election(timings) {
  return {
    label: 'etcd3 Election (npm etcd3)',
    short: 'etcd3-election',
    store: 'etcd',
    timings,
    push: true,
    bootTimeoutMs: 30_000,
    spawn(identity, election) {
      return new Child(`etcd3:${identity}`, 'bench/apps/peer-etcd3.mjs', {
        ELECTION: election,
        IDENTITY: identity,
        LEASE_MS: String(timings.leaseMs),
        RETRY_MS: String(timings.retryMs),
        TICK_MS: String(TICK_MS),
      });
    },
  };
}

/**
 * A stable positive 31-bit integer per election name (the peer's lock id).
 * @param {string} election
 */
function lockIdOf(election) {
  let hash = 7;
  for (const char of election) hash = (hash * 31 + char.charCodeAt(0)) | 0;
  return (Math.abs(hash) % 2_000_000_000) + 1;
}
