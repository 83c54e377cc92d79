import fc from 'fast-check';
import type { NetworkFaults } from './sim-store.js';
import { switchesFromEnv } from './switches.js';
import type { TimerFaults } from './world.js';

/**
 * One simulated schedule: timings, each node's clock, the network's fault rates while faults are
 * on, and discrete faults at chosen instants. Everything random inside the run comes from `seed`.
 */
export interface Scenario {
  seed: number;
  nodes: number;
  timings: { leaseDurationMs: number; renewDeadlineMs: number; renewIntervalMs: number; retryIntervalMs: number };
  /** Monotonic clock rate of each node, within ±{@link MAX_DRIFT}. */
  rates: number[];
  timer: TimerFaults;
  net: NetworkFaults;
  /** Faults (network and discrete) happen in [0, faultMs); then everything heals. */
  faultMs: number;
  events: FaultEvent[];
}

/** `node` is an index, or -1 for the node leading when the fault strikes. */
export type FaultEvent =
  | { kind: 'pause' | 'suspend'; at: number; node: number; ms: number }
  | { kind: 'wall'; at: number; node: number; ms: number }
  | { kind: 'partition'; at: number; node: number; ms: number; mode: 'error' | 'blackhole' }
  /** `inFlight`: wait until the server grants the node an acquire, and act while its answer travels. */
  | { kind: 'stop'; at: number; node: number; restartAfterMs: number; inFlight: boolean }
  /** kill -9: the process ends on the spot (no release, nothing runs again); a new one starts later. */
  | { kind: 'crash'; at: number; node: number; restartAfterMs: number }
  | { kind: 'resign'; at: number; node: number; inFlight: boolean };

/** The stated clock-rate bound: 1 %, a hundred times what a quartz oscillator drifts. */
export const MAX_DRIFT = 0.01;

export const FAULT_KINDS = [
  'latency',
  'errors',
  'lost',
  'duplicate',
  'slow',
  'deaf',
  'push',
  'early',
  'late',
  'drift',
  'pause',
  'suspend',
  'wall',
  'partition',
  'stop',
  'crash',
  'resign',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** `SIM_FAULTS=errors,lost` keeps only those faults; default all. */
export const enabledFaults = (spec = process.env.SIM_FAULTS) => switchesFromEnv(spec, FAULT_KINDS);

export function scenarioArbitrary(faults = enabledFaults()): fc.Arbitrary<Scenario> {
  const on = (kind: FaultKind, value: fc.Arbitrary<number>) => (faults.has(kind) ? value : fc.constant(0));
  const timings = fc
    .record({
      leaseDurationMs: fc.constantFrom(1_000, 2_000, 3_000, 15_000),
      margin: uniform(0.25, 0.45),
      renewRatio: uniform(2.5, 6),
      retryRatio: uniform(0.1, 0.5),
    })
    .map(({ leaseDurationMs, margin, renewRatio, retryRatio }) => {
      const renewDeadlineMs = Math.round(leaseDurationMs * (1 - margin));
      return {
        leaseDurationMs,
        renewDeadlineMs,
        renewIntervalMs: Math.round(renewDeadlineMs / renewRatio),
        retryIntervalMs: Math.round(leaseDurationMs * retryRatio),
      };
    });
  return fc
    .record({
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      nodes: fc.integer({ min: 3, max: 5 }),
      timings,
      rates: fc.array(on('drift', uniform(-MAX_DRIFT, MAX_DRIFT)), {
        minLength: 5,
        maxLength: 5,
      }),
      // libuv's loop time is at most ~1 ms stale.
      earlyMs: on('early', uniform(0, 0.999)),
      lateFraction: on('late', uniform(0, 1)),
      latencyMs: on('latency', fc.integer({ min: 0, max: 30 })),
      error: on('errors', uniform(0, 0.3)),
      lostReply: on('lost', uniform(0, 0.2)),
      duplicate: on('duplicate', uniform(0, 0.1)),
      slow: on('slow', uniform(0, 0.1)),
      deaf: on('deaf', uniform(0, 0.5)),
      slowFactor: uniform(0.5, 2),
      lostPush: on('push', uniform(0, 0.5)),
      faultLeases: uniform(6, 20),
      // Unbiased: fast-check's bias to bounds would put most faults at t=0, before anyone runs.
      events: fc.noBias(
        fc.array(
          fc.record({
            kind: fc.constantFrom('pause', 'suspend', 'wall', 'partition', 'stop', 'crash', 'resign'),
            at: uniform(0, 1),
            // -1: whoever leads at that instant (most faults only matter there).
            node: fc.integer({ min: -1, max: 4 }),
            size: uniform(0, 1),
            forward: fc.boolean(),
          }),
          { minLength: 1, maxLength: 10 },
        ),
      ),
    })
    .map((raw): Scenario => {
      const { leaseDurationMs: lease, renewDeadlineMs, renewIntervalMs } = raw.timings;
      const faultMs = Math.round(lease * raw.faultLeases);
      const callTimeoutMs = renewDeadlineMs - renewIntervalMs;
      const events = raw.events
        .filter((e) => faults.has(e.kind as FaultKind) && e.node < raw.nodes)
        .map((e): FaultEvent => {
          const at = Math.round(e.at * faultMs);
          switch (e.kind) {
            case 'pause':
            case 'suspend':
              return { kind: e.kind, at, node: e.node, ms: Math.round(10 + e.size * 3 * lease) };
            case 'wall':
              // Minutes: NTP stepping a badly-off clock, a DST mistake, an operator.
              return {
                kind: 'wall',
                at,
                node: e.node,
                ms: Math.round((e.forward ? 1 : -1) * (60_000 + e.size * 540_000)),
              };
            case 'partition':
              return {
                kind: 'partition',
                at,
                node: e.node,
                ms: Math.round(10 + e.size * 2 * lease),
                mode: e.forward ? 'error' : 'blackhole',
              };
            case 'crash':
              return { kind: 'crash', at, node: e.node, restartAfterMs: Math.round(e.size * lease) };
            case 'stop':
              return {
                kind: 'stop',
                at,
                node: e.node,
                restartAfterMs: Math.round(e.size * lease),
                inFlight: e.forward,
              };
            default:
              return { kind: 'resign', at, node: e.node, inFlight: e.forward };
          }
        })
        .sort((a, b) => a.at - b.at);
      return {
        seed: raw.seed,
        nodes: raw.nodes,
        timings: raw.timings,
        rates: raw.rates.slice(0, raw.nodes).map((d) => 1 + d),
        // Late timers stay inside the margin the design reserves for step-down lag.
        timer: { earlyMs: raw.earlyMs, lateMs: raw.lateFraction * Math.min(50, 0.05 * lease) },
        net: {
          latencyMs: raw.latencyMs,
          error: raw.error,
          lostReply: raw.lostReply,
          duplicate: raw.duplicate,
          slow: raw.slow,
          slowMs: Math.round(raw.slowFactor * callTimeoutMs),
          deaf: raw.deaf,
          lostPush: raw.lostPush,
        },
        faultMs,
        events,
      };
    });
}

/** Uniform in value (fc.double is uniform over bit patterns: most draws would be ~1e-300). */
function uniform(min: number, max: number): fc.Arbitrary<number> {
  return fc.integer({ min: 0, max: 1_000_000 }).map((i) => min + ((max - min) * i) / 1_000_000);
}
