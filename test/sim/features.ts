import { type CronMetadata, CronSchedule } from '../../lib/leadership/cron-schedule.js';
import { ElectionRegistry } from '../../lib/leadership/election.registry.js';
import type { ElectionRuntime } from '../../lib/leadership/election-runtime.js';
import { LeaderOnlyRunner, type LeaderOnlySite, leaderOnlySite } from '../../lib/leadership/leader-only.runner.js';
import { type LeaderOnlyTick, OncePerTickRunner } from '../../lib/leadership/once-per-tick.runner.js';
import { tickJobName, tickKey } from '../../lib/leadership/tick.job.js';
import type { HandoverRequest } from '../../lib/stores/lease-store.js';
import type { CheckName, Violation } from './checker.js';
import { featureBounds } from './feature-bounds.js';
import type { FeatureEvent, FeatureScenario } from './feature-scenario.js';
import { JobWorld } from './job-control.js';
import { PriorityCheck, type PriorityReplica } from './priority-check.js';
import { SimReplica } from './replica.js';
import { Rng } from './rng.js';
import { foldsIn, SimLeaseServer, SimStoreClient } from './sim-store.js';
import type { RunResult } from './simulate.js';
import { spreadRequestOf } from './spread-race.js';
import { inNode, installNodeTimers, LivelockError, NodeClock, World } from './world.js';

interface Slot {
  index: number;
  replica: SimReplica;
  crashed?: boolean;
  stopRequested?: boolean;
}

const silent = { log: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };
const name = (e: number) => `e${e}`;
/** How often a replica's spread tick lands right after an operator's request (see spread-race.ts). */
const SPREAD_RACE = 0.5;

/**
 * The feature world (see feature-scenario.ts): a fault phase, a quiet phase in which the liveness
 * properties are held to their bounds (feature-bounds.ts), then a stop of every replica. Safety
 * (`probe`, `overlap`, `tick` twice) holds at every probe instant of every phase.
 */
