import type { CronSchedule } from './cron-schedule.js';
import { leadershipMessages as messages } from './leadership.messages.js';
import type { TickJob } from './tick.job.js';

/**
 * Ticks that ran on no replica are reported at warn level at most this often per job (a failover
 * of a per-second job loses a dozen at once, an overloaded process one a minute); the ones in
 * between are counted and named in the next warning.
 */
export const TICKS_LOST_WARN_INTERVAL_MS = 60_000;
/** Lost ticks are counted one by one up to this many (a per-second job down for a day lost 86,400). */
const LOST_COUNT_CAP = 1_000;

/** What the ledger tells an observer (metrics); optional, so the ledger runs without one. */
export interface TickLedgerEvents {
  /** `count` ticks of `job` ran on no replica: found when the next run is recorded. */
  ticksLost(job: TickJob, count: number): void;
}

/** The once-per-tick ledger's report of ticks no replica ran: counted for metrics, warned of sparingly. */
export class LostTicksReport {
  /** Per job, the last warning of lost ticks (ledger clock) and the losses not yet warned of. */
  private readonly losses = new Map<string, { warnedAt: number; unreported: number }>();

  constructor(
    private readonly logger: { warn(message: string): void; debug(message: string): void },
    private readonly now: () => number,
    private readonly events?: TickLedgerEvents,
  ) {}

  /**
   * Ticks strictly between the previous record and the one just written ran on no replica: counted
   * (events), and warned of at most once per TICKS_LOST_WARN_INTERVAL_MS per job.
   */
  note(job: TickJob, schedule: CronSchedule, previous: number, recorded: number): void {
    const first = schedule.next(previous);
    if (first >= recorded) return;
    let count = 1;
    let last = first;
    for (let t = schedule.next(first); t < recorded && count < LOST_COUNT_CAP; t = schedule.next(t)) {
      count += 1;
      last = t;
    }
    this.events?.ticksLost(job, count);
    const now = this.now();
    const loss = this.losses.get(job.job);
    if (loss && Math.abs(now - loss.warnedAt) < TICKS_LOST_WARN_INTERVAL_MS) {
      loss.unreported += count;
      this.logger.debug(messages.ticksLost(job.job, count, iso(first), iso(last), 0));
      return;
    }
    this.losses.set(job.job, { warnedAt: now, unreported: 0 });
    this.logger.warn(messages.ticksLost(job.job, count, iso(first), iso(last), loss?.unreported ?? 0));
  }
}

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
