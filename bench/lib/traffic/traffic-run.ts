// The store-traffic figure's measurement on ONE store (bench/figures/store-traffic.mjs runs one per
// store, in parallel, and turns its counts into calls per replica-hour at the defaults):
//
//   STORE=postgres WINDOW_MS=30000 node --import ./test/support/swc-register.mjs bench/lib/traffic/traffic-run.ts
//
// For each feature configuration, one election with REPLICAS replicas (Nest application contexts in
// this process, each with its own store, connections and counting proxy), the first one started
// alone so it leads; with STANDBY, the same configuration again with activeFollowers (a leader, its
// active followers and standby ones). The renew and retry intervals, the standby poll and the app's
// state writes are the defaults divided by SCALE; the lease and the renew deadline only by
// LEASE_SCALE (on Azure, whose leases are 15–60 s, not at all): a leader's calls do not depend on them,
// and a longer deadline rides out a loaded machine's stalls (with lease 3 s every etcd leader once
// lost its lease in the same window). The cron job fires every second as at the defaults. After
// WARMUP_MS all windows open together for WINDOW_MS. Prints one `@@b {"type":"result", …}` line.
//
//   STORE            postgres | mysql | redis | etcd | azure (addresses: PG_URL, MYSQL_URL, REDIS_URL, ETCD_ENDPOINT, AZURE_CONNECTION_STRING)
//   SCALE            5        LEASE_SCALE    2.5      STATE_EVERY_S  5 (the app's state period at the defaults)
//   WINDOW_MS        30000    WARMUP_MS      3000
//   FEATURES         every configuration, comma-separated        STANDBY   job-commands (features to repeat with activeFollowers; '' none)
import { randomBytes } from 'node:crypto';
import { DEFAULT_STANDBY_POLL_MS, DEFAULT_TIMINGS } from '../../../lib/election/elector-options.js';
import { followerDelayMs } from '../../../lib/election/follower-schedule.js';
import { standbySlotLeaseMs } from '../../../lib/election/standby.js';
import { emit, numberEnv } from '../../apps/stores.js';
import type { Capability } from './call-log.js';
import { type Replica, startReplica } from './traffic-replica.js';
import { type TrafficStore, type TrafficStoreKind, trafficStore } from './traffic-stores.js';
import { type Window, type WindowTraffic, windowTraffic } from './traffic-window.js';
import { REQUEST_DEFINITIONS } from './wire-protocols.js';

/** The feature configurations, each adding to the one before ('once-per-tick' is issue 29's "done when" app; 'job-commands' adds job control). */
const FEATURES: Record<string, { expose: Capability[]; state: boolean; oncePerTick: boolean }> = {
  plain: { expose: [], state: false, oncePerTick: false },
  handover: { expose: ['handover'], state: false, oncePerTick: false },
  state: { expose: ['handover', 'state'], state: true, oncePerTick: false },
  'once-per-tick': { expose: ['handover', 'state'], state: true, oncePerTick: true },
  'job-commands': { expose: ['handover', 'state', 'records'], state: true, oncePerTick: true },
};
const REPLICAS = 3;
/** With activeFollowers: a leader, ACTIVE_FOLLOWERS active followers and one standby. */
const ACTIVE_FOLLOWERS = 2;

const kind = (process.env.STORE ?? '') as TrafficStoreKind;
// One pooled connection per replica (and its LISTEN one): some 40 replicas must not fill a shared
// server's 100 connections (the default pool of 4 once took 91). Counts do not depend on it.
process.env.PG_POOL_MAX ??= '1';
const SCALE = numberEnv('SCALE', 5);
const LEASE_SCALE = kind === 'azure' ? 1 : numberEnv('LEASE_SCALE', 2.5);
const WINDOW_MS = numberEnv('WINDOW_MS', 30_000);
const WARMUP_MS = numberEnv('WARMUP_MS', 3_000);
const STATE_EVERY_MS = numberEnv('STATE_EVERY_S', 5) * 1_000;
const features = (process.env.FEATURES ?? Object.keys(FEATURES).join(',')).split(',').filter(Boolean);
const standbyFeatures = (process.env.STANDBY ?? 'job-commands').split(',').filter(Boolean);

const timings = {
  leaseDurationMs: DEFAULT_TIMINGS.leaseDurationMs / LEASE_SCALE,
  renewDeadlineMs: DEFAULT_TIMINGS.renewDeadlineMs / LEASE_SCALE,
  renewIntervalMs: DEFAULT_TIMINGS.renewIntervalMs / SCALE,
  retryIntervalMs: DEFAULT_TIMINGS.retryIntervalMs / SCALE,
};
const standbyPollMs = DEFAULT_STANDBY_POLL_MS / SCALE;

/**
 * A follower's mean delay between polls by the library's own schedule (follower-schedule.ts): every
 * retry interval ±15 %, or with a watch just after the holder's lease can have expired, as its
 * store's answer hints — the holder renewed a uniform part of a renew interval before.
 */
function meanPollDelayMs(t: typeof DEFAULT_TIMINGS, watching: boolean): number {
  const samples = 20_000;
  let total = 0;
  for (let i = 0; i < samples; i++) {
    const hint = { inMs: t.leaseDurationMs - Math.random() * t.renewIntervalMs, at: 0 };
    total += followerDelayMs({ ...t, now: 0, watching, hint, spreadWouldAsk: false, random: Math.random });
  }
  return total / samples;
}

interface Member extends TrafficStore {
  replica: Replica;
}

