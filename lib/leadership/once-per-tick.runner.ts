import { filter, type Subscription } from 'rxjs';
import { systemClock } from '../shared/clock.js';
import { errorMessage } from '../shared/errors.js';
import type { CronMetadata } from './cron-schedule.js';
import type { ElectionRuntime } from './election-runtime.js';
import type { JobDefinition } from './jobs/job.definition.js';
import { leadershipMessages as messages } from './leadership.messages.js';
import { type TickJob, tickJobName } from './tick.job.js';
import { TickLedger, type TickLedgerLogger } from './tick.ledger.js';

/** A `@LeaderOnly({ once: 'per-tick' })` method: its job's identity and schedule, one object per method. */
export interface LeaderOnlyTick {
  label: string;
  missed: 'skip' | 'catch-up';
  /** With `missed: 'catch-up'`: the job's catch-up window (unset: the ledger's default, 24 h). */
  catchUpWindowMs?: number;
  /** Read at the call: @Cron may be applied after @LeaderOnly, onto its wrapper. */
  cron: () => CronMetadata | undefined;
}

/** A `missed: 'catch-up'` job: what a new leader runs for the most recent missed tick. */
interface CatchUpJob {
  runtime: ElectionRuntime;
  job: TickJob;
  run: () => unknown;
}

/**
 * Runs once-per-tick calls of one application: each election's ledger (leader state of that
 * election), the job of each method, and the catch-up a newly elected leader runs.
 */
export class OncePerTickRunner {
  /** Per election: its once-per-tick records. */
  private readonly ledgers = new Map<ElectionRuntime, TickLedger>();
  /**
   * Jobs by the decorated method's tick object (one per method, whatever its instances), never by
   * label: two classes of one name are two jobs, and two jobs of one key fail startup.
   */
  private readonly jobs = new Map<LeaderOnlyTick, TickJob>();
  private readonly catchUps: CatchUpJob[] = [];
  private readonly subscriptions: Subscription[] = [];

  constructor(private readonly logger: TickLedgerLogger & { error(message: string): void }) {}

  /**
   * Startup: registers the job of `tick` in its election's ledger (a second job of the same key
   * fails, naming both owners), and its catch-up run. Another instance of the same class: the same
   * job, registered once.
   */
  register(runtime: ElectionRuntime, tick: LeaderOnlyTick, cron: CronMetadata, owner: string, catchUp: () => unknown) {
    if (this.jobs.has(tick)) return;
    const job: TickJob = {
      job: tickJobName(cron, tick.label),
      label: tick.label,
      cron,
      catchUpWindowMs: tick.catchUpWindowMs,
    };
    this.ledger(runtime).register(job, owner);
    this.jobs.set(tick, job);
    if (tick.missed === 'catch-up') this.catchUps.push({ runtime, job, run: catchUp });
  }

  /**
   * A leader's call: recorded in the ledger, then run; tracked like any leader-only call, and, for a
   * scheduled job, in its run history (with the tick). Answers with a promise.
   */
  run(
    runtime: ElectionRuntime,
    tick: LeaderOnlyTick,
    method: (...args: unknown[]) => unknown,
    self: unknown,
    args: unknown[],
    job?: JobDefinition,
  ): Promise<unknown> {
    const { work } = runtime;
    const invoke = () => Reflect.apply(method, self, args);
    const call = (fireTime: number) =>
      work.runTick(
        tick.label,
        fireTime,
        job ? () => runtime.jobs.runs.track(job, { trigger: 'schedule', tick: fireTime }, invoke) : invoke,
      );
    return work.run(tick.label, async () => this.ledger(runtime).runTick(this.job(runtime, tick), call), false);
  }

  /**
   * A tick of a paused job: recorded in the ledger without running, so the first run after the
   * resume counts no lost ticks and a new leader's catch-up does not run what the pause skipped.
   */
  async skipPaused(runtime: ElectionRuntime, tick: LeaderOnlyTick): Promise<undefined> {
    // The ledger logs a record it could not write; a schedule it could not load fails every run anyway.
    await this.ledger(runtime)
      .runTick(this.job(runtime, tick), () => undefined)
      .catch(() => undefined);
    return undefined;
  }

  /** From bootstrap on, every newly elected leader runs its catch-up jobs. */
  start(): void {
    for (const runtime of new Set(this.catchUps.map((catchUp) => catchUp.runtime))) {
      this.subscriptions.push(
        runtime.events$.pipe(filter((event) => event.type === 'elected')).subscribe(() => this.catchUp(runtime)),
      );
      // Elected during module init, before this subscription: that election counts too.
      if (runtime.isLeader()) this.catchUp(runtime);
    }
  }

  stop(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }

  /** The once-per-tick records of `runtime`'s election, made at first use. */
  private ledger(runtime: ElectionRuntime): TickLedger {
    let ledger = this.ledgers.get(runtime);
    if (!ledger) {
      const { work, clock } = runtime;
      // Fire times on the module's wall clock, retries on its timers: a FakeClock moves ticks too.
      // Without one, the ledger's own plain (ref'd) timers, not systemClock's unref'd ones.
      const timers = clock === systemClock ? undefined : clock;
      const events = { ticksLost: (job: TickJob, count: number) => work.countTicksLost(job.label, count) };
      ledger = new TickLedger(runtime, this.logger, () => clock.wallNow(), events, timers);
      this.ledgers.set(runtime, ledger);
    }
    return ledger;
  }

  /** A method bound without its startup check gets its job at its first run, registered then (a clash fails that run). */
  private job(runtime: ElectionRuntime, tick: LeaderOnlyTick): TickJob {
    let job = this.jobs.get(tick);
    if (!job) {
      const cron = tick.cron();
      if (!cron) throw new Error(messages.perTickWithoutCron(tick.label));
      job = { job: tickJobName(cron, tick.label), label: tick.label, cron, catchUpWindowMs: tick.catchUpWindowMs };
      this.ledger(runtime).register(job, tick.label);
      this.jobs.set(tick, job);
    }
    return job;
  }

  /**
   * A new term: each catch-up job of the election runs its most recent missed tick, tracked like any
   * leader-only call — once job control has read the board in this term, and not while paused.
   */
  private catchUp(elected: ElectionRuntime): void {
    for (const { runtime, job, run } of this.catchUps) {
      if (runtime !== elected) continue;
      const started = this.whenNotPaused(runtime, job, run).then((recorded) =>
        recorded ? runtime.runIfLeader(job.label, () => this.ledger(runtime).catchUp(job, recorded)) : undefined,
      );
      started.catch((error: unknown) => this.logger.error(messages.tickCatchUpFailed(job.job, errorMessage(error))));
    }
  }

  /** `run`, recorded in the job's history, once the gate lets the job run in this term; undefined when it does not. */
  private async whenNotPaused(runtime: ElectionRuntime, tickJob: TickJob, run: () => unknown) {
    const job = runtime.jobs.get(tickJob.job);
    if (!job || !runtime.jobs.store || !runtime.isLeader()) return run;
    // Not through the gate's wait: a scheduled call may be waiting for the same read already.
    await runtime.jobs.ready();
    if (!runtime.isLeader()) return undefined;
    const gate = runtime.jobs.gate(job);
    if (gate !== true) {
      // A promise: a new term began meanwhile, and its election event starts its own catch-up.
      this.logger.log(messages.jobs.catchUpSkipped(tickJob.job, gate === 'paused' ? 'paused' : 'unread'));
      return undefined;
    }
    return () => runtime.jobs.runs.track(job, { trigger: 'schedule' }, run);
  }
}