export async function simulateFeatures(scenario: FeatureScenario, checks: Set<CheckName>): Promise<RunResult> {
  const rng = new Rng(scenario.seed);
  const world = new World(rng);
  const server = new SimLeaseServer(world, name(0), scenario.net);
  const violations: Violation[] = [];
  const reported = new Set<string>();
  const fail = (check: CheckName, message: string, key = `${check}:${message}`) => {
    if (!checks.has(check) || reported.has(key)) return;
    reported.add(key);
    violations.push({ check, at: Math.round(world.now * 1000) / 1000, message });
  };
  const bounds = featureBounds(scenario);
  const { timings } = scenario;
  const slots: Slot[] = [];
  const restarts: number[] = [];
  const quietStart = scenario.faultMs;
  const quietEnd = quietStart + scenario.quietMs;
  let elections = Array.from({ length: scenario.elections }, (_, e) => name(e));
  const crons: CronMetadata[] = scenario.jobs.map((job) => ({
    cronTime: job.periodS === 600 ? '0 */10 * * * *' : `*/${job.periodS} * * * * *`,
  }));
  /** One `@LeaderOnly({ once: 'per-tick' })` method per job, as the decorator makes it (its label may collide). */
  const ticks: LeaderOnlyTick[] = scenario.jobs.map((job, j) => ({
    label: job.label,
    missed: 'skip',
    cron: () => crons[j],
  }));
  const schedules = await Promise.all(
    scenario.jobs.map((job, j) => CronSchedule.load(job.label, crons[j] as CronMetadata)),
  );
  /** Each job's record key, as the ledger writes it. */
  const tickKeys = scenario.jobs.map((job, j) => tickKey(tickJobName(crons[j] as CronMetadata, job.label)));
  const ran = new Map<string, number>();
  /** Per runtime, its once-per-tick runner and the `@LeaderOnly` runner over it (as the app's binding has them). */
  const runners = new WeakMap<ElectionRuntime, { ticks: OncePerTickRunner; leaderOnly: LeaderOnlyRunner }>();
  /** Operators' requests as recorded, with the request each replaced in the store (if any). */
  const requests: Array<{ request: HandoverRequest; at: number; replaced?: HandoverRequest }> = [];
  /** Per election, the replica slot whose handover a `cut-drain` abandoned. */
  const cutNode = new Map<string, number>();
  /** Calm (no fault can strike): during warm-up and after the faults. */
  const calm = (at: number) => at < scenario.warmupMs || (at >= quietStart && at <= quietEnd);
  const settles: Array<{ what: string; at: number; settled?: number }> = [];
  const spreadRaces = { filed: 0, yielded: 0 };
  const priorities = scenario.priority?.priorities;
  const priorityOf = (identity: string) => priorities?.[Number(/^r(\d+)/.exec(identity)?.[1])] ?? 0;
  const priorityCheck = priorities && new PriorityCheck(scenario, server, fail, priorityOf);
  /** After the quiet phase, while the placement settles (priority runs only). */
  const settling = () => scenario.priority !== undefined && world.now > quietEnd;

  const live = (s: Slot | undefined): s is Slot =>
    s !== undefined && !s.crashed && !s.stopRequested && s.replica.started && s.replica.clock.running;

  const track = (what: string, stopping: Promise<void>) => {
    const entry: { what: string; at: number; settled?: number } = { what, at: world.now };
    settles.push(entry);
    world.schedule(world.now + bounds.stopMs, () => {
      if (entry.settled === undefined)
        fail('settle', `${what} still pending ${bounds.stopMs.toFixed(0)} ms after it was called`, `settle:${what}`);
    });
    return stopping.then(() => {
      entry.settled = world.now;
    });
  };

  const spawn = (index: number, previous?: NodeClock): void => {
    restarts[index] = (restarts[index] ?? -1) + 1;
    const identity = restarts[index] === 0 ? `r${index}` : `r${index}.${restarts[index]}`;
    const clock = new NodeClock(
      identity,
      world,
      scenario.rates[index] as number,
      { earlyMs: 0.5, lateMs: Math.min(20, 0.02 * timings.leaseDurationMs) },
      previous ? previous.now() : rng.between(0, 1e6),
      previous ? previous.wallNow() - world.now : 1.7e12 + (scenario.skewMs[index] as number),
    );
    // Half the runs on a store that folds renewals (renewWith), half on the separate calls (foldsIn).
    const client = new SimStoreClient(world, server, identity, clock, true, foldsIn(scenario.seed));
    const setupJobs = jobWorld && ((handle: ElectionRuntime) => jobWorld.setup(handle));
    const replica = new SimReplica(identity, clock, client, scenario, elections, priorityOf(identity), setupJobs);
    const slot: Slot = { index, replica };
    slots[index] = slot;
    world.schedule(
      world.now + rng.next() * timings.retryIntervalMs,
      () => {
        if (slot.stopRequested) return;
        void replica.start().catch((error) => fail('model', `${identity} start(): ${error}`));
        for (let j = 0; j < scenario.jobs.length; j++) armTick(slot, j);
      },
      identity,
    );
  };

  // ---- Once-per-tick jobs: each replica fires every job on its own (skewed, drifting) wall clock. ----
  const armTick = (slot: Slot, j: number, after = Number.NEGATIVE_INFINITY) => {
    const { clock } = slot.replica;
    const schedule = schedules[j] as CronSchedule;
    // Strictly after the tick just fired: a timer that fired a little early must not fire it again.
    const f = schedule.next(Math.max(clock.wallNow(), after));
    // As `cron` does: a timer runs on the monotonic clock, which drifts from the wall clock (up to
    // 1 %, 6 s of a 10 min period): one that fires before the wall-clock fire time waits again.
    const wait = () => {
      if (slot.stopRequested || slot.crashed) return;
      const left = f - clock.wallNow();
      if (left > 1) {
        clock.setTimeout(wait, left);
        return;
      }
      fireTick(slot, j, f);
      armTick(slot, j, f);
    };
    clock.setTimeout(wait, f - clock.wallNow());
  };
  /**
   * The once-per-tick runner of the election's runtime, its jobs registered as the explorer does at
   * startup (one `Provider<j>` each): a job whose key another job already holds is refused there, and
   * never runs (the app would not start). Calls go through the `@LeaderOnly` runner, as the
   * decorator's binding sends them: with job control, through its gate.
   */
  const refused = new WeakMap<ElectionRuntime, Set<number>>();
  const runnerOf = (handle: ElectionRuntime, election: number) => {
    const known = runners.get(handle);
    if (known) return known;
    const runner = new OncePerTickRunner(silent);
    const registry = new ElectionRegistry();
    registry.add(handle.election, handle);
    const leaderOnly = new LeaderOnlyRunner(registry, runner, () => new Error('not a route'), {
      debugEnabled: () => false,
      debug: () => undefined,
    });
    runners.set(handle, { ticks: runner, leaderOnly });
    const out = new Set<number>();
    scenario.jobs.forEach((job, j) => {
      if (job.election !== election) return;
      try {
        runner.register(handle, ticks[j] as LeaderOnlyTick, crons[j] as CronMetadata, `Provider${j}`, () => undefined);
      } catch {
        out.add(j);
      }
    });
    refused.set(handle, out);
    return { ticks: runner, leaderOnly };
  };
  /** A scheduled call of job `j` runs (the job's method, called with fireTick's arguments). */
  const scheduledRun = (j: number, args: unknown[]) => {
    const [slot, f, fired, handle] = args as [Slot, number, number, ElectionRuntime];
    const job = scenario.jobs[j] as FeatureScenario['jobs'][number];
    const key = `${j}:${f}`;
    if (process.env.SIM_TRACE_TICKS)
      console.log(`${world.now.toFixed(1)} ${slot.replica.identity} runs job ${j} tick ${f} term ${handle.term}`);
    // Policy: a run more than ¾ period late counts as the next tick. Its claim may add its store
    // calls (a read and a write, each within the call timeout) and retries within the tick's budget.
    const late = world.now - fired;
    if (late > bounds.tickLateMs(job.periodS * 1000))
      fail(
        'tick',
        `job ${j} (${job.label}) ran its tick ${new Date(f).toISOString()} ${late.toFixed(0)} ms after it fired (bound ${bounds.tickLateMs(job.periodS * 1000).toFixed(0)} ms: a stale run)`,
        `ticklate:${j}`,
      );
    const count = (ran.get(key) ?? 0) + 1;
    ran.set(key, count);
    if (count > 1) fail('tick', `job ${j} (${job.label}) ran its tick ${new Date(f).toISOString()} ${count} times`);
    jobWorld?.scheduledRun(j, slot.replica.identity, handle, fired);
  };
  const jobWorld = scenario.jobControl
    ? new JobWorld(
        scenario,
        world,
        server,
        bounds,
        { warmupMs: scenario.warmupMs, quietStart, quietEnd },
        fail,
        crons,
        scheduledRun,
        (identity) => slots.find((s) => live(s) && s.replica.identity === identity)?.replica,
      )
    : undefined;
  /** Each job's method, as its class carries it (one per job, shared by the replicas). */
  const methods =
    jobWorld?.methods ??
    scenario.jobs.map(
      (_, j) =>
        (...args: unknown[]) =>
          scheduledRun(j, args),
    );
  const sites = scenario.jobs.map((job, j) =>
    leaderOnlySite({
      label: job.label,
      election: name(job.election),
      isAsync: true,
      tick: ticks[j] as LeaderOnlyTick,
      isRoute: () => false,
    }),
  );
  const fireTick = (slot: Slot, j: number, f: number) => {
    const job = scenario.jobs[j] as FeatureScenario['jobs'][number];
    const handle = slot.replica.handles.get(name(job.election));
    if (process.env.SIM_TRACE_TICKS && handle)
      console.log(
        `${world.now.toFixed(1)} ${slot.replica.identity} fires job ${j} tick ${f}: ${handle.isLeader() ? `leads term ${handle.term}` : 'follows'}`,
      );
    if (!handle?.isLeader()) return;
    const runner = runnerOf(handle, job.election);
    if (refused.get(handle)?.has(j)) return;
    const term = handle.term;
    const key = `${j}:${f}`;
    const fired = world.now;
    // As the decorator's binding does: the `@LeaderOnly` runner decides, the tick goes through the ledger.
    const method = methods[j] as (...args: unknown[]) => unknown;
    Promise.resolve(
      runner.leaderOnly.invoke(sites[j] as LeaderOnlySite, method, undefined, [slot, f, fired, handle]),
    ).catch((error: unknown) => fail('model', `tick of job ${j}: ${error}`));
    // Policy: a tick may be lost only across a failover; a run > ¾ period late counts as the next tick.
    const due = world.now + 0.75 * job.periodS * 1000;
    world.schedule(due, () => {
      // Held to the policy from the recovery on: before, a record written by an answer lost in the
      // faults may stand for a run that never happened (at most once, not exactly once).
      // A claim from the faults may hold the job's queue for as long as a stale run may wait.
      const settled = quietStart + bounds.recoveryMs + bounds.tickLateMs(job.periodS * 1000);
      if (ran.has(key) || fired < settled || world.now > quietEnd) return;
      const still = inNode(slot.replica.identity, () => handle.isLeader() && handle.term === term);
      if (!still || !live(slot) || slot.replica.handles.get(name(job.election)) !== handle) return;
      // Recorded by an earlier term, which never ran it (its term ended before the record's answer
      // came, so it dropped the run): lost across a change of term, as at most once allows.
      const claimedBefore = server.stateWrites.some(
        (w) => w.election === name(job.election) && w.key === tickKeys[j] && w.value === f && w.term !== term,
      );
      if (claimedBefore) return;
      // A paused job's ticks are skipped (recorded, not run) until its resume is applied.
      const lost = jobWorld ? jobWorld.lostTick(j, fired) : { check: 'tick' as const, why: '' };
      if (lost)
        fail(
          lost.check,
          `job ${j} (${job.label}) lost its tick ${new Date(f).toISOString()} on a stable leader ${slot.replica.identity}${lost.why}`,
          lost.key,
        );
    });
  };

  // ---- Leader-only work: calls that take time (they hold drains), some stuck. ----
  const armWork = (index: number) =>
    world.schedule(world.now + rng.between(0.2, 1.8) * scenario.work.gapMs, () => {
      const slot = slots[index];
      armWork(index);
      if (!live(slot) || world.now > quietEnd) return;
      const election = elections[Math.floor(rng.next() * elections.length)] as string;
      const handle = slot.replica.handles.get(election);
      if (!handle) return;
      const ms = rng.chance(scenario.work.stuck) ? scenario.work.stuckMs : rng.next() * scenario.work.maxMs;
      inNode(slot.replica.identity, () =>
        handle.runIfLeader('Work.run', () => new Promise<void>((resolve) => setTimeout(resolve, ms))),
      );
    });

  // ---- Liveness and safety at probe instants. ----
  const notActing = new Map<string, { since: number; term?: number }>();
  let lastPlaced: PriorityReplica[] = [];
  const stepping = new Map<string, number | undefined>();
  const leaderless = new Map<string, number>();
  const probe = () => {
    const acting = new Map<string, string[]>();
    const placed: PriorityReplica[] = [];
    for (const slot of slots) {
      if (!live(slot)) continue;
      const { identity } = slot.replica;
      const running: PriorityReplica = { identity, priority: slot.replica.priority, healthy: new Map() };
      placed.push(running);
      for (const [election, handle] of slot.replica.handles) {
        const key = `${identity}:${election}`;
        inNode(identity, () => {
          const isActing = handle.isLeader();
          const leads = handle.holdsLease();
          const store = server.slot(election);
          if (isActing) {
            acting.set(election, [...(acting.get(election) ?? []), identity]);
            if (!store.held || store.holder !== identity)
              fail(
                'probe',
                `${identity} acts as leader of ${election} while the store says ${store.held ? store.holder : 'free'}`,
                `probe:${key}:${handle.term}`,
              );
          }
          if (handle.isSteppingDown) {
            if (!stepping.has(key)) stepping.set(key, handle.term);
          } else stepping.delete(key);
          const healthy = handle.health().healthy;
          running.healthy.set(election, healthy);
          if (!leads || isActing || !healthy) {
            notActing.delete(key);
            return;
          }
          const term = handle.term;
          const since = notActing.get(key)?.term === term ? (notActing.get(key)?.since as number) : world.now;
          notActing.set(key, { since, term });
          // Draining for a handover honoured in this very term may take the drain; anything else one renewal.
          const allowed = stepping.get(key) === term ? bounds.drainMs : bounds.actOrReportMs;
          if (world.now - since > allowed)
            fail(
              'health',
              `${identity} holds ${election} term ${term} without acting (state ${handle.status().state}) and reports healthy for ${(world.now - since).toFixed(0)} ms (bound ${allowed.toFixed(0)} ms)`,
              `health:${key}:${term}`,
            );
        });
      }
    }
    for (const [election, who] of acting)
      if (who.length > 1)
        fail('overlap', `${who.join(' and ')} both act as leader of ${election}`, `overlap:${election}`);
    priorityCheck?.checkMoves();
    if (settling()) priorityCheck?.probe(elections, placed, world.now);
    lastPlaced = placed;
    if (world.now < quietStart || world.now > quietEnd) return;
    const liveIds = new Set(slots.filter(live).map((s) => s.replica.identity));
    for (const election of elections) {
      const runners = slots.filter((s) => live(s) && s.replica.handles.has(election));
      const store = server.slot(election);
      // Excused: the lease (or its reservation) belongs to a replica that is gone, and expires by itself.
      const blocked =
        (store.held && !liveIds.has(store.holder as string)) ||
        (store.reservedFor !== undefined && !liveIds.has(store.reservedFor));
      if (runners.length === 0 || (acting.get(election)?.length ?? 0) > 0 || blocked) {
        leaderless.delete(election);
        continue;
      }
      const since = leaderless.get(election) ?? world.now;
      leaderless.set(election, since);
      const from = Math.max(since, quietStart + bounds.recoveryMs);
      if (world.now - from > bounds.leaderMs)
        fail(
          'acting',
          `${election} has no acting leader for ${(world.now - since).toFixed(0)} ms (bound ${bounds.leaderMs.toFixed(0)} ms after recovery; store: ${store.held ? `${store.holder} term ${store.term}` : 'free'})`,
          `acting:${election}:${store.term}`,
        );
    }
    for (const entry of requests) checkRequest(entry, liveIds);
    jobWorld?.probe(elections, liveIds);
  };

  /** Honoured (leadership moved; to `to` when named), replaced by another operator, or a violation. */
  const checkRequest = (
    entry: { request: HandoverRequest; at: number; replaced?: HandoverRequest; done?: boolean },
    liveIds: Set<string>,
  ) => {
    const { request } = entry;
    if (entry.done || !elections.includes(request.election)) return;
    const deadline = entry.at + bounds.requestMs;
    if (!calm(entry.at) || !calm(Math.min(deadline, world.now))) {
      entry.done = true;
      return;
    }
    const moved = server.terms.find((t) => t.election === request.election && t.term > request.term);
    // Written for a term that had already ended (the requester's view of the holder was a round trip
    // old): no holder will honour it, nor need to.
    if (moved && moved.at <= (server.requestWrittenAt.get(request.id) ?? Number.NEGATIVE_INFINITY)) {
      entry.done = true;
      return;
    }
    if (moved) {
      entry.done = true;
      // Another operator's request for the same term may have been the one honoured: visible.
      // So may a spread request it replaced, if the leader was honouring it already: it had read it
      // before this request was written (the race is visible: leadership moved elsewhere, the request
      // is stale). One it never read cannot have been honoured.
      const { replaced } = entry;
      const rival =
        requests.some(
          (r) =>
            r !== entry &&
            r.request.election === request.election &&
            r.request.term === request.term &&
            (r.request.to === undefined || r.request.to === moved.holder),
        ) ||
        (replaced?.term === request.term &&
          replaced.to === moved.holder &&
          (server.requestReadAt.get(replaced.id) ?? Number.POSITIVE_INFINITY) <
            (server.requestWrittenAt.get(request.id) ?? Number.NEGATIVE_INFINITY));
      if (request.to !== undefined && moved.holder !== request.to && liveIds.has(request.to) && !rival)
        fail(
          'request',
          `${request.reason} request ${request.id} for ${request.election} to ${request.to}: ${moved.holder} leads term ${moved.term} instead`,
        );
      return;
    }
    const pending = server.slot(request.election).request;
    if (pending && pending.id !== request.id && pending.reason !== 'spread') {
      entry.done = true;
      return;
    }
    if (world.now - entry.at <= bounds.requestMs) return;
    entry.done = true;
    fail(
      'request',
      `${request.reason} request ${request.id} for ${request.election}${request.to ? ` to ${request.to}` : ''} (term ${request.term}) neither honoured nor visibly replaced after ${bounds.requestMs.toFixed(0)} ms; the store holds ${pending ? `${pending.reason} request ${pending.id}` : 'no request'}`,
    );
  };

  /** A replica leading fewer elections files the spread request its balancer would, for the operator's election. */
  const spreadRace = (operators: HandoverRequest) => {
    const filers = slots.flatMap((s) => {
      if (!live(s)) return [];
      const found = inNode(s.replica.identity, () => spreadRequestOf(s.replica, operators.election));
      return found ? [{ slot: s, ...found }] : [];
    });
    const filer = filers[Math.floor(rng.next() * filers.length)];
    if (!filer) return;
    spreadRaces.filed += 1;
    inNode(filer.slot.replica.identity, () =>
      filer.handle.requestSpreadHandover(filer.options).then(
        (request) => {
          if (!request) spreadRaces.yielded += 1;
        },
        () => undefined,
      ),
    );
  };

  const realRandom = Math.random;
  Math.random = () => rng.next();
  const restore = installNodeTimers(world, (what) => fail('model', `${what} called outside any replica`));
  try {
    for (let i = 0; i < scenario.nodes; i++) {
      spawn(i);
      armWork(i);
    }
    const probeEvery = Math.max(5, Math.min(timings.renewIntervalMs / 4, timings.retryIntervalMs / 3));
    const scheduleProbe = () =>
      world.schedule(world.now + rng.between(0.5, 1.5) * probeEvery, () => {
        probe();
        scheduleProbe();
      });
    scheduleProbe();
    world.schedule(scenario.warmupMs, () => {
      server.faultsOn = true;
    });
    for (const event of scenario.events) world.schedule(event.at, () => act(event));
    for (const command of scenario.jobControl?.commands ?? []) {
      world.schedule(command.at, () => {
        const slot = slots[command.node];
        if (live(slot)) jobWorld?.issue(command, slot.replica);
      });
    }
    await world.runUntil(scenario.faultMs, () => undefined);
    server.faultsOn = false;
    server.partitioned.clear();
    await world.runUntil(quietEnd, () => undefined);
    if (scenario.priority) {
      // Calm until the placement has stayed settled for `holdMs` (nothing may move meanwhile), at
      // most `settleMs`: then it must be settled.
      const { settleMs, holdMs } = scenario.priority;
      while (world.now < quietEnd + settleMs && (priorityCheck?.settledFor(world.now) ?? 0) < holdMs)
        await world.runUntil(Math.min(quietEnd + settleMs, world.now + timings.leaseDurationMs / 2), () => undefined);
      probe();
      priorityCheck?.final(elections, lastPlaced);
      if (process.env.SIM_TRACE_PRIORITY)
        console.log(
          JSON.stringify({
            lease: timings.leaseDurationMs,
            settledAfterMs: priorityCheck && (priorityCheck.settledAt ?? Number.NaN) - quietEnd,
            calmMs: world.now - quietEnd,
            settlings: priorityCheck?.settlings,
            priorityMoves: server.terms.filter((t) => t.by?.reason === 'priority').length,
            priorityRequests: server.requestsByReason.get('priority'),
          }),
        );
    }
    for (const slot of slots) {
      if (!live(slot)) continue;
      slot.stopRequested = true;
      void track(
        `${slot.replica.identity} stop()`,
        inNode(slot.replica.identity, () => slot.replica.stop()),
      );
    }
    await world.runUntil(world.now + bounds.stopMs + timings.leaseDurationMs, () => undefined);
    for (const error of server.modelErrors) fail('model', error);
    if (process.env.SIM_TRACE_FEATURES)
      console.log(
        JSON.stringify({
          terms: server.terms.length,
          ticks: ran.size,
          requests: requests.length,
          spreadRequests: server.requestsByReason.get('spread'),
          spreadRaces,
          ...(jobWorld ? { jobs: jobWorld.figures() } : {}),
          settles: settles.length,
          sent: server.sent.length,
        }),
      );
  } catch (error) {
    if (!(error instanceof LivelockError)) throw error;
    fail('livelock', error.message);
  } finally {
    restore();
    Math.random = realRandom;
  }
  return {
    violations,
    elections: server.terms.length,
    maxLagMs: 0,
    resumeOverlaps: 0,
    maxResumeOverlapMs: 0,
    orphanExcused: { frozen: 0, releaseFailed: 0 },
    simulatedMs: world.now,
    events: world.processed,
    digest: world.digest,
  };

  /** The elections held by the replica that holds the most, as the store has them. */
  function busiest(): string[] {
    const byHolder = new Map<string, string[]>();
    for (const election of elections) {
      const store = server.slot(election);
      if (store.held) byHolder.set(store.holder as string, [...(byHolder.get(store.holder as string) ?? []), election]);
    }
    return [...byHolder.values()].sort((a, b) => b.length - a.length)[0] ?? [];
  }

  function act(event: FeatureEvent): void {
    const slot = 'node' in event ? slots[event.node] : undefined;
    switch (event.kind) {
      case 'partition':
        if (!live(slot)) return;
        server.partitioned.set(slot.replica.identity, event.mode);
        world.schedule(world.now + event.ms, () => void server.partitioned.delete(slot.replica.identity));
        return;
      case 'pause':
        if (!live(slot)) return;
        slot.replica.clock.paused = true;
        world.schedule(world.now + event.ms, () => slot.replica.clock.unpause());
        return;
      case 'crash':
        if (!live(slot)) return;
        slot.crashed = true;
        slot.replica.clock.kill();
        server.forget(slot.replica.identity);
        world.schedule(world.now + event.restartAfterMs, () => spawn(slot.index, slot.replica.clock));
        return;
      case 'stop':
      case 'stop-blackholed': {
        if (!live(slot)) return;
        const { identity } = slot.replica;
        if (event.kind === 'stop-blackholed') server.partitioned.set(identity, 'blackhole');
        slot.stopRequested = true;
        void track(
          `${identity} stop()`,
          inNode(identity, () => slot.replica.stop()),
        ).then(() => {
          server.partitioned.delete(identity);
          world.schedule(world.now + event.restartAfterMs, () => spawn(slot.index, slot.replica.clock));
        });
        return;
      }
      case 'cut-drain': {
        const election = name(event.election);
        const leader = slots.find(
          (s) => live(s) && inNode(s.replica.identity, () => s.replica.handles.get(election)?.isLeader()),
        );
        if (!leader) return;
        const { identity } = leader.replica;
        cutNode.set(election, leader.index);
        const handle = leader.replica.handles.get(election) as ElectionRuntime;
        inNode(identity, () => {
          handle.runIfLeader('Long.run', () => new Promise<void>((r) => setTimeout(r, 3 * timings.renewDeadlineMs)));
          void handle
            .requestHandover({})
            .then(() => {
              server.partitioned.set(identity, 'error');
              world.schedule(world.now + event.ms, () => void server.partitioned.delete(identity));
            })
            .catch(() => undefined);
        });
        return;
      }
      case 'operator-back': {
        const back = slots[cutNode.get(name(event.election)) ?? -1];
        const from = slots.find(live);
        if (!from || !live(back)) return;
        act({ kind: 'operator', at: event.at, node: from.index, election: event.election, to: back.index });
        return;
      }
      case 'operator': {
        if (!live(slot)) return;
        if (event.election < 0) {
          // Moving load off the busiest replica: all its elections but one, each to another replica.
          const others = slots.filter((s) => live(s));
          for (const election of busiest().slice(1)) {
            const to = others[Math.floor(rng.next() * others.length)] as Slot;
            act({ ...event, election: Number(election.slice(1)), to: to.index });
          }
          return;
        }
        const election = name(event.election);
        const handle = slot.replica.handles.get(election);
        const target = event.to === undefined ? undefined : slots[event.to];
        if (!handle || (event.to !== undefined && !live(target))) return;
        const options = target ? { to: target.replica.identity } : {};
        inNode(slot.replica.identity, () =>
          handle.requestHandover(options).then(
            (request) => {
              if (!request) return;
              requests.push({ request, at: world.now, replaced: server.replaced.get(request.id) });
              // Spread runs on every replica: its tick may come before the holder reads this request.
              if (rng.chance(SPREAD_RACE))
                world.schedule(world.now + (rng.next() * timings.renewIntervalMs) / 2, () => spreadRace(request));
            },
            () => undefined,
          ),
        );
        return;
      }
      case 'add': {
        const election = name(event.election);
        if (!elections.includes(election)) elections = [...elections, election];
        for (const s of slots.filter(live))
          world.schedule(
            world.now + rng.next() * timings.retryIntervalMs,
            () => {
              if (live(s))
                void s.replica.addElection(election).catch((error) => fail('model', `addElection: ${error}`));
            },
            s.replica.identity,
          );
        return;
      }
      case 'remove': {
        const election = name(event.election);
        elections = elections.filter((e) => e !== election);
        for (const s of slots.filter(live))
          world.schedule(
            world.now + rng.next() * timings.retryIntervalMs,
            () => {
              if (live(s) && s.replica.handles.has(election))
                void track(`${s.replica.identity} removeElection(${election})`, s.replica.removeElection(election));
            },
            s.replica.identity,
          );
        return;
      }
    }
  }
}
