import fc from 'fast-check';
import type { NetworkFaults } from './sim-store.js';
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

export type FaultEvent =
  | { kind: 'pause' | 'suspend'; at: number; node: number; ms: number }
  | { kind: 'wall'; at: number; node: number; ms: number }
  | { kind: 'stop'; at: number; node: number; restartAfterMs: number }
  | { kind: 'resign'; at: number; node: number };

/** The stated clock-rate bound: 1 %, a hundred times what a quartz oscillator drifts. */
export const MAX_DRIFT = 0.01;

export const FAULT_KINDS = [
  'latency',
  'errors',
  'lost',
  'duplicate',
  'slow',
  'push',
  'early',
  'late',
  'drift',
  'pause',
  'suspend',
  'wall',
  'stop',
  'resign',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** `SIM_FAULTS=errors,lost` keeps only those faults; default all. */
export function enabledFaults(spec = process.env.SIM_FAULTS): Set<FaultKind> {
  if (!spec || spec === 'all') return new Set(FAULT_KINDS);
  return new Set(spec.split(',').map((s) => s.trim()) as FaultKind[]);
}

export function scenarioArbitrary(faults = enabledFaults()): fc.Arbitrary<Scenario> {
  const on = (kind: FaultKind, value: fc.Arbitrary<number>) => (faults.has(kind) ? value : fc.constant(0));
  const timings = fc
    .record({
      leaseDurationMs: fc.constantFrom(1_000, 2_000, 3_000, 15_000),
      margin: fc.double({ min: 0.25, max: 0.45, noNaN: true }),
      renewRatio: fc.double({ min: 2.5, max: 6, noNaN: true }),
      retryRatio: fc.double({ min: 0.1, max: 0.5, noNaN: true }),
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
      rates: fc.array(on('drift', fc.double({ min: -MAX_DRIFT, max: MAX_DRIFT, noNaN: true })), {
        minLength: 5,
        maxLength: 5,
      }),
      earlyMs: on('early', fc.double({ min: 0, max: 1.5, noNaN: true })),
      lateFraction: on('late', fc.double({ min: 0, max: 1, noNaN: true })),
      latencyMs: on('latency', fc.integer({ min: 0, max: 30 })),
      error: on('errors', fc.double({ min: 0, max: 0.3, noNaN: true })),
      lostReply: on('lost', fc.double({ min: 0, max: 0.2, noNaN: true })),
      duplicate: on('duplicate', fc.double({ min: 0, max: 0.1, noNaN: true })),
      slow: on('slow', fc.double({ min: 0, max: 0.1, noNaN: true })),
      slowFactor: fc.double({ min: 0.5, max: 2, noNaN: true }),
      lostPush: on('push', fc.double({ min: 0, max: 0.5, noNaN: true })),
      faultLeases: fc.double({ min: 6, max: 20, noNaN: true }),
      events: fc.array(
        fc.record({
          kind: fc.constantFrom('pause', 'suspend', 'wall', 'stop', 'resign'),
          at: fc.double({ min: 0, max: 1, noNaN: true }),
          node: fc.integer({ min: 0, max: 4 }),
          size: fc.double({ min: 0, max: 1, noNaN: true }),
          forward: fc.boolean(),
        }),
        { maxLength: 8 },
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
            case 'stop':
              return { kind: 'stop', at, node: e.node, restartAfterMs: Math.round(e.size * lease) };
            default:
              return { kind: 'resign', at, node: e.node };
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
          lostPush: raw.lostPush,
        },
        faultMs,
        events,
      };
    });
}
