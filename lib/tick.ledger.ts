import { createHash } from 'node:crypto';
import { type CronMetadata, CronSchedule } from './cron-schedule.js';
import { messages } from './leader-election.messages.js';
import type { LeaderStateEntry } from './stores/lease-store.js';

/**
 * How far back a new leader looks for a missed tick (`missed: 'catch-up'`): the most recent fire
 * time, if due at most this long ago. A day covers a daily job whose leader died at its hour; a
 * longer outage (the whole app down for days) is not a failover, and replaying it is the app's call.
 */
export const CATCH_UP_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The leader state the ledger records runs in (the service's readState/writeState). */
export interface LeaderStateAccess {
  readState<T = unknown>(key?: string): Promise<LeaderStateEntry<T> | undefined>;
  writeState<T = unknown>(value: T, key?: string): Promise<void>;
}

export interface TickLedgerLogger {
  log(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

/** One once-per-tick job: its key in the ledger and its schedule. */
export interface TickJob {
  /** The @Cron `name` option, else `Class.method`. */
  job: string;
  /** `Class.method`, for messages. */
  label: string;
  cron: CronMetadata;
}

/**
 * Once-per-tick runs of `@LeaderOnly({ once: 'per-tick' })` cron jobs. Each job's last run fire
 * time (epoch ms) lives in leader state under `tick:<job>`, written with the leader's lease BEFORE
 * the work starts: a tick recorded by any leader is skipped by every other, and a stale leader's
 * record is refused by the store (then it skips too). At most once per tick, not exactly once: a
 * crash after the record drops that tick's work.
 */
export class TickLedger {
  private readonly schedules = new Map<string, Promise<CronSchedule>>();
  /** Per job, the claim in progress: one read-compare-write at a time within this process. */
  private readonly claims = new Map<string, Promise<unknown>>();

  constructor(
    private readonly state: LeaderStateAccess,
    private readonly logger: TickLedgerLogger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs `call` for the tick the current time belongs to, unless that tick was recorded already. */
  async runTick(job: TickJob, call: () => unknown): Promise<unknown> {
    const schedule = await this.schedule(job);
    const fireTime = schedule.fireTimeOf(this.now());
    if (!(await this.claim(job, fireTime, false))) return undefined;
    return call();
  }

  /**
   * On election: runs the most recent tick no leader ran, once, if due within CATCH_UP_WINDOW_MS.
   * A job never recorded is left alone (a first deployment has missed nothing). Older missed
   * ticks stay skipped. Resolves after the run (false: nothing to catch up).
   */
  async catchUp(job: TickJob, call: () => unknown): Promise<boolean> {
    const schedule = await this.schedule(job);
    const now = this.now();
    const fireTime = schedule.latestAtOrBefore(now);
    if (now - fireTime > CATCH_UP_WINDOW_MS) return false;
    if (!(await this.claim(job, fireTime, true))) return false;
    this.logger.log(messages.tickCatchUp(job.job, new Date(fireTime).toISOString()));
    await call();
    return true;
  }

  private schedule(job: TickJob): Promise<CronSchedule> {
    let schedule = this.schedules.get(job.job);
    if (!schedule) {
      schedule = CronSchedule.load(job.label, job.cron);
      // A failed load (no `cron` package) is retried at the next tick, not cached.
      schedule.catch(() => this.schedules.delete(job.job));
      this.schedules.set(job.job, schedule);
    }
    return schedule;
  }

  /** Records `fireTime` as run unless it (or a later tick) already is; true when this call recorded it. */
  private claim(job: TickJob, fireTime: number, onlyIfRecordedBefore: boolean): Promise<boolean> {
    const previous = this.claims.get(job.job) ?? Promise.resolve();
    const claim = previous.then(async () => {
      const key = tickKey(job.job);
      const fireIso = new Date(fireTime).toISOString();
      try {
        const recorded = (await this.state.readState<number>(key))?.value;
        if (onlyIfRecordedBefore && typeof recorded !== 'number') return false;
        if (typeof recorded === 'number' && recorded >= fireTime) {
          this.logger.debug(messages.tickSkippedRecorded(job.job, fireIso));
          return false;
        }
        // Fenced by the store: refused once our lease is not the current one.
        await this.state.writeState(fireTime, key);
        return true;
      } catch (error) {
        this.logger.warn(messages.tickRecordFailed(job.job, fireIso, (error as Error)?.message ?? String(error)));
        return false;
      }
    });
    const settled = claim.finally(() => {
      if (this.claims.get(job.job) === settled) this.claims.delete(job.job);
    });
    this.claims.set(job.job, settled);
    return claim;
  }
}

/**
 * `tick:<job>` within the state keys' alphabet [A-Za-z0-9._:-] and 200 characters: other characters
 * escaped as `_xx`; a name too long is cut and suffixed with a hash of the whole, so it stays unique.
 */
export function tickKey(job: string): string {
  const escaped = job.replace(/[^A-Za-z0-9.:-]/g, (c) =>
    [...Buffer.from(c, 'utf8')].map((byte) => `_${byte.toString(16).padStart(2, '0')}`).join(''),
  );
  const key = `tick:${escaped}`;
  if (key.length <= 200) return key;
  return `${key.slice(0, 183)}-${createHash('sha256').update(job).digest('hex').slice(0, 16)}`;
}

/** The job name of a once-per-tick method: the @Cron `name` option, else `Class.method`. */
export function tickJobName(cron: CronMetadata, label: string): string {
  return typeof cron.name === 'string' && cron.name !== '' ? cron.name : label;
}
