import { pauseUnlessAborted } from '../shared/abort.js';
import type { LeaderStateEntry } from '../stores/lease-store.js';
import { CronSchedule, EARLY_TOLERANCE_MS } from './cron-schedule.js';
import { leadershipMessages as messages } from './leadership.messages.js';
import { LostTicksReport, type TickLedgerEvents } from './lost-ticks.report.js';
import { type TickJob, tickKey } from './tick.job.js';
import { TickRecordMemo } from './tick-record.memo.js';
import {
  PLAIN_TIMERS,
  RETRY_PAUSE_MS,
  type RetryTimers,
  retryable,
  TICK_RECORD_RETRY_MS,
} from './tick-record.retry.js';

export { type RetryTimers, TICK_RECORD_RETRY_MS } from './tick-record.retry.js';

/**
 * How far back a new leader looks for a missed tick (`missed: 'catch-up'`) unless the job sets
 * `catchUpWindowMs`: the most recent fire time, if due at most this long ago. A day covers a daily
 * job whose leader died at its hour; a longer outage (the whole app down for days) is not a
 * failover, and replaying it is the app's call.
 */
export const CATCH_UP_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Fire times are whole seconds: a shorter window is a unit mistake, not a policy. */
export const MIN_CATCH_UP_WINDOW_MS = 1_000;
/** 366 days: enough to catch up a yearly cron's tick, whose ticks are up to a leap year apart. */
export const MAX_CATCH_UP_WINDOW_MS = 366 * 24 * 60 * 60 * 1000;

/** A valid `catchUpWindowMs`: whole ms within [MIN_CATCH_UP_WINDOW_MS, MAX_CATCH_UP_WINDOW_MS]. */
export function isCatchUpWindowMs(value: unknown): value is number {
  return (
    Number.isSafeInteger(value) &&
    (value as number) >= MIN_CATCH_UP_WINDOW_MS &&
    (value as number) <= MAX_CATCH_UP_WINDOW_MS
  );
}

/**
 * A recorded fire time this far ahead of our clock was written by a leader whose clock runs ahead
 * (an on-time leader records at most EARLY_TOLERANCE_MS ahead): worth a warning, since every tick
 * is skipped here until our clock passes it.
 */
export const TICK_AHEAD_WARN_MS = 2 * EARLY_TOLERANCE_MS;

/** The election the ledger records runs in: an election handle (leader state, the current term). */
export interface LeaderStateAccess {
  readState<T = unknown>(key?: string): Promise<LeaderStateEntry<T> | undefined>;
  /**
   * The ledger's own write path: `tick:` keys are refused by the public writeState, so the ledger,
   * which keeps what it wrote in a term, is their only writer.
   */
  writeTickRecord(value: number, key: string): Promise<void>;
  /** The term we lead, else undefined. */
  readonly term: number | undefined;
  /** Aborted when the term ends (the bound of a retry). */
  readonly signal: AbortSignal;
  /** The election's name, for messages. */
  readonly election?: string;
}