interface Run {
  feature: string;
  activeFollowers?: number;
  election: string;
  members: Member[];
  error?: string;
}

async function startRun(feature: string, activeFollowers: number | undefined): Promise<Run> {
  const config = FEATURES[feature];
  if (!config) throw new Error(`unknown feature ${feature} (one of ${Object.keys(FEATURES).join(', ')})`);
  const election = `traffic-${feature}-${activeFollowers ?? 0}-${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const run: Run = { feature, activeFollowers, election, members: [] };
  const start = async (index: number) => {
    const made = await trafficStore(kind, config.expose);
    const replica = await startReplica({
      store: made.store,
      election,
      identity: `${index === 0 ? 'leader' : 'replica'}-${index}`,
      timings,
      ...(activeFollowers ? { activeFollowers, standbyPollMs } : {}),
      oncePerTick: config.oncePerTick,
      ...(config.state ? { stateEveryMs: STATE_EVERY_MS / SCALE } : {}),
    });
    run.members.push({ ...made, replica });
    return replica;
  };
  try {
    const first = await start(0);
    await until(() => first.service.isLeader(), 30_000);
    if (!first.service.isLeader()) throw new Error('the first replica did not lead within 30 s');
    const count = activeFollowers ? activeFollowers + 2 : REPLICAS;
    await Promise.all(Array.from({ length: count - 1 }, (_, i) => start(i + 1)));
  } catch (error) {
    run.error = error instanceof Error ? error.message : String(error);
  }
  return run;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
}

function roleOf(member: Member, traffic: WindowTraffic, run: Run): string {
  if (member.replica.service.isLeader()) return 'leader';
  if (!run.activeFollowers) return 'follower';
  return traffic.calls['slot-renew'] ? 'active' : 'standby';
}

const startedAt = Date.now();
const plan = [
  ...features.map((feature) => ({ feature, activeFollowers: undefined })),
  ...standbyFeatures.map((feature) => ({ feature, activeFollowers: ACTIVE_FOLLOWERS })),
];
const runs = await Promise.all(plan.map(({ feature, activeFollowers }) => startRun(feature, activeFollowers)));
await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));

const window: Window = { from: performance.now(), until: 0 };
const before = runs.map((run) => run.members.map((m) => ({ tally: { ...m.replica.tally }, bytes: m.wire.bytes() })));
await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
window.until = performance.now();
const bytesAtEnd = runs.map((run) => run.members.map((m) => m.wire.bytes()));
// A leader's window ends at its first renewal after this (traffic-window.ts): let it come, and its reads.
await new Promise((resolve) => setTimeout(resolve, timings.renewIntervalMs + 250));

const results = runs.map((run, r) => {
  const replicas = run.members.map((member, m) => {
    const at = before[r]?.[m];
    const traffic = windowTraffic(member.calls, member.wire, window, {
      atStart: at?.bytes,
      atEnd: bytesAtEnd[r]?.[m],
    });
    const tally = member.replica.tally;
    const delta = (key: 'stateWrites' | 'stateFailures' | 'elected' | 'revoked') => tally[key] - (at?.tally[key] ?? 0);
    const { span, ...counted } = traffic;
    return {
      identity: member.replica.identity,
      role: roleOf(member, traffic, run),
      spanMs: span.until - span.from,
      ticks: tally.ticks.filter((time) => time >= span.from && time < span.until).length,
      stateWrites: delta('stateWrites'),
      stateFailures: delta('stateFailures'),
      leadershipChanges: delta('elected') + delta('revoked'),
      ...counted,
    };
  });
  return {
    feature: run.feature,
    activeFollowers: run.activeFollowers ?? null,
    election: run.election,
    ...(run.error ? { error: run.error } : {}),
    replicas,
  };
});

await Promise.allSettled(runs.flatMap((run) => run.members.map((m) => m.replica.close())));
await Promise.allSettled(runs.flatMap((run) => run.members.map((m) => m.wire.close())));

const store = runs[0]?.members[0]?.store;
const push = typeof store?.watch === 'function';
emit('traffic', {
  type: 'result',
  store: kind,
  scale: SCALE,
  leaseScale: LEASE_SCALE,
  windowMs: window.until - window.from,
  warmupMs: WARMUP_MS,
  timings: { ...timings, standbyPollMs, stateEveryMs: STATE_EVERY_MS / SCALE, tickMs: 1_000 },
  defaults: { ...DEFAULT_TIMINGS, standbyPollMs: DEFAULT_STANDBY_POLL_MS, stateEveryMs: STATE_EVERY_MS, tickMs: 1_000 },
  // An active follower renews its slot every third of the slot's lease: three election leases, within the store's limits.
  slotLeaseMs: {
    measured: store ? standbySlotLeaseMs(store, timings.leaseDurationMs) : null,
    defaults: store ? standbySlotLeaseMs(store, DEFAULT_TIMINGS.leaseDurationMs) : null,
  },
  push,
  // The nominal mean delay between a follower's polls (a standby's: standbyPollMs ±15 %).
  pollDelayMs: {
    follower: { measured: meanPollDelayMs(timings, push), defaults: meanPollDelayMs(DEFAULT_TIMINGS, push) },
    standby: { measured: standbyPollMs, defaults: DEFAULT_STANDBY_POLL_MS },
  },
  wireCounts: kind === 'azure' ? 'HTTP requests (every one billed)' : REQUEST_DEFINITIONS[kind],
  runSeconds: (Date.now() - startedAt) / 1000,
  runs: results,
});
process.exit(0);
