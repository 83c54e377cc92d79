import { Elector } from '../../lib/election/elector.js';
import { Checker, type CheckName, type Violation, type Watched } from './checker.js';
import { Rng } from './rng.js';
import type { Scenario } from './scenario.js';
import { foldsIn, SimLeaseServer, SimStoreClient } from './sim-store.js';
import { LivelockError, NodeClock, World } from './world.js';

export interface RunResult {
  violations: Violation[];
  elections: number;
  /** Worst step-down lag past the send-time deadline seen on a live term signal (ms). */
  maxLagMs: number;
  /** Terms whose signal outlived their store lease after a resume (within one slice), and the worst. */
  resumeOverlaps: number;
  maxResumeOverlapMs: number;
  /** Orphaned leases the orphan check excused, by reason. */
  orphanExcused: { frozen: number; releaseFailed: number };
  /** Healing → one leader, per run (ms of true time). */
  recoveryMs?: number;
  simulatedMs: number;
  events: number;
  /** The world's event-log digest (world.ts): equal for every run of one scenario. */
  digest: number;
}

const ELECTION = 'sim';
const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Runs one scenario against the real Elector: a fault phase, then healing (one leader within
 * lease + retry + slack, no orphan), then a wall-clock step of minutes forward and back on the
 * leader (at most one spurious step-down for the forward one, none for the back one), then a
 * graceful stop of everyone (nothing sent and no timer made after `stop()` resolved).
 */
