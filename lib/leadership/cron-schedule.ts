import { leadershipMessages as messages } from './leadership.messages.js';

/** What `@Cron(cronTime, options)` of @nestjs/schedule stores under `SCHEDULE_CRON_OPTIONS`. */
export interface CronMetadata {
  cronTime: unknown;
  name?: string;
  timeZone?: string;
  utcOffset?: string | number;
}

/** @nestjs/schedule's metadata key (a plain string, so reading it needs no import of the package). */
export const SCHEDULE_CRON_OPTIONS = 'SCHEDULE_CRON_OPTIONS';

/**
 * A tick may run this much before its fire time and still count as that tick (timers fire a little
 * early); at most a quarter of the cron period, so a run that is merely late (an event-loop stall)
 * is not taken for the next tick. A late run needs no tolerance of its own: it belongs to the latest
 * fire time before it, however late.
 */
export const EARLY_TOLERANCE_MS = 500;

interface CronTimeLike {
  getNextDateFrom(start: Date, timeZone?: string): { toMillis(): number };
}

type CronTimeConstructor = new (
  source: string,
  timeZone?: string | null,
  utcOffset?: string | number | null,
) => CronTimeLike;

/**
 * `cron`'s CronTime, imported once. Each `import()` goes through the module loader again, even for
 * a module loaded long ago (off-thread with loader hooks, Jest's linker): it settles after an
 * unknown number of event-loop turns, so a job's first tick in a term started at a moment the
 * machine chose, which made the simulation irreproducible. A settled import settles in microtasks.
 * A failed one is not kept: the next load tries again.
 */
let cronTime: Promise<CronTimeConstructor> | undefined;
function importCronTime(): Promise<CronTimeConstructor> {
  cronTime ??= import('cron').then(
    (module) => (module as unknown as { CronTime: CronTimeConstructor }).CronTime,
    (error: unknown) => {
      cronTime = undefined;
      throw error;
    },
  );
  return cronTime;
}

/**
 * Fire times of one cron expression, by the `cron` package that @nestjs/schedule schedules with
 * (so both agree on every edge: time zones, DST, day-of-week rules). Wall-clock epoch ms.
 */
export class CronSchedule {
  private constructor(
    private readonly time: CronTimeLike,
    private readonly zone: string | undefined,
  ) {}

  /** Loads `cron` lazily: apps without once-per-tick jobs never import it. */
  static async load(target: string, metadata: CronMetadata): Promise<CronSchedule> {
    if (typeof metadata.cronTime !== 'string') throw new Error(messages.perTickNeedsExpression(target));
    let CronTime: CronTimeConstructor;
    try {
      CronTime = await importCronTime();
    } catch (error) {
      throw new Error(messages.perTickNoCronPackage(target, (error as Error).message));
    }
    const { timeZone, utcOffset } = metadata;
    const time = timeZone
      ? new CronTime(metadata.cronTime, timeZone)
      : new CronTime(metadata.cronTime, null, utcOffset);
    return new CronSchedule(time, timeZone ?? offsetZone(utcOffset));
  }

  /** The first fire time strictly after `at`. */
  next(at: number): number {
    return this.time.getNextDateFrom(new Date(at), this.zone).toMillis();
  }

  /** The latest fire time at or before `at`. */
  latestAtOrBefore(at: number): number {
    // No "previous" in `cron`: step back until a fire time falls at or before `at`, then walk forward.
    let back = 1_000;
    let candidate = this.next(at - back);
    while (candidate > at) {
      back *= 2;
      candidate = this.next(at - back);
    }
    for (let following = this.next(candidate); following <= at; following = this.next(candidate)) {
      candidate = following;
    }
    return candidate;
  }

  /**
   * The fire time a run starting at `at` belongs to: the next one if it is due within the early
   * tolerance (a timer fired early), else the latest one before `at` (on time or late).
   */
  fireTimeOf(at: number): number {
    const latest = this.latestAtOrBefore(at);
    const next = this.next(at);
    const tolerance = Math.min(EARLY_TOLERANCE_MS, (next - latest) / 4);
    return next - at <= tolerance ? next : latest;
  }
}

/** `utcOffset` as a luxon zone name, as `cron` builds it (minutes, or a string it parses). */
function offsetZone(utcOffset: string | number | undefined): string | undefined {
  if (utcOffset === undefined || utcOffset === null) return undefined;
  const minutes = typeof utcOffset === 'number' ? utcOffset : Number.parseInt(utcOffset, 10);
  if (!Number.isFinite(minutes)) return undefined;
  const sign = minutes < 0 ? '-' : '+';
  const hours = String(Math.trunc(Math.abs(minutes) / 60)).padStart(2, '0');
  const rest = String(Math.abs(minutes) % 60).padStart(2, '0');
  return `UTC${sign}${hours}:${rest}`;
}
