import type { JobCatalogueEntry } from '../../election/job-history.js';
import { type CronMetadata, CronSchedule, SCHEDULE_CRON_OPTIONS } from '../cron-schedule.js';

// @nestjs/schedule's metadata keys (plain strings, so reading them needs no import of the package).
const SCHEDULE_INTERVAL_OPTIONS = 'SCHEDULE_INTERVAL_OPTIONS';
const SCHEDULE_TIMEOUT_OPTIONS = 'SCHEDULE_TIMEOUT_OPTIONS';
const SCHEDULER_NAME = 'SCHEDULER_NAME';

/** When a job's schedule fires: a cron expression (or a one-off date), an interval, or one timeout after startup. */
export type JobSchedule =
  | { kind: 'cron'; cron: CronMetadata }
  | { kind: 'interval'; ms: number }
  | { kind: 'timeout'; ms: number };

/**
 * One job of an election: a scheduled `@LeaderOnly` method, as the explorer found it. Found again by
 * its undecorated method (`method`), never by label: two classes of one name are two methods.
 */
export interface JobDefinition {
  /** The schedule's name (`@Cron(expr, { name })`, `@Interval(name, ms)`), else `Class.method`. */
  readonly name: string;
  /** `Class.method`: its handler label in metrics, stuck-work reports and the drain. */
  readonly label: string;
  readonly schedule: JobSchedule;
  /** `@LeaderOnly({ once: 'per-tick' })`. */
  readonly onceTick: boolean;
  /** The undecorated method: what identifies the job in a call. */
  readonly method: (...args: unknown[]) => unknown;
  /** Calls `method` on the instance the explorer found first (run now). */
  readonly invoke: () => unknown;
  /** The provider that declared it, for the clash message. */
  readonly owner: string;
}

/**
 * The schedule `fn` (a method as its class carries it, with every decorator applied) runs on, and
 * its job name; undefined for a method @nestjs/schedule does not schedule (a route, a queue handler).
 */
export function scheduledJobOf(fn: object, label: string): { name: string; schedule: JobSchedule } | undefined {
  const name = (scheduleName: unknown) =>
    typeof scheduleName === 'string' && scheduleName !== '' ? scheduleName : label;
  const cron: CronMetadata | undefined = Reflect.getMetadata(SCHEDULE_CRON_OPTIONS, fn);
  if (cron) return { name: name(cron.name), schedule: { kind: 'cron', cron } };
  const interval: { timeout?: unknown } | undefined = Reflect.getMetadata(SCHEDULE_INTERVAL_OPTIONS, fn);
  const timeout: { timeout?: unknown } | undefined = Reflect.getMetadata(SCHEDULE_TIMEOUT_OPTIONS, fn);
  const options = interval ?? timeout;
  if (!options) return undefined;
  const kind = interval ? 'interval' : 'timeout';
  return { name: name(Reflect.getMetadata(SCHEDULER_NAME, fn)), schedule: { kind, ms: Number(options.timeout) } };
}

/** For people and the CLI: `cron 0 * * * * *`, `cron 0 3 * * * (Europe/Paris)`, `interval 5000 ms`, `timeout 1000 ms`. */
export function describeSchedule(schedule: JobSchedule): string {
  if (schedule.kind !== 'cron') return `${schedule.kind} ${schedule.ms} ms`;
  const { cronTime, timeZone, utcOffset } = schedule.cron;
  const time = cronTime instanceof Date ? `at ${cronTime.toISOString()}` : String(cronTime);
  const zone = timeZone ?? (utcOffset === undefined || utcOffset === null ? undefined : `UTC offset ${utcOffset}`);
  return `cron ${time}${zone === undefined ? '' : ` (${zone})`}`;
}

/** The catalogue entry the leader publishes for `job`. */
export function catalogueEntry(job: JobDefinition): JobCatalogueEntry {
  return { name: job.name, schedule: describeSchedule(job.schedule), ...(job.onceTick ? { onceTick: true } : {}) };
}

/** Fire times of cron jobs, loaded once per job (`cron` is imported lazily); a failed load is retried. */
const cronSchedules = new WeakMap<JobDefinition, Promise<CronSchedule>>();

/**
 * When `job`'s schedule next fires after `now` (epoch ms), computed here: a cron job's next fire
 * time; an interval job's last scheduled start plus its interval (the leader's timer, as far as its
 * history tells); undefined for a timeout (it fires once, at startup) or when unknown.
 */
export async function nextRunAt(
  job: JobDefinition,
  now: number,
  lastScheduledStart: number | undefined,
): Promise<number | undefined> {
  const { schedule } = job;
  if (schedule.kind === 'interval') {
    const next = lastScheduledStart === undefined ? undefined : lastScheduledStart + schedule.ms;
    return next !== undefined && next >= now ? next : undefined;
  }
  if (schedule.kind === 'timeout') return undefined;
  const { cronTime } = schedule.cron;
  if (cronTime instanceof Date) return cronTime.getTime() > now ? cronTime.getTime() : undefined;
  if (typeof cronTime !== 'string') return undefined;
  let loaded = cronSchedules.get(job);
  if (!loaded) {
    loaded = CronSchedule.load(job.label, schedule.cron);
    loaded.catch(() => cronSchedules.delete(job));
    cronSchedules.set(job, loaded);
  }
  try {
    return (await loaded).next(now);
  } catch {
    // An expression `cron` cannot read fails @nestjs/schedule at startup already; nothing to add here.
    return undefined;
  }
}