export async function simulate(scenario: Scenario, checks: Set<CheckName>): Promise<RunResult> {
  if (process.env.SIM_TRACE) console.log(`scenario ${JSON.stringify(scenario)}`);
  const rng = new Rng(scenario.seed);
  const world = new World(rng);
  const server = new SimLeaseServer(world, ELECTION, scenario.net);
  const checker = new Checker(world, server, scenario, checks);
  const { leaseDurationMs: lease, retryIntervalMs: retry, renewDeadlineMs } = scenario.timings;
  const slots: Watched[] = [];
  const restarts: number[] = [];
  let healAt = scenario.faultMs;

  const result = (recoveryMs: number | undefined): RunResult => ({
    violations: checker.violations,
    elections: checker.stats.elections,
    maxLagMs: checker.stats.maxLagMs,
    resumeOverlaps: checker.stats.resumeOverlaps,
    maxResumeOverlapMs: checker.stats.maxResumeOverlapMs,
    orphanExcused: checker.stats.orphanExcused,
    recoveryMs,
    simulatedMs: world.now,
    events: world.processed,
    digest: world.digest,
  });

  // The elector's poll jitter uses Math.random: make it part of the seed.
  const realRandom = Math.random;
  Math.random = () => rng.next();
  try {
    const spawn = (index: number, previous?: NodeClock): Watched => {
      restarts[index] = (restarts[index] ?? -1) + 1;
      const identity = restarts[index] === 0 ? `n${index}` : `n${index}.${restarts[index]}`;
      const clock = new NodeClock(
        identity,
        world,
        scenario.rates[index],
        scenario.timer,
        previous ? previous.now() : rng.between(0, 1e6),
        previous ? previous.wallNow() - world.now : 1.7e12 + rng.between(-5_000, 5_000),
      );
      // Half the runs on a store that folds renewals (renewWith), half on the separate calls (foldsIn).
      const client = new SimStoreClient(world, server, identity, clock, false, foldsIn(scenario.seed));
      const elector = new Elector({
        store: client,
        election: ELECTION,
        identity,
        clock,
        logger: silent,
        ...scenario.timings,
      });
      const w: Watched = { name: `n${index}`, identity, elector, clock, client, revokes: [] };
      checker.watch(w);
      slots[index] = w;
      world.schedule(
        world.now + rng.next() * retry,
        () => {
          w.started = true;
          if (!w.stopRequested) void elector.start().catch((error) => checker.fail('model', `start(): ${error}`));
        },
        identity,
      );
      return w;
    };

    const stop = (w: Watched): Promise<void> => {
      w.stopRequested = true;
      w.stopRequestedAt = world.now;
      return w.elector.stop().then(() => {
        w.stopped = true;
        w.client.stoppedAt = world.now;
        if (w.clock.pendingTimers > 0)
          checker.fail('stop', `${w.identity} stop() resolved with ${w.clock.pendingTimers} timer(s) pending`);
        w.clock.onSetTimeout = () => checker.fail('stop', `${w.identity} set a timer after stop() resolved`);
      });
    };

    for (let i = 0; i < scenario.nodes; i++) spawn(i);

    const clocksApart = (w: Watched) =>
      !w.clock.isSuspended &&
      world.now - (w.suspendEndAt ?? Number.NEGATIVE_INFINITY) > 2 * lease &&
      world.now - (w.wallBackAt ?? Number.NEGATIVE_INFINITY) > 2 * lease;

    const act = (w: Watched, event: Extract<Scenario['events'][number], { kind: 'resign' | 'stop' }>) => {
      if (process.env.SIM_TRACE) console.log(`${world.now.toFixed(2)} ${w.identity} act ${JSON.stringify(event)}`);
      if (!server.faultsOn || !w.clock.running || !w.started || w.stopRequested) return;
      if (event.kind === 'resign') {
        w.resignedAt = w.clock.now();
        void w.elector.resign();
        return;
      }
      const previous = w.clock;
      void stop(w).then(() => {
        world.schedule(world.now + event.restartAfterMs, () => void spawn(slots.indexOf(w), previous));
      });
      healAt = Math.max(healAt, world.now + 2 * renewDeadlineMs + event.restartAfterMs);
    };

    // Probes: a guard asking isLeader() now and then on every node.
    const probeEvery = Math.max(5, retry / 3);
    const scheduleProbe = (index: number) =>
      world.schedule(world.now + rng.between(0.2, 1.8) * probeEvery, () => {
        const w = slots[index];
        if (!w.stopRequested) checker.probe(w);
        scheduleProbe(index);
      });
    for (let i = 0; i < scenario.nodes; i++) scheduleProbe(i);

    server.faultsOn = true;
    for (const event of scenario.events) {
      world.schedule(event.at, () => {
        const w =
          event.node >= 0
            ? slots[event.node]
            : (slots.find((s) => !s.stopRequested && s.signal && !s.signal.aborted) ?? slots[0]);
        if (w.stopRequested) return;
        switch (event.kind) {
          case 'pause':
          case 'suspend': {
            if (!w.clock.running) return;
            if (event.kind === 'suspend' && !clocksApart(w)) return;
            if (event.kind === 'pause') w.clock.paused = true;
            else w.clock.suspend();
            const frozen = { node: w.identity, from: world.now, to: undefined as number | undefined };
            checker.frozen.push(frozen);
            healAt = Math.max(healAt, world.now + event.ms);
            world.schedule(world.now + event.ms, () => {
              if (event.kind === 'pause') w.clock.unpause();
              else {
                w.clock.resume();
                w.suspendEndAt = world.now;
              }
              frozen.to = world.now;
              // No read here: a guard call on waking would step the node down and hide how long its
              // term signal stays live after a resume (the checker bounds that at every instant).
            });
            return;
          }
          case 'wall':
            // One clock lies at a time: a step back during or near a suspend fools both, and
            // nothing can then bound the term (stated in the fault model).
            if (event.ms < 0 && !clocksApart(w)) return;
            if (event.ms < 0) w.wallBackAt = world.now;
            w.clock.stepWall(event.ms);
            return;
          case 'crash': {
            // kill -9: no release, no answer handled, no timer ever again; its lease expires by
            // itself. The machine (its clocks) lives on for the process started in its place.
            if (!w.started) return;
            w.stopRequested = true;
            w.crashed = true;
            w.clock.kill();
            server.forget(w.identity);
            checker.frozen.push({ node: w.identity, from: world.now });
            const previous = w.clock;
            world.schedule(world.now + event.restartAfterMs, () => void spawn(slots.indexOf(w), previous));
            healAt = Math.max(healAt, world.now + event.restartAfterMs);
            return;
          }
          case 'partition':
            server.partitioned.set(w.identity, event.mode);
            healAt = Math.max(healAt, world.now + event.ms);
            world.schedule(world.now + event.ms, () => void server.partitioned.delete(w.identity));
            return;
          case 'resign':
          case 'stop':
            if (!event.inFlight) return act(w, event);
            {
              // Act once the server granted an acquire (to this node, or to whoever wins next), while
              // the answer may still be on its way.
              const armed = event.node >= 0 ? [w] : slots.filter((s) => !s.stopRequested);
              for (const target of armed) {
                target.client.onAcquireGranted = () => {
                  for (const other of armed) other.client.onAcquireGranted = undefined;
                  world.schedule(world.now + rng.next() * scenario.net.latencyMs, () => act(target, event));
                };
              }
            }
            return;
        }
      });
    }
    const check = () => checker.instant();
    await world.runUntil(scenario.faultMs, check);
    server.faultsOn = false;
    for (const w of slots) w.client.onAcquireGranted = undefined;
    // Everything heals: pauses and suspends end on their own schedule, stopped nodes restart, and
    // requests slowed before the end of the faults land (and answer) up to two slow trips later.
    const lastSlow = server.sent.filter((c) => c.fault === 'slow').at(-1);
    if (lastSlow) healAt = Math.max(healAt, lastSlow.at + 2 * scenario.net.slowMs);
    await world.runUntil(healAt, check);

    // Healed: one leader within lease (+1.1 % drift) + retry (+15 % jitter) + slack for round trips and
    // late timers. No renew interval: either someone leads and keeps renewing, or the lease expires at
    // most a lease after its last renewal reached the store, and the next follower poll takes it.
    const slack = 4 * scenario.net.latencyMs + 3 * scenario.timer.lateMs + 20;
    const liveBy = world.now + lease / (1 - 0.011) + retry * 1.15 + slack;
    const healedAt = world.now;
    let recoveryMs: number | undefined;
    const leaderNow = () => {
      const slot = server.slot();
      const leaders = slots.filter((w) => !w.stopRequested && w.signal && !w.signal.aborted);
      return leaders.length === 1 && slot.held && slot.holder === leaders[0].identity ? leaders[0] : undefined;
    };
    await world.runUntil(liveBy, () => {
      check();
      if (recoveryMs === undefined && leaderNow()) recoveryMs = world.now - healedAt;
    });
    const leader = leaderNow();
    if (!leader) {
      const slot = server.slot();
      checker.fail(
        'liveness',
        `no single leader ${(liveBy - healedAt).toFixed(0)} ms after healing (store: ${slot.held ? `${slot.holder} term ${slot.term}` : 'free'})`,
      );
    }

    // Wall clock of the leader steps minutes forward, later minutes back.
    if (leader) {
      for (const step of [+1, -1]) {
        const before = leader.revokes.length;
        leader.clock.stepWall(step * rng.between(60_000, 600_000));
        await world.runUntil(world.now + 2 * lease, check);
        const spurious = leader.revokes.length - before;
        if (spurious > (step > 0 ? 1 : 0)) {
          checker.fail(
            'jump',
            `${leader.identity} stepped down ${spurious} time(s) after a wall-clock step ${step > 0 ? 'forward' : 'back'}`,
          );
        }
        const liveAgain = world.now + lease + retry * 1.15 + slack;
        await world.runUntil(liveAgain, check);
        if (!leaderNow())
          checker.fail('liveness', `no single leader after a wall-clock step ${step > 0 ? 'forward' : 'back'}`);
      }
    }

    // Graceful stop of everyone.
    const stops = slots.filter((w) => !w.stopRequested).map(stop);
    await world.runUntil(world.now + 2 * renewDeadlineMs, check);
    for (const w of slots)
      if (!w.stopped && !w.crashed)
        checker.fail('stop', `${w.identity} stop() still pending after ${2 * renewDeadlineMs} ms`);
    await Promise.race([Promise.all(stops), Promise.resolve()]);
    await world.runUntil(world.now + lease, check);
    for (const w of checker.watched) {
      for (const line of w.client.afterStop) checker.fail('stop', `${w.identity}: ${line}`);
    }
    for (const error of server.modelErrors) checker.fail('model', error);

    return result(recoveryMs);
  } catch (error) {
    // A livelock (events without end at one instant) is a finding, not a crash of the campaign.
    if (!(error instanceof LivelockError)) throw error;
    checker.fail('livelock', error.message);
    return result(undefined);
  } finally {
    Math.random = realRandom;
  }
}