export interface TickLedgerLogger {
  log(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

/**
 * Once-per-tick runs of `@LeaderOnly({ once: 'per-tick' })` cron jobs. Each job's last run fire
 * time (epoch ms) lives in leader state under `tick:<job>`, written with the leader's lease BEFORE
 * the work starts: a tick recorded by any leader is skipped by every other, and a stale leader's
 * record is refused by the store (then it skips too). At most once per tick, not exactly once: a
 * crash after the record drops that tick's work. A tick costs one store write: the record is read
 * once per term and kept ({@link TickRecordMemo}), again only after a write that failed.
 *
 * A job's record is found by its key alone (`tick:` + the @Cron name, else `Class.method`), so two
 * jobs of one election must not share a key: {@link register} refuses the second. Schedules are
 * cached per job object, never by name.
 */
export class TickLedger {
  private readonly schedules = new WeakMap<TickJob, Promise<CronSchedule>>();
  private readonly lost: LostTicksReport;
  /** Per key, the job registered under it and who declared it (for the clash message). */
  private readonly registered = new Map<string, { job: TickJob; owner: string }>();
  /** Per job, the claim in progress: one read-compare-write at a time within this process. */
  private readonly claims = new Map<string, Promise<unknown>>();
  /** What each record holds in the current term: read once, then kept (a tick writes, never reads). */
  private readonly memo = new TickRecordMemo();
  /** Per job, the term in which we last warned of a record ahead of our clock (once per term). */
  private readonly warnedAhead = new Map<string, number | undefined>();

  constructor(
    private readonly state: LeaderStateAccess,
    private readonly logger: TickLedgerLogger,
    private readonly now: () => number = Date.now,
    events?: TickLedgerEvents,
    /** Times the retries of a record (the module's clock, a test's `FakeClock`). */
    private readonly timers: RetryTimers = PLAIN_TIMERS,
  ) {
    this.lost = new LostTicksReport(logger, now, events);
  }

  /**
   * Declares `job`, run by `owner` (named in messages), before its first tick. Throws when another
   * job of this ledger (this election) has the same key: both would read and write one record and
   * take each other's ticks. The same job object again is fine (one method, several instances).
   */
  register(job: TickJob, owner: string): void {
    const key = tickKey(job.job);
    const known = this.registered.get(key);
    if (known && known.job !== job) {
      throw new Error(messages.tickJobKeyClash(key, this.state.election ?? '', known.owner, owner));
    }
    this.registered.set(key, { job, owner });
  }

  /** Runs `call` for the tick the current time belongs to, unless that tick was recorded already. */
  async runTick(job: TickJob, call: (fireTime: number) => unknown): Promise<unknown> {
    const schedule = await this.schedule(job);
    const fireTime = schedule.fireTimeOf(this.now());
    if (!(await this.claim(job, schedule, fireTime, false))) return undefined;
    return call(fireTime);
  }

  /**
   * On election: runs the most recent tick no leader ran, once, if due within the job's
   * `catchUpWindowMs` (default CATCH_UP_WINDOW_MS). A job never recorded is left alone (a first
   * deployment has missed nothing). Older missed ticks stay skipped, and so does the most recent
   * one when it is older than the window. Resolves after the run (false: nothing to catch up).
   */
  async catchUp(job: TickJob, call: () => unknown): Promise<boolean> {
    const schedule = await this.schedule(job);
    const now = this.now();
    const fireTime = schedule.latestAtOrBefore(now);
    if (now - fireTime > (job.catchUpWindowMs ?? CATCH_UP_WINDOW_MS)) return false;
    if (!(await this.claim(job, schedule, fireTime, true))) return false;
    this.logger.log(messages.tickCatchUp(job.job, new Date(fireTime).toISOString()));
    await call();
    return true;
  }

  private schedule(job: TickJob): Promise<CronSchedule> {
    let schedule = this.schedules.get(job);
    if (!schedule) {
      schedule = CronSchedule.load(job.label, job.cron);
      // A failed load (no `cron` package) is retried at the next tick, not cached.
      schedule.catch(() => this.schedules.delete(job));
      this.schedules.set(job, schedule);
    }
    return schedule;
  }

  /** Records `fireTime` as run unless it (or a later tick) already is; true when this call recorded it. */
  private claim(
    job: TickJob,
    schedule: CronSchedule,
    fireTime: number,
    onlyIfRecordedBefore: boolean,
  ): Promise<boolean> {
    const previous = this.claims.get(job.job) ?? Promise.resolve();
    // The term the tick's call came in, and when: a claim queued behind a slow one (a hanging store)
    // must not run in a later term, nor long after — else the queue bursts out when the store answers.
    const queued = { term: this.state.term, at: this.timers.now() };
    const claim = previous.then(() => this.record(job, schedule, fireTime, onlyIfRecordedBefore, queued));
    const settled = claim.finally(() => {
      if (this.claims.get(job.job) === settled) this.claims.delete(job.job);
    });
    this.claims.set(job.job, settled);
    return claim;
  }

  /**
   * One compare-and-write, retried on a transient error within TICK_RECORD_RETRY_MS (at most half
   * the period) while the term lasts. A lost lease, a fatal error or a bad value is not retried.
   * The compare reads the record only at the job's first claim in a term and after a failed write.
   */
  private async record(
    job: TickJob,
    schedule: CronSchedule,
    fireTime: number,
    onlyIfRecordedBefore: boolean,
    queued: { term: number | undefined; at: number },
  ): Promise<boolean> {
    const key = tickKey(job.job);
    const fireIso = new Date(fireTime).toISOString();
    const { term, signal } = this.state;
    const budget = Math.min(TICK_RECORD_RETRY_MS, (schedule.next(fireTime) - fireTime) / 2);
    // Stale by the time its turn came: its term ended, or it queued longer than its retry budget.
    // Not run; the next recorded tick counts it as lost.
    if (term !== queued.term || this.timers.now() - queued.at > budget || signal.aborted) {
      return this.skipStale(job, fireIso);
    }
    const giveUpAt = this.timers.now() + budget;
    let pause = RETRY_PAUSE_MS;
    // Set once a write of ours failed: it may have landed all the same.
    let outcomeUnknown = false;
    for (;;) {
      let writing = false;
      try {
        // Known in this term (read once, then what we wrote): a tick costs no read.
        const known = this.memo.get(key, signal);
        let recorded = known.found ? known.value : undefined;
        if (!known.found) {
          const entry = await this.state.readState<number>(key);
          // The read may have hung past the term (the same replica may lead again by now): not ours to run.
          if (this.state.term !== term || signal.aborted) return this.skipStale(job, fireIso);
          recorded = entry?.value;
          this.memo.set(key, signal, recorded);
          // A write of ours whose reply was lost (the attempt before failed): the record is ours.
          if (outcomeUnknown && recorded === fireTime && entry?.term === term && term !== undefined) return true;
        }
        if (onlyIfRecordedBefore && typeof recorded !== 'number') return false;
        if (typeof recorded === 'number' && recorded >= fireTime) {
          this.warnIfAhead(job, recorded, term);
          this.logger.debug(messages.tickSkippedRecorded(job.job, fireIso));
          return false;
        }
        // Fenced by the store: refused once our lease is not the current one. Until it answers, the
        // record is unknown: a write that fails may have landed all the same.
        writing = true;
        this.memo.forget(key);
        await this.state.writeTickRecord(fireTime, key);
        this.memo.set(key, signal, fireTime);
        if (typeof recorded === 'number') this.lost.note(job, schedule, recorded, fireTime);
        // Its answer came after the term ended: recorded, but no longer ours to run (a dropped tick).
        if (this.state.term !== term || signal.aborted) return this.skipStale(job, fireIso);
        return true;
      } catch (error) {
        const reason = (error as Error)?.message ?? String(error);
        const wait = Math.min(pause, giveUpAt - this.timers.now());
        if (!retryable(error) || signal.aborted || this.state.term !== term || wait <= 0) {
          this.logger.warn(messages.tickRecordFailed(job.job, fireIso, reason));
          return false;
        }
        this.logger.debug(messages.tickRecordRetry(job.job, fireIso, reason));
        outcomeUnknown ||= writing;
        pause *= 2;
        if (!(await pauseUnlessAborted(this.timers, wait, signal))) {
          this.logger.warn(messages.tickRecordFailed(job.job, fireIso, reason));
          return false;
        }
      }
    }
  }

  private skipStale(job: TickJob, fireIso: string): false {
    this.logger.debug(messages.tickSkippedStale(job.job, fireIso));
    return false;
  }

  /** A record from a clock ahead of ours: every tick is skipped until our clock passes it. Once per term. */
  private warnIfAhead(job: TickJob, recorded: number, term: number | undefined): void {
    const now = this.now();
    if (recorded - now <= TICK_AHEAD_WARN_MS) return;
    if (this.warnedAhead.has(job.job) && this.warnedAhead.get(job.job) === term) return;
    this.warnedAhead.set(job.job, term);
    this.logger.warn(
      messages.tickRecordedAhead(
        job.job,
        new Date(recorded).toISOString(),
        new Date(now).toISOString(),
        recorded - now,
      ),
    );
  }
}
